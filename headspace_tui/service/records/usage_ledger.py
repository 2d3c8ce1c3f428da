"""What the agents spent, per agent and per day, kept in the event log so it outlives a restart.

An agent's usage is a running total of its conversation (service/records/usage_tally.py,
detect/session_usage.py).  Each time it grows, one ``usage`` event is
written: the totals now, and what was added since the last one (``spent``):
the days are then sums of ``spent`` by the event's date, read back from the
log, and "today" is the same sum kept up as events are written.

What was added is the totals less the last ones this agent's events said,
this run or an earlier one (the log is asked once per agent).  Totals of
another conversation (Claude's session id changed: ``/clear``, ``/resume``),
or that went down (Codex's ``/new``, Gemini's ``/clear``), are a new
conversation: all of it is new, and the day keeps both.  An agent headspace
never saw before counts its whole conversation so far on the day it is
first seen (a session begun yesterday and first watched today is today's).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterable

from ...model import Agent
from ...state.eventlog import EventLog, EventLogError, StoredEvent
from ...usage.model import Spent, SpentRow, Tokens, Usage
from .event_writer import EventWriter
from .history import start_of_day

KIND = "usage"


Last = tuple[Tokens, float | None, str]  # the totals an agent's last event said, their cost, and their conversation


def added(before: Last | None, now: Usage) -> Spent:
    """What ``now``'s totals add to ``before``'s (all of them when there was none, or when they are of another conversation: /clear, /resume, or totals that went down)."""
    tokens, cost = now.tokens, now.cost_usd
    other = bool(before and before[2] and now.conversation and before[2] != now.conversation)
    if before is not None and not other and all(n >= b for n, b in zip(tokens.to_list(), before[0].to_list(), strict=True)):
        tokens = tokens - before[0]
        if cost is not None and before[1] is not None:
            cost = max(0.0, cost - before[1])
    if cost is None:
        return Spent(tokens, 0.0, tokens.total)
    return Spent(tokens, round(cost, 6), 0)


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def spent_of(event: StoredEvent) -> Spent | None:
    """A ``usage`` event's ``spent`` (None: not one, or edited into something else)."""
    tokens = Tokens.from_list(event.payload.get("spent"))
    cost, unpriced = _number(event.payload.get("spent_usd")), event.payload.get("unpriced")
    if tokens is None or cost is None or not isinstance(unpriced, int):
        return None
    return Spent(tokens, cost, unpriced)


def by_day(events: Iterable[StoredEvent]) -> list[SpentRow]:
    """Each agent's spending per day (newest day first, the biggest spender first within it)."""
    sums: dict[tuple[str, str], Spent] = {}
    for event in events:
        spent = spent_of(event)
        if spent is None:
            continue
        day = dt.datetime.fromtimestamp(event.ts).date().isoformat()
        name = event.payload.get("name")
        key = (day, name if isinstance(name, str) and name else event.agent or "?")
        sums[key] = sums.get(key, Spent()) + spent
    return sorted((SpentRow(day, agent, spent) for (day, agent), spent in sums.items()), key=lambda r: (r.day, r.spent.cost_usd, r.spent.tokens.total), reverse=True)


class UsageLedger:
    """Writes each agent's growth as ``usage`` events and keeps today's sum."""

    def __init__(self, log: EventLog | None, writer: EventWriter, clock: Callable[[], float]) -> None:
        self.log = log
        self.writer = writer
        self.clock = clock
        self._last: dict[str, Last] = {}  # agent key → the totals its last event said
        self._day = 0.0  # the midnight ``_today`` counts from
        self._today = Spent()
        self._counting = threading.RLock()  # today's sum: added to on the loop, read by ``spent`` in a thread
        self._kept: list[StoredEvent] = []  # without a log: this run's events, for the days view
        # This machine's host name in agent keys, and the local tmux server whose agents' spending this is ("": every
        # one's): the log is one per user, kept by every headspace of every server; another local server's agents are
        # its own service's to count.
        self.local, self.server = "", ""

    def used(self, key: str, agent: Agent) -> None:
        """The agent's row changed: when its totals grew, one event."""
        usage = agent.usage
        if usage is None:
            return
        if key not in self._last:
            self._last[key] = self._logged(key)
        before = self._last[key]  # zero counts when none were logged: all of it is new, as with none
        if before[:2] == (usage.tokens, usage.cost_usd) and before[2] in ("", usage.conversation):
            return
        spent = added(before, usage)
        self._last[key] = (usage.tokens, usage.cost_usd, usage.conversation)
        if not spent.tokens.total and not spent.cost_usd:
            return
        now = self.clock()
        with self._counting:
            self.today(now)
            self._today += spent
        event = {
            "kind": KIND,
            "agent": key,
            "ts": now,
            "name": agent.target + (f" ({agent.cwd.rstrip('/').rsplit('/', 1)[-1]})" if agent.cwd else ""),
            "model": usage.model,
            "tokens": usage.tokens.to_list(),
            "cost_usd": usage.cost_usd,
            "conversation": usage.conversation,
            "spent": spent.tokens.to_list(),
            "spent_usd": spent.cost_usd,
            "unpriced": spent.unpriced,
        }
        if self.log is None:
            self._kept = (self._kept + [StoredEvent(0, now, key, KIND, {k: v for k, v in event.items() if k not in ("kind", "agent", "ts")})])[-10_000:]
        self.writer.write([event])

    def forget(self, key: str) -> None:
        """The agent is gone: its last totals go with it (its events stay in the log; a key seen again asks the log once more)."""
        self._last.pop(key, None)

    def today(self, now: float) -> Spent:
        """What was spent since midnight, earlier runs' events included."""
        with self._counting:  # asked off the loop (``spent`` is served in a thread) while the loop adds to it
            midnight = start_of_day(now)
            if midnight != self._day:
                self._day = midnight
                self._today = sum((r.spent for r in by_day(self._events(midnight))), Spent())
            return self._today

    def days(self, now: float, days: int) -> list[SpentRow]:
        """Each agent's spending per day, the last ``days`` days (today included)."""
        since = start_of_day(now) - 86_400 * max(0, days - 1)
        return by_day(self._events(since))

    def since(self, since: float) -> list[StoredEvent]:
        """This server's usage events at or after ``since`` (what was added, each: ``spent_of``)."""
        return self._events(since)

    def _events(self, since: float) -> list[StoredEvent]:
        if self.log is None:
            return [e for e in self._kept if e.ts >= since]
        return [e for e in self.writer.since(self.log, KIND, since) if self._mine(e.agent or "")]

    def _mine(self, key: str) -> bool:
        """An agent of this server (or of a remote host), by its key ``host|server|pane|pid@started``."""
        host, _, rest = key.partition("|")
        return not self.server or host != self.local or rest.partition("|")[0] == self.server

    def _logged(self, key: str) -> Last:
        """The totals this agent's last event said (an earlier run's too); zero when it has none."""
        if self.log is not None:
            try:
                rows = self.log.query(agent=key, kind=KIND, limit=1)
            except EventLogError:
                rows = []
            if rows:
                tokens = Tokens.from_list(rows[-1].payload.get("tokens"))
                if tokens is not None:
                    conversation = rows[-1].payload.get("conversation")
                    return tokens, _number(rows[-1].payload.get("cost_usd")), conversation if isinstance(conversation, str) else ""
        return Tokens(), None, ""
