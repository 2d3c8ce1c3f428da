"""``headspace send``: one answer, through the resident service's answerer (started when none runs).

``--host``: through the service when it watches that host (its one
answerer for that pane, never a second one racing it); through a link of
its own only to a host no service watches.
"""

from __future__ import annotations

import argparse
import re

from .common import EXIT_OK, UserError, clean, config_of, resolve_target, server_of, service_watching


def cmd_send(args: argparse.Namespace) -> int:
    config = config_of(args)
    from ..model import PaneAddress

    address = PaneAddress.parse(args.target) if args.target.startswith("%") else None
    host_name = args.host or (address.host if address is not None and address.host != "local" else "")
    server = server_of(args)
    if host_name:
        watching = service_watching(server, args.config, host_name, nothing="nothing sent")
        if watching is None:
            return _send_remote(args, config, host_name)
        return _send_by_service(args, config, server, _remote_pane(server, watching, host_name, args.target))
    # A pane id goes to the service as it is (no tmux asked); a name is resolved to one first.
    record = None if re.fullmatch(r"%\d+", args.target) else resolve_target(server, args.target)
    return _send_by_service(args, config, server, record.pane_id if record is not None else args.target)


def _send_by_service(args: argparse.Namespace, config, server, pane_id: str) -> int:
    """The answer through the service of this tmux server (its one answerer, guard, rules and audit), started first when none runs.

    Never by keys of its own: a service that cannot be asked or started is
    an error, and nothing is sent.  Only a service of this version that
    reads the same config is asked.  Once the request went, nothing more is
    sent: a refusal is the service's to make, and an answer that got no
    reply may have gone.
    """
    from ..api.errors import Lost, Refused, ServerGone, ServiceError
    from ..resident.client import ask_answer
    from ..resident.start import asked_or_started
    from ..shared.resident_place import PlaceError

    intent = _intent_of(args, config)
    try:
        place = asked_or_started(server, args.config)  # none runs: started, as the answer is the service's, as every other answer is
        target, delivered, detail = ask_answer(place, pane_id, intent.kind.value, option=intent.option, text=intent.text, expect=args.expect)
    except ServerGone:
        raise UserError(f"no tmux server runs ({server.where()}): nothing to answer") from None
    except (Refused, Lost) as exc:
        said = str(exc).removeprefix(f"{pane_id}: ")  # the service's refusal may name the pane already
        raise UserError(f"{pane_id}: {said}" + ("; it may have been answered: see 'headspace status'" if isinstance(exc, Lost) else "")) from None
    except (ServiceError, PlaceError) as exc:
        raise UserError(f"{pane_id}: {exc}; nothing sent") from None
    detail = detail.removeprefix(f"{target}: ")  # the report names its target already
    if not delivered:
        raise UserError(f"{target}: {detail}")
    print(clean(f"{target}: {detail}"))
    return EXIT_OK


def _remote_pane(server, config: str, host_name: str, target: str) -> str:
    """``target`` on ``host_name`` as the service addresses it (``%N@host``): a pane id as it is, a name found among the service's rows."""
    from ..api.errors import ServiceError
    from ..model import PaneAddress
    from ..resident.client import ask_rows

    if target.startswith("%"):
        return str(PaneAddress(PaneAddress.parse(target).pane, host_name))
    try:
        rows, _ = ask_rows(server.identity, config or None)
    except ServiceError as exc:
        raise UserError(f"{host_name}:{target}: {exc}; nothing sent") from None
    there = [row for row in rows if row.get("host") == host_name]
    # As a target names a pane here (common.resolve_target): session:window.pane, session:window, or session.
    for found in (
        [row for row in there if row["target"] == target],
        [row for row in there if str(row["target"]).rsplit(".", 1)[0] == target],
        [row for row in there if str(row["target"]).rsplit(":", 1)[0] == target],
    ):
        if len(found) == 1:
            return str(PaneAddress(str(found[0]["pane_id"]), host_name))
        if len(found) > 1:
            raise UserError(f"{host_name}:{target}: names {len(found)} agents; use session:window.pane or %N; nothing sent")
    raise UserError(f"{host_name}:{target}: no agent there in the service's table (see 'headspace status'); nothing sent")


