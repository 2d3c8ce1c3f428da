"""``headspace hooks install|uninstall|status --host NAME``: headspace's hooks in a remote host's Claude settings.

Done over the host's own connection (the ssh master and the probe, as the
TUI reaches it), by the probe: ``remote/probe_hooks.py`` runs
``hooks/settings.py`` there, so the lock, the backup and the byte-for-byte
restore are the ones used on this machine.  Install also puts the hook
program there (its source goes with the request), since headspace itself is
not installed on that host; uninstall takes it away again.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from ..hooks.settings import ANSWER_WAIT, PROGRAM
from ..shared.safe_text import clean
from .hooks_text import said


class RemoteHooksError(Exception):
    """One line for the user: the host cannot be reached, or the action was refused there."""


def run(args: argparse.Namespace, config: Any) -> str:
    """Carry out ``args.hooks_action`` on ``args.host``; what was done, in one line."""
    from ..remote.host import ProbeError, RemoteHost
    from ..shared.config import host_from_destination
    from ..tmux.server import TmuxUnavailable

    if args.project is not None:
        raise RemoteHooksError("--project is not supported with --host (the user settings there are used)")
    spec = next((h for h in config.hosts if h.name == args.host), None) or host_from_destination(args.host)
    if spec.destination.startswith("-"):
        raise RemoteHooksError(f"host {spec.destination!r}: a destination must not start with '-'")
    request: dict[str, Any] = {"program": PROGRAM.read_text(encoding="utf-8")}
    wait = None
    if args.hooks_action == "install":
        if args.wait is not None and not args.answer:
            raise RemoteHooksError("--wait goes with --answer")
        wait = (args.wait if args.wait is not None else ANSWER_WAIT) if args.answer else None
        request["answer_wait"] = wait
    host = RemoteHost(spec)

    async def over_the_link() -> dict[str, Any]:
        try:
            probe = await host.connect()
            answer = await probe.call(f"hooks_{args.hooks_action}", **request)
        except (TmuxUnavailable, ProbeError) as exc:
            raise RemoteHooksError(f"{spec.name}: {exc}" if not str(exc).startswith(f"{spec.name}:") else str(exc)) from None
        finally:
            await host.close()
        if not isinstance(answer, dict):
            raise RemoteHooksError(f"{spec.name}: the remote reader gave no answer")
        if answer.get("problem"):
            raise RemoteHooksError(f"{spec.name}: {answer['problem']}")
        return answer

    answer = asyncio.run(over_the_link())
    return clean(f"{spec.name}: {said(args.hooks_action, answer, wait, again=f'headspace hooks install --host {spec.name}')}")
