"""Which panes to watch, from one listing of the server and one process table (pure).

A pane is watched when an agent of a known family (Claude Code, Codex,
Gemini CLI, opencode: ``detect/families.py``) runs in its process tree (or,
with ``--all``, always) and stays watched after the agent exits (its row
shows "exited") until the pane closes.  A pane whose agent is another
process than the one watched holds another agent: the old one is forgotten
and the new one gets its own identity (``pane_watch.agent_key``).

``agent_pid`` is the agent's process whatever its family; only Claude's
are ``new_claudes``, whose status files and install Claude's facts learn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ...detect.families import CLAUDE, find_agent
from ...detect.family import Family
from ...shared.proctree import ProcessTable
from ...tmux.server import PaneRecord
from .pane_watch import agent_key


@dataclass(frozen=True)
class Sighting:
    """A pane to watch, with the agent in it (None: none now), its family, and its agent's identity."""

    record: PaneRecord
    agent_pid: int | None
    key: str
    family: Family | None = None  # None while no agent runs there


@dataclass
class Plan:
    watch: list[Sighting] = field(default_factory=list)  # every pane to watch, in the server's order
    replaced: set[str] = field(default_factory=set)  # panes whose watched agent is gone for another one
    new_claudes: list[int] = field(default_factory=list)  # Claude Code processes not known before
    sessions: set[str] = field(default_factory=set)  # every session of the server


def started(table: ProcessTable, pid: int) -> str:
    info = table.get(pid)
    return info.started if info is not None else ""


def plan(
    records: list[PaneRecord],
    table: ProcessTable,
    watched: Mapping[str, str],
    known_claudes: set[int],
    *,
    host: str,
    server: str,
    include_all: bool = False,
) -> Plan:
    """What to watch now; ``watched`` maps each watched pane to its agent's identity."""
    result = Plan(sessions={r.session_id for r in records})
    for record in records:
        found = find_agent(record.pid, table)
        agent_pid, family = found if found is not None else (None, None)
        if family is CLAUDE and agent_pid is not None and agent_pid not in known_claudes and agent_pid not in result.new_claudes:
            result.new_claudes.append(agent_pid)
        key = watched.get(record.pane_id)
        if key is not None and agent_pid is not None and key != agent_key(host, server, record.pane_id, agent_pid, started(table, agent_pid)):
            result.replaced.add(record.pane_id)  # another agent in that pane now
            key = None
        if key is None:
            if agent_pid is None and not include_all:
                continue
            pid = agent_pid or record.pid
            key = agent_key(host, server, record.pane_id, pid, started(table, pid))
        result.watch.append(Sighting(record, agent_pid, key, family))
    return result
