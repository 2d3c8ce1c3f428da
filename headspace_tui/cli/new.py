"""``headspace new``: an agent started in a new tmux window, here or on a host."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK, UserError, clean, config_of, server_of, service_watching


def cmd_new(args: argparse.Namespace) -> int:
    """``headspace new``: one line saying where Claude now runs (its pane id first, for scripts).

    Started by the resident service of this tmux server (started first when
    none runs), by the same path as the table's "New agent": one engine
    starts agents, and it watches the new one from its first moment.
    """
    import os

    from ..api.errors import Lost, ServerGone, ServiceError
    from ..resident.facade_client import ServiceClient
    from ..resident.start import asked_or_started
    from ..shared.resident_place import PlaceError

    server = server_of(args)
    if args.host:
        _check_remote(args)
        watching = service_watching(server, args.config, args.host, nothing="nothing started")
        if watching is None:  # no service watches that host: this command's own link (as send --host)
            return _new_remote(args, config_of(args), args.host)
        return _new_by_service(args, server, watching)
    folder = args.dir if args.dir is not None else Path.cwd()
    try:
        place = asked_or_started(server, args.config)
        client = ServiceClient(place, config=config_of(args), here=os.environ)
        started = client.start(str(folder), args.worktree or "", None, args=args.claude_args, session=args.session or "")
    except ServerGone:
        raise UserError(f"no tmux server runs ({server.where()}): start tmux first, or name one with -L/-S") from None
    except Lost as exc:
        raise UserError(f"the headspace service did not answer ({exc}); an agent may have started: see 'headspace status'") from None
    except (ServiceError, PlaceError) as exc:
        raise UserError(str(exc).removeprefix("the headspace service: ")) from None
    tree = " (new worktree)" if started["worktree"] else ""
    print(clean(f"{started['pane']} {started['target']}: claude in {started['cwd']}{tree}"))
    return EXIT_OK


def _check_remote(args: argparse.Namespace) -> None:
    """What ``new --host`` needs, said before anything is asked of a host or a service."""
    if args.worktree:
        raise UserError("--worktree is not supported with --host: make the worktree there, then start in it")
    if not args.session:
        raise UserError("--host needs --session NAME (there is no current session over there)")
    if args.dir is None or not str(args.dir).startswith("/"):
        raise UserError("--host needs DIR, an absolute path of a folder on that host")


def _new_by_service(args: argparse.Namespace, server, config: str) -> int:
    """``new --host NAME`` where the service of this tmux server watches that host: it starts the agent, through its own link.

    One engine per host: that service watches the host's panes and owns its
    link; a second link of this command's own is not made.
    """
    from ..api.errors import Lost, ServiceError
    from ..resident.client import ask_start_on_host, asked_place
    from ..shared.resident_place import PlaceError

    try:
        place = asked_place(server.identity, config or None)
        started = ask_start_on_host(place, args.host, str(args.dir), list(args.claude_args), args.session)
    except Lost as exc:
        raise UserError(f"the headspace service did not answer ({exc}); an agent may have started: see 'headspace status'") from None
    except (ServiceError, PlaceError) as exc:
        raise UserError(str(exc).removeprefix("the headspace service: ")) from None
    print(clean(f"{started['pane']} {started['target']}: claude in {started['cwd']}"))
    return EXIT_OK


def _new_remote(args: argparse.Namespace, config, host_name: str) -> int:
    """``new --host NAME``: the same window on that host's tmux, through its ssh link; the folder must exist there."""
    import asyncio

    from ..remote.ssh import SshLink, SshTmuxServer
    from ..service.watching.lifecycle import LifecycleError, agent_argv, start_over_link
    from ..shared.config import host_from_destination
    from ..tmux.server import TmuxUnavailable

    spec = next((h for h in config.hosts if h.name == host_name), None) or host_from_destination(host_name)
    if spec.destination.startswith("-"):
        raise UserError(f"host {spec.destination!r}: a destination must not start with '-'")
    link = SshLink(spec)
    server = SshTmuxServer(link)
    folder = str(args.dir)

    async def over_the_link() -> str:
        try:
            await link.connect()
        except TmuxUnavailable as exc:
            raise UserError(f"{spec.name}: {exc}") from None
        try:
            started = await start_over_link(link, server, spec.name, folder, agent_argv(args.claude_args), args.session)
        except LifecycleError as exc:
            raise UserError(str(exc)) from None
        finally:
            await link.close()
        return f"{started.pane_id} {started.target}: claude in {started.cwd}"

    try:
        print(clean(asyncio.run(over_the_link())))
    finally:
        link.remove_folder()
    return EXIT_OK
