"""``headspace status``: every agent's state, asked of the running service, or read now by a look of its own."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Callable, Iterator

from .common import EXIT_FAIL, EXIT_OK, UserError, clean, config_of, host_specs, identity_of, json_line, load_plugins_here, server_of


def _scan_agents(args: argparse.Namespace, remember: Callable[[str], tuple[str, float] | None] | None = None):
    """Every agent of this machine and the remote hosts asked for, read now; (agents, one line per host that failed).

    ``remember``: the event log's memory (``_log_memory``), to date a state as the live table would.
    """
    import asyncio

    from ..model import sort_key
    from ..remote.host import RemoteHost
    from ..service.watching.host import LocalHost
    from ..service.watching.one_look import look_at
    from ..tmux.server import TmuxUnavailable

    local, specs = host_specs(args, config_of(args))
    hosts = ([LocalHost(server_of(args))] if local else []) + [RemoteHost(spec) for spec in specs]
    agents, failed = asyncio.run(look_at(hosts, include_all=args.all, remember=remember))
    problems = []
    for host, error, line in failed:
        if not host.remote and isinstance(error, TmuxUnavailable):
            if not specs:
                raise UserError(str(error)) from None
            line = f"local: {error}"
        problems.append(line)
    return sorted(agents, key=sort_key), problems


@contextlib.contextmanager
def _log_memory() -> Iterator[Callable[[str], tuple[str, float] | None] | None]:
    """The event log's last word on an agent (``History.remembered_in_log``), for dating what nothing of Claude's dates.

    ``headspace status`` weighs it as the live table does (``to_agent``, the
    one clock).  Read only when the event log exists (a one-shot command
    never creates it); None without one.
    """
    from ..service.records.journal import Journal
    from ..state.eventlog import EventLog, EventLogError
    from ..state.eventlog import default_path as events_path

    if not events_path().is_file():
        yield None
        return
    try:
        journal = Journal(EventLog(events_path()))
    except EventLogError:
        yield None
        return
    try:
        yield journal.remembered_in_log
    finally:
        journal.close()


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
    """Every agent read now by this process (no service runs for this view): its rows, and one line per host that failed."""
    import time

    from ..api.rows import agent_row

    load_plugins_here()  # this look finds their agents too
    with _log_memory() as remember:
        agents, problems = _scan_agents(args, remember)
    now = time.time()
    return [agent_row(agent, now) for agent in agents], problems


def _status_from_service(args: argparse.Namespace) -> tuple[list[dict], list[str]] | None:
    """The rows of the running service of this tmux server, when it watches exactly this view; None: read it here.

    The service watches the local server and the configured hosts: a view
    with ``--all``, ``--host``, ``--no-local`` or another ``--config`` is
    read here.  A service of
    another version is stopped (an upgrade never leaves an old one
    answering) and this look is read here.
    """
    if args.all or getattr(args, "host", None) or getattr(args, "no_local", False) or args.config is not None:
        return None
    from ..api.errors import ServiceError
    from ..resident.client import ask_rows

    try:
        return ask_rows(identity_of(args))
    except ServiceError as exc:
        logging.getLogger(__name__).info("status read here: %s", exc)
        return None


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
