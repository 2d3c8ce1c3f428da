"""Helpers every command shares: exit codes, one-line errors, safe output, the tmux server and the config a command names."""

from __future__ import annotations

import argparse
import json
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the annotation only: a command's start loads no more than it needs
    from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def json_line(value: object) -> str:
    """One JSON line for a terminal or a pipe: non-ASCII text kept readable, but
    C1 controls and bidi overrides escaped (JSON itself escapes only C0)."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def clean(value: object, limit: int | None = None) -> str:
    """``shared.safe_text.clean``, imported when first needed."""
    from ..shared import safe_text

    return safe_text.clean(value) if limit is None else safe_text.clean(value, limit)


class UserError(Exception):
    """A problem to report in one line, with a non-zero exit."""


def plugin_problems() -> list[str]:
    """Load the agent families installed as plug-ins (once); one line for each that could not be, for the user to see."""
    from ..detect.families import load_plugins

    return [f"agent family plug-in {load.said()}" for load in load_plugins() if load.problem]


def load_plugins_here() -> None:
    """For a command that reads the families in this process (not through the service, which loads them itself): load them, each failure one line on stderr."""
    import sys

    for problem in plugin_problems():
        print(f"headspace: {clean(problem)}", file=sys.stderr)


def server_of(args: argparse.Namespace):
    from ..tmux.server import TmuxServer

    return TmuxServer(socket_name=args.socket_name, socket_path=args.socket_path)


def identity_of(args: argparse.Namespace) -> str:
    """The tmux server of ``-L``/``-S`` (or $TMUX) for good: ``server_of(args).identity`` without loading the tmux client."""
    import os

    from ..tmux.identify import selecting_args, server_identity

    return server_identity(selecting_args(args.socket_name, args.socket_path), os.environ, os.getuid())


def config_of(args: argparse.Namespace):
    from ..shared.config import ConfigError, load_config

    try:
        return load_config(getattr(args, "config", None))
    except ConfigError as exc:
        raise UserError(str(exc)) from None


def host_specs(args: argparse.Namespace, config) -> tuple[bool, list]:
    """Whether to read this machine, and which remote hosts: those named by ``--host``, else every configured one."""
    from ..shared.config import host_from_destination

    configured = {h.name: h for h in config.hosts}
    wanted = getattr(args, "host", None) or []
    specs = [configured.get(w) or host_from_destination(w) for w in wanted] if wanted else list(config.hosts)
    for spec in specs:
        if spec.destination.startswith("-"):
            raise UserError(f"host {spec.destination!r}: a destination must not start with '-'")
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise UserError(f"host {sorted(n for n in names if names.count(n) > 1)[0]!r} is named twice")
    local = not getattr(args, "no_local", False)
    if not local and not specs:
        raise UserError("--no-local leaves no host to read: add --host DEST, or [hosts.NAME] to the config")
    return local, specs


def resolve_target(server, target: str):
    """The pane record a user's target names: %N, session:window.pane, session:window or session."""
    from ..tmux.server import TmuxUnavailable

    try:
        records = server.list_panes()
    except TmuxUnavailable as exc:
        raise UserError(str(exc)) from None
    for matches in (
        [r for r in records if r.pane_id == target],
        [r for r in records if r.target == target],
        [r for r in records if f"{r.session_name}:{r.window_index}" == target],
        [r for r in records if r.session_name == target],
    ):
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise UserError(f"target {target!r} names {len(matches)} panes; use session:window.pane or %N")
    raise UserError(f"no pane {target!r} on {server.where()}")


def service_watching(server, config: Path | None, host_name: str, *, nothing: str) -> str | None:
    """The config (resolved; "": the default) of the running service of ``server`` that watches ``host_name``; None when none does.

    A service that watches it but may not be asked (another version, or
    another config than ``config``) is an error: its answerer owns that
    host's panes, and a second one over a link of this command's own could
    race it.  ``nothing``: what the error says was not done ("nothing sent").
    """
    from ..api.errors import ServiceError
    from ..resident.client import asked_place
    from ..shared.resident_place import PlaceError, is_held, place_of, read_card

    place = place_of(server.identity)
    hosts = (read_card(place) or {}).get("hosts")
    if not (isinstance(hosts, list) and host_name in hosts and is_held(place)):
        return None
    wanted = str(config.resolve()) if config is not None else None
    try:
        asked_place(server.identity, wanted)
    except (ServiceError, PlaceError, OSError) as exc:
        raise UserError(f"{host_name}: the headspace service of this tmux server watches it, and cannot be asked ({exc}); {nothing}") from None
    return wanted or ""
