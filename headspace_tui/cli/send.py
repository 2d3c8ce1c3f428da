"""``headspace send``: one answer, through the resident service's answerer (started when none runs).

``--host``: through the service when it watches that host (its one
answerer for that pane, never a second one racing it); to a host no
service watches, through the same service run in this process for that
host and this one answer (its answerer, guard and audit line).
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
        raise _refused(pane_id, exc) from None
    except (ServiceError, PlaceError) as exc:
        raise UserError(f"{pane_id}: {exc}; nothing sent") from None
    return _told(target, delivered, detail)


def _refused(pane_id: str, exc: Exception) -> UserError:
    """The service's refusal of an answer (or no answer at all: ``Lost``, it may have gone), in one line."""
    from ..api.errors import Lost

    said = str(exc).removeprefix(f"{pane_id}: ")  # the service's refusal may name the pane already
    return UserError(f"{pane_id}: {said}" + ("; it may have been answered: see 'headspace status'" if isinstance(exc, Lost) else ""))


def _told(target: str, delivered: bool, detail: str) -> int:
    """An answer's final report, printed; one that was not delivered is the command's error."""
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
    return _pane_among(rows, host_name, target, "the service's table")


def _pane_among(rows: list[dict], host_name: str, target: str, table: str) -> str:
    """The pane (``%N@host``) that ``target`` names among ``rows`` of ``host_name``: as a target names a pane here (common.resolve_target)."""
    from ..model import PaneAddress

    there = [row for row in rows if row.get("host") == host_name]
    # session:window.pane, session:window, or session.
    for found in (
        [row for row in there if row["target"] == target],
        [row for row in there if str(row["target"]).rsplit(".", 1)[0] == target],
        [row for row in there if str(row["target"]).rsplit(":", 1)[0] == target],
    ):
        if len(found) == 1:
            return str(PaneAddress(str(found[0]["pane_id"]), host_name))
        if len(found) > 1:
            raise UserError(f"{host_name}:{target}: names {len(found)} agents; use session:window.pane or %N; nothing sent")
    raise UserError(f"{host_name}:{target}: no agent there in {table} (see 'headspace status'); nothing sent")


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
    """``send --host NAME`` where no service watches that host: the same service, run here for that host and this one answer.

    Built as ``status`` builds its look (``looking``: no control client
    attached, no hook held, no rule, nudge or ring acting on that host's
    other agents), with the event log written, so the answer goes through
    the service's one answerer and guard (``AnswerWait``, as the resident
    service's route answers ``send``) and leaves its audit line.
    """
    import asyncio
    import sys

    from ..service.facade import Service
    from ..service.records.journal import Journal
    from ..shared.config import host_from_destination

    if args.expect:
        raise UserError(
            f"{host_name}:{args.target}: --expect names one appearance of a prompt, which only a headspace service watching the pane keeps track of, and no service watches {host_name}; nothing sent"
        )
    spec = next((h for h in config.hosts if h.name == host_name), None) or host_from_destination(host_name)
    journal, problem = Journal.open()
    if problem:
        print(f"headspace: {clean(problem)}", file=sys.stderr)
    try:
        service = Service.build(server_of(args), config=config, journal=journal, hosts=[spec], local=False, looking=True)
        return asyncio.run(_answer_there(service, args, config, spec.name))
    finally:
        journal.close()


async def _answer_there(service, args: argparse.Namespace, config, host_name: str) -> int:
    """Ask ``service``, run here for ``host_name``, for its rows once its first look is whole, then for the answer: the calls a resident one answers ``send`` by."""
    from ..api import timeouts
    from ..api.errors import ServiceError
    from ..api.own_calls import OWN
    from ..model import PaneAddress
    from ..resident.client import answer_of, rows_of
    from ..resident.transport import errand
    from .status import rows_once_looked

    intent = _intent_of(args, config)
    async with errand(service) as transport:
        try:
            rows, problems = rows_of(await rows_once_looked(transport))
        except ServiceError as exc:
            raise UserError(f"{host_name}: {exc}; nothing sent") from None
        if problems:  # the one host it watches: not reached, or not yet looked at
            raise UserError(f"{'; '.join(problems)}; nothing sent")
        if args.target.startswith("%"):
            pane = str(PaneAddress(PaneAddress.parse(args.target).pane, host_name))
        else:
            pane = _pane_among(rows, host_name, args.target, f"{host_name}'s agents")
        body = {"pane_id": pane, "intent": intent.kind.value, "option": intent.option, "text": intent.text, "expect": args.expect}
        try:
            target, delivered, detail = answer_of(await transport.asked(OWN["answer_and_report"], body, timeouts.ANSWER_ASKED))
        except ServiceError as exc:  # refused, as the service's route says it to a send it answers
            raise _refused(pane, exc) from None
    return _told(target, delivered, detail)


def option_keys(text: str) -> str:
    """``--option``'s value: one option number, or several joined by commas ("1,3"), as the guarded send takes them."""
    parts = [part.strip() for part in text.split(",")]
    if not parts or not all(part.isdigit() and len(part) <= 2 for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: an option number (3), or several joined by commas (1,3)")
    return ",".join(str(int(part)) for part in parts)
