"""The journal's history queries: what the UI and the clock ask of the past.

An agent's timeline, its last state as headspace last saw it (so a fresh
headspace does not count a wait from zero), and how long agents waited on
you today, earlier runs included.  Answered from this run's histories and
the event log; written nothing.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from collections.abc import Callable

from ...detect.clock import needs_you, same_spell
from ...model import Agent, AgentState
from ...state.eventlog import EventLog, EventLogError, StoredEvent
from .command_tracker import AgentHistory, who
from .event_writer import EventWriter


def start_of_day(now: float) -> float:
    today = dt.datetime.fromtimestamp(now).date()
    return dt.datetime.combine(today, dt.time()).timestamp()


class History:
    def __init__(
        self,
        log: EventLog | None,
        clock: Callable[[], float],
        agents: dict[str, AgentHistory],
        ended: OrderedDict[str, list[StoredEvent]],
        writer: EventWriter,
    ) -> None:
        self.log = log
        self.clock = clock
        self.agents = agents  # the journal's: agents that are here now
        self.ended_events = ended  # the journal's: the last gone agents' events
        self.writer = writer
        self._waited_before: dict[str, float] = {}  # agent key -> needs-you seconds today, from earlier runs
        self._waited_ended = 0.0  # needs-you seconds today of agents that have gone since
        self._open_before: dict[str, tuple[float, str]] = {}  # agent key -> (since, state) of a wait an earlier run left open
        self._away: dict[str, float] = {}  # agent key -> start of such a wait that ended before this run found the agent again
        if log is not None:
            self._load_today()

    # -- what the UI asks -----------------------------------------------------------
    def timeline(self, key: str, limit: int, history: Callable[[str], AgentHistory]) -> list[StoredEvent]:
        """One agent's events (``key``: ``who(agent)``), oldest first."""
        if self.log is not None:
            with self.writer.reading():  # what still waits (a moment's queue, a full disk's backlog) first, then the log: none missed
                waiting = self.writer.waiting(key)
                try:
                    return (self.log.query(agent=key, limit=limit) + waiting)[-limit:]
                except EventLogError:
                    return waiting[-limit:]
        # Asked off the loop (``timeline`` is served in a thread): looked up, never made here.
        here = self.agents.get(key)
        if here is None:
            return list(self.ended_events.get(key, ()))[-limit:]
        return here.events[-limit:]

    def waited_today(self, agents: dict[str, Agent], now: float | None = None) -> float:
        """Seconds agents spent needing you since midnight (earlier runs included)."""
        now = self.clock() if now is None else now
        midnight = start_of_day(now)
        live = {who(agent) for agent in agents.values()}
        total = sum(self._waited_before.values()) + self._waited_ended
        for key, history in self.agents.items():
            total += needs_you_seconds(history.changes, midnight, now if key in live else None) + self._waited_away(key, history, midnight)
        return total

    # -- what the clock asks --------------------------------------------------------
    def remembered(self, key: str) -> tuple[str, float] | None:
        """The agent's last state as headspace last saw it, and since when (its claim): from this run's memory, else the event log.

        After a restart this dates a state no source of Claude's dates (the
        one clock's ``journal`` source), so a fresh headspace does not count
        a wait from zero.
        """
        history = self.agents.get(key)
        if history is not None and history.changes:
            at, _, state = history.changes[-1]
            return state, at
        return self.remembered_in_log(key)

    def remembered_in_log(self, key: str) -> tuple[str, float] | None:
        """The agent's last logged state and its claim (moved by later ``agent_clock`` events), or None."""
        if self.log is None:
            return None
        try:
            rows = self.log.query(agent=key, kind="agent_state", limit=1)
            if not rows:
                return None
            moved = self.log.query(agent=key, kind="agent_clock", after_id=rows[-1].id)
        except EventLogError:
            return None
        state, since = str(rows[-1].payload.get("to") or ""), _since(rows[-1])
        for row in moved:
            if row.payload.get("state") == state:
                since = _number(row.payload.get("since"), since)
        return state, since

    def last_logged_state(self, key: str) -> str | None:
        if self.log is None:
            return None
        try:
            rows = self.log.query(agent=key, kind="agent_state", limit=1)
        except EventLogError:
            return None
        return rows[-1].payload.get("to") if rows else None

    # -- what the journal tells it ----------------------------------------------------
    def found_again(self, key: str, state: AgentState) -> None:
        """An agent seen again after a restart: a wait an earlier run left open ends where its next state began.

        Found in the same state, the wait is still on: this run counts it
        whole, from its claim (which ``remembered`` gave the clock), so
        nothing of it is added here.
        """
        opened = self._open_before.pop(key, None)
        if opened is not None and not same_spell(opened[1], state.value):
            # Counted up to this run's first state's claim, read when the total is
            # asked: the transcript may date that state earlier a moment from now.
            self._away[key] = opened[0]

    def gone(self, key: str, history: AgentHistory) -> None:
        """An agent is gone: its needs-you time today joins one total."""
        now = self.clock()
        midnight = start_of_day(now)
        self._waited_ended += needs_you_seconds(history.changes, midnight, now) + self._waited_away(key, history, midnight)
        self._away.pop(key, None)

    def _waited_away(self, key: str, history: AgentHistory, midnight: float) -> float:
        """A wait an earlier run left open and that ended while headspace was away: to the claim of the state this run found."""
        start = self._away.get(key)
        if start is None or not history.changes:
            return 0.0
        return max(0.0, history.changes[0][0] - max(start, midnight))

    def _load_today(self) -> None:
        """Needs-you time from earlier runs today: closed waits counted, open ones kept for when the agent is seen again.

        Each state counts from its claim (``since``, moved by ``agent_clock``
        events), as its row did.
        """
        now = self.clock()
        midnight = start_of_day(now)
        try:
            rows = self.log.query(kind="agent_state", since=midnight) if self.log else []
            moved = self.log.query(kind="agent_clock", since=midnight) if self.log else []
        except EventLogError:
            return
        by_agent: dict[str, list[tuple[float, str, str]]] = {}
        for row in sorted(rows + moved, key=lambda r: r.id):
            changes = by_agent.setdefault(row.agent or "", [])
            if row.kind == "agent_state":
                changes.append((_since(row), row.payload.get("from") or "", row.payload.get("to") or ""))
            elif changes and changes[-1][2] == row.payload.get("state"):
                at, old, new = changes[-1]
                changes[-1] = (_number(row.payload.get("since"), at), old, new)
        for key, changes in by_agent.items():
            self._waited_before[key] = needs_you_seconds(changes, midnight, None)
            at, _, state = changes[-1] if changes else (0.0, "", "")
            if needs_you(state):
                self._open_before[key] = (at, state)


def _number(value: object, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _since(row: StoredEvent) -> float:
    """When a logged state began: its claim (``since``), or, in a log written before there was one, when it was seen."""
    return _number(row.payload.get("since"), row.ts)


def needs_you_seconds(changes: list[tuple[float, str, str]], since: float, open_until: float | None) -> float:
    """Sum the intervals spent in a needs-you state (each from its claim to the next state's); the last one counts up to ``open_until``.

    Retrying is working, not a wait: it is never counted.
    """
    total = 0.0
    for i, (at, _, to) in enumerate(changes):
        if not needs_you(to):
            continue
        end = changes[i + 1][0] if i + 1 < len(changes) else open_until
        if end is None:
            continue
        total += max(0.0, end - max(at, since))
    return total
