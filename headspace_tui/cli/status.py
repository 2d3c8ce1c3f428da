"""``headspace status``: every agent's state, asked of the running service, or of the same service run here for one look."""

from __future__ import annotations

import argparse
import logging
import sys

from .common import EXIT_FAIL, EXIT_OK, UserError, clean, config_of, host_specs, identity_of, json_line, load_plugins_here, server_of

LOOK_SETTLE = 30.0  # seconds a look with no service may take (a remote host's link and first look included)


def cmd_status(args: argparse.Namespace) -> int:
    """Every agent's state: asked of the running service when there is one for this view, else read now (a one-shot look)."""
    from ..api.row_keys import needs_you, public

    asked = _status_from_service(args)
    if asked is not None:
        rows, problems = asked
    else:
        rows, problems = _status_by_look(args)
    for problem in problems:
        print(f"headspace: {clean(problem)}", file=sys.stderr)
    status = EXIT_FAIL if problems else EXIT_OK
    if args.json:
        for row in rows:
            print(json_line(public(row)))
        return status
    if not rows:
        if not problems:
            print("no agents found (Claude Code, Codex, Gemini CLI, opencode)" + ("" if args.all else " (use --all to list every pane)"))
        return status
    from ..detect.clock import elapsed
    from ..detect.families import label_of  # every family's record: the text view's names, not --json's

    remote = any(row["host"] != "local" for row in rows)
    names = [f"{row['host']}:{row['target']}" if remote else str(row["target"]) for row in rows]
    width = max(len(n) for n in names)
    for name, row in zip(names, rows, strict=True):
        seconds = row["in_state_for"]
        took = elapsed(seconds, precise=needs_you(row)) if seconds is not None else "?"
        print(f"{clean(name):<{width}}  {str(row['pane_id']):<5} {label_of(str(row['agent'])):<8} {took:>6}  {clean(str(row['line']))}")
    print(summary(rows))
    return status


def _status_by_look(args: argparse.Namespace) -> tuple[list[dict], list[str]]:
    """Every agent read now by the service run in this process for one look (no service runs for this view): its rows, and one line per host that failed.

    The same service the resident one is (``Service.build``, its monitors,
    the ``rows`` call through the same routes), built for a look only
    (``looking``): its first look read by captures with no control client
    attached, nothing held, answered or rung, no appearance of a prompt
    named (``names``: the rows outlive the look), the event log read to
    date each state as the live table does and never written.
    """
    import asyncio

    from ..api.errors import ServiceError
    from ..resident.client import rows_of
    from ..service.facade import Service
    from ..service.records.journal import Journal
    from ..tmux.server import TmuxUnavailable

    config = config_of(args)
    local, specs = host_specs(args, config)
    server = server_of(args)
    if local and not specs:
        try:
            server.run("display-message", "-p", "#{pid}")  # none runs: the one line that says so, as a look of the table would
        except TmuxUnavailable as exc:
            raise UserError(str(exc)) from None
        except Exception:  # noqa: BLE001 - any other answer: the look itself says what is wrong
            pass
    load_plugins_here()  # their failures told here; the service finds their agents too
    journal = Journal.reading()
    try:
        service = Service.build(server, config=config, include_all=args.all, journal=journal, hosts=specs, local=local, looking=True, names=False)
        return rows_of(asyncio.run(_look(service)))
    except ServiceError as exc:  # the look's service refused or did not answer: one line, as a resident one's would be
        raise UserError(f"the look at the agents: {exc}") from None
    finally:
        if journal is not None:
            journal.close()


async def _look(service) -> object:
    """Ask ``service``, run here for this look, for its rows, as a client asks a resident one."""
    from ..resident.transport import errand

    async with errand(service) as transport:
        return await rows_once_looked(transport)


async def rows_once_looked(transport) -> object:
    """The ``rows`` answer of a service run here for an errand (transport.py ``errand``), once its first look is whole (at most LOOK_SETTLE s)."""
    from ..api import timeouts
    from ..api.own_calls import OWN

    return await transport.asked(OWN["rows"], {"settle": LOOK_SETTLE}, LOOK_SETTLE + timeouts.REQUEST)


def _status_from_service(args: argparse.Namespace) -> tuple[list[dict], list[str]] | None:
    """The rows of the running service of this tmux server, when it watches exactly this view; None: none does, read it here.

    The service watches the local server and the configured hosts: a view
    with ``--all``, ``--host``, ``--no-local`` or another ``--config`` is
    read here, and so is one no service of this version serves (a service
    of an older version is stopped: an upgrade never leaves an old one
    answering).  A service of this view that fails to answer is an error,
    in one line: never a second, silent way to the same rows.
    """
    if args.all or getattr(args, "host", None) or getattr(args, "no_local", False) or args.config is not None:
        return None
    from ..api.errors import NotServing, ServiceError
    from ..resident.client import ask_rows

    try:
        return ask_rows(identity_of(args))
    except NotServing as exc:
        logging.getLogger(__name__).info("status read here: %s", exc)
        return None
    except ServiceError as exc:
        raise UserError(f"the headspace service: {exc}") from None


def summary(rows) -> str:
    """The count line under ``status``: how many need you, work, idle, and how many we could not read."""
    from ..api.row_keys import needs_you

    count = lambda *states: sum(1 for row in rows if row["state"] in states)  # noqa: E731
    # A wait the user snoozed does not need them (counted apart, as the table and the page count it).
    put_off = sum(1 for row in rows if needs_you(row) and row.get("snoozed"))
    needing = sum(1 for row in rows if needs_you(row) and not row.get("snoozed"))
    parts = [f"{len(rows)} agent{'s' if len(rows) != 1 else ''}", f"{needing} need you" + (f" ({put_off} snoozed)" if put_off else "")]
    parts += [f"{count('working')} working", f"{count('idle')} idle"]
    unknown = count("unknown")
    if unknown:
        parts.append(f"{unknown} unknown (unrecognised screen: see 'headspace classify --help' to report it)")
    return " · ".join(parts)