def _intent_of(args: argparse.Namespace, config):
    """What ``send`` was asked to do, as the answering policy says it."""
    from ..answering.policy import Intent, IntentKind

    if args.approve:
        return Intent(IntentKind.APPROVE)
    if args.deny:
        return Intent(IntentKind.DENY)
    if args.option is not None:
        return Intent(IntentKind.OPTION, option=args.option)
    if args.submit:
        return Intent(IntentKind.SUBMIT)
    if args.text is not None:
        return Intent(IntentKind.TEXT, text=args.text)
    if args.nudge:
        return Intent(IntentKind.NUDGE, text=config.nudge_text)
    return Intent(IntentKind.INTERRUPT)


def _send_remote(args: argparse.Namespace, config, host_name: str) -> int:
    """``send --host NAME``: the same guarded send, to that host's pane, through its ssh link."""
    import asyncio

    from ..detect.families import CLAUDE, find_agent
    from ..remote.host import RemoteHost
    from ..shared.config import host_from_destination
    from ..tmux.server import TmuxUnavailable

    spec = next((h for h in config.hosts if h.name == host_name), None) or host_from_destination(host_name)
    host = RemoteHost(spec)
    server = host.server
    from ..model import PaneAddress

    target = PaneAddress.parse(args.target).pane if args.target.startswith("%") else args.target

    async def over_the_link() -> int:
        try:
            # The probe too: the host's process table says which agent runs in the pane.
            _, table = await host.snapshot()
        except TmuxUnavailable as exc:
            raise UserError(f"{spec.name}: {exc}") from None
        # The server's calls block on the link, whose master lives on this loop: each runs in a thread.
        address = server.address(target) if target.startswith("%") else target
        record = await asyncio.to_thread(resolve_target, server, address)
        found = find_agent(record.pid, table)
        return await _send_to(args, config, server, record, found[1] if found is not None else CLAUDE)

    async def then_close() -> int:
        try:
            return await over_the_link()
        finally:
            await host.close()

    return asyncio.run(then_close())


def option_keys(text: str) -> str:
    """``--option``'s value: one option number, or several joined by commas ("1,3"), as the guarded send takes them."""
    parts = [part.strip() for part in text.split(",")]
    if not parts or not all(part.isdigit() and len(part) <= 2 for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: an option number (3), or several joined by commas (1,3)")
    return ",".join(str(int(part)) for part in parts)


async def _send_to(args: argparse.Namespace, config, server, record, family) -> int:
    """The guarded send to ``record``'s pane, whose agent is of ``family``."""
    from ..answering.keys import ActionError, ThreadedPaneIO, read_pane, send_guarded
    from ..tmux.server import TmuxCommandError

    intent = _intent_of(args, config)
    io = ThreadedPaneIO(server)
    try:
        # From the command line, "what the user saw" is the prompt as it is
        # now; the guard still re-reads it right before sending, and the
        # answer says exactly what it answered.  Which appearance of a prompt
        # an --expect names is known only to the service that watched it
        # come and go: here (no service) only "no prompt" can be expected.
        seen, _ = await read_pane(io, record.pane_id, family)
        if args.expect:
            raise UserError(
                f"{record.target}: --expect names one appearance of a prompt, which only a headspace service watching the pane keeps track of, and a send with --host answers by itself; nothing sent"
            )
        if args.expect is not None and seen.prompt is not None:
            raise UserError(f"{record.target}: the agent asks something now ({seen.state.value}), and no prompt was expected; nothing sent")
        outcome = await send_guarded(io, record.pane_id, seen, intent, timeout=args.timeout, server_key=server.key, family=family)
    except (ActionError, TmuxCommandError) as exc:
        raise UserError(f"{record.target}: {exc}") from None
    if not outcome.delivered:
        raise UserError(f"{record.target}: {outcome.detail}")
    print(clean(f"{record.target}: {outcome.detail}"))
    return EXIT_OK
