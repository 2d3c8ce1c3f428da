"""What headspace remembers: state changes, commands and outcomes, per agent.

The monitor tells the journal when an agent's state changes and hands it the
new transcript turns; the journal runs the PRD's command state machine over
the turns, picks out outcomes (tests passed, commits, errors ...) and writes
everything to the event log.  It also answers the two questions the UI asks
of history: an agent's timeline, and how long agents waited on you today.

Without an event log (it could not be opened) the journal still keeps the
session's history in memory, so the app works; it just forgets on exit.

The journal is the one writer of agents' histories and hands its three
jobs to three pieces: writing events (``event_writer.py``: a log that fails
for a while loses nothing), the command machine over transcript turns
(``command_tracker.py``), and the questions asked of the past
(``history.py``: timelines, today's waits, the last state seen).

Histories are keyed by the agent's identity (``Agent.key``: host, tmux
server, pane and Claude process), never by ``%N`` alone: every tmux server
has a ``%1``, and the next pane reuses a closed one's id.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from ...detect import turns as transcript
from ...events import AgentChanged, AgentRemoved, Answered, CallBlocked, Event
from ...model import Agent, AgentState, Blocked
from ...state.eventlog import EventLog, EventLogError, StoredEvent
from ...state.machine import AgentCommands, end_session
from ...usage.model import Spent, SpentRow
from .away import away, spent_since
from .command_tracker import AgentHistory, CommandTracker, turn_time, who
from .event_writer import EventWriter, stored
from .history import History, start_of_day
from .usage_ledger import UsageLedger, spent_of

CLOCK = "agent_clock"  # an agent's state dated again (its key, the state, since when)
STATE = "agent_state"  # an agent's state change (its key, from, to, since when)

__all__ = ["ENDED_KEPT", "MEMORY_EVENTS", "AgentHistory", "Journal", "start_of_day", "turn_time", "who"]

MEMORY_EVENTS = 500  # per agent, when there is no log
ENDED_KEPT = 100  # agents that are gone whose recent in-memory events are kept (for a timeline without a log)


class Journal:
    def __init__(self, log: EventLog | None, clock: Callable[[], float] = time.time, *, background: bool = False, writes: bool = True) -> None:
        self.log = log
        self.clock = clock
        self.agents: dict[str, AgentHistory] = {}  # agents that are here now
        self._ended: OrderedDict[str, list[StoredEvent]] = OrderedDict()  # the last ENDED_KEPT gone agents' events
        # background: writes off the loop (event_writer.py); without ``writes`` they stay in memory and the log is only read.
        self.writer = EventWriter(log if writes else None, clock, self._remember, background=background)
        self.tracker = CommandTracker(self._history, self.writer, clock)
        self.history = History(log, clock, self.agents, self._ended, self.writer)
        self.ledger = UsageLedger(log, self.writer, clock)  # what agents spent per day (service/records/usage_ledger.py)

    @classmethod
    def open(cls, path=None, clock: Callable[[], float] = time.time) -> tuple[Journal, str | None]:
        """A journal on the event log at ``path``, written by a thread of its own (the service's); on failure, a memory-only one and the reason."""
        try:
            return cls(EventLog(path), clock, background=True), None
        except EventLogError as exc:
            return cls(None, clock), f"event log disabled: {exc}"

    @classmethod
    def reading(cls, path=None, clock: Callable[[], float] = time.time) -> Journal | None:
        """A journal that reads the event log at ``path`` and never writes it: a one-shot look's (``headspace status``).

        What happened before is the log's, so a state is dated as the live
        table dates it; what the look itself sees is kept in memory and
        forgotten (a look of a second is no history).  None when there is
        no log to read (a one-shot command never creates it) or it cannot be
        opened.
        """
        from ...state.eventlog import default_path

        where = path or default_path()
        if not where.is_file():
            return None
        try:
            return cls(EventLog(where), clock, writes=False)
        except EventLogError:
            return None

    @property
    def on_notice(self) -> Callable[[str], None]:
        """One line for the user about the log (failing, writing again); the monitor wires it."""
        return self.writer.on_notice

    @on_notice.setter
    def on_notice(self, notice: Callable[[str], None]) -> None:
        self.writer.on_notice = notice

    @property
    def evidence(self):
        """Answers waiting for Claude's word on who was first (the command tracker's)."""
        return self.tracker.evidence

    def _history(self, key: str) -> AgentHistory:
        history = self.agents.get(key)
        if history is None:
            history = self.agents[key] = AgentHistory(AgentCommands(agent=key))
        return history

    def _remember(self, events: list[dict]) -> None:
        """Keep events in memory (there is no log): a bounded timeline."""
        for event in events:
            kept = stored(event)
            key = kept.agent or ""
            history = self.agents.get(key)
            if history is None and key in self._ended:
                self._ended[key] = (self._ended[key] + [kept])[-MEMORY_EVENTS:]
                continue
            history = self._history(key)
            history.events = (history.events + [kept])[-MEMORY_EVENTS:]

    # -- what the monitor reports ------------------------------------------------
    def on_event(self, event: Event) -> None:
        """The journal subscribes to the monitor: state changes, answers, agents gone (turns it is handed: ``turns``)."""
        if isinstance(event, AgentChanged):
            self.ledger.used(who(event.agent), event.agent)
        if isinstance(event, AgentChanged) and event.state_changed:
            self.state_changed(event.agent, event.old_state, event.agent.state, event.at)
        elif isinstance(event, AgentChanged):
            self.clock_moved(event.agent, event.at)
        elif isinstance(event, Answered):
            self.answered(event)
        elif isinstance(event, CallBlocked):
            self.blocked(event)
        elif isinstance(event, AgentRemoved):
            self.ended(event.key or event.pane_id)

    def ended(self, key: str) -> None:
        """An agent is gone: what is kept of it shrinks to a bounded recent history.

        Its needs-you time today is added to one total, its recent in-memory
        events stay (for the last ENDED_KEPT agents) and the rest is in the
        event log; under churn (1,619 short-lived agents in 17 minutes) the
        journal kept every one's history forever, about 28 KB each.
        """
        self.evidence.ended(key)
        self.ledger.forget(key)
        history = self.agents.pop(key, None)
        if history is None:
            return
        self.history.gone(key, history)
        self._ended[key] = history.events[-MEMORY_EVENTS:]
        self._ended.move_to_end(key)
        while len(self._ended) > ENDED_KEPT:
            self._ended.popitem(last=False)

    def answered(self, event: Answered) -> None:
        """The audit trail: who answered what, through which channel, with the exact input.

        ``first`` here is headspace's view; Claude's word on it follows as an
        ``answer_evidence`` event once the transcript shows the tool's result
        (``evidence.py``): at once when it already did.  Keys the pane never
        showed landing are written too (``delivered`` false, with why): they
        reached the pane all the same; only delivered answers to a dialog
        wait for Claude's word.
        """
        found = self.evidence.answered(who(event.agent), event) if event.delivered and event.dialog else []
        self.writer.write(
            [
                {
                    "kind": "answer",
                    "agent": who(event.agent),
                    "ts": event.at,
                    "pane": event.agent.pane_id,
                    "host": event.host,
                    "target": event.agent.target,
                    "channel": event.channel,
                    "first": event.first,
                    "what": event.what,
                    "tool": event.tool,
                    "input": event.tool_input,
                    "shown": event.shown,  # keys: the command or file their dialog showed (``rules test`` replays it)
                    "cwd": event.agent.cwd,
                    "family": event.agent.family,
                    "delivered": event.delivered,
                    "outcome": event.outcome,
                    "decision": event.decision,  # what was decided, as a field: nothing reads it back out of "what"
                    "rule": event.rule,
                },
                *self.tracker.evidence_events(event.agent, found),
            ]
        )

    def blocked(self, event: CallBlocked) -> None:
        """A call auto mode blocked: into the log (the timeline lists it), as the hook or the screen told it."""
        block = event.block
        self.writer.write(
            [
                {
                    "kind": "blocked",
                    "agent": who(event.agent),
                    "ts": block.at or event.at,
                    "pane": event.agent.pane_id,
                    "host": event.agent.host,
                    "target": event.agent.target,
                    "tool": block.tool,
                    "detail": block.detail,
                    "reason": block.reason,
                    "source": block.source,
                    "call": block.call,
                }
            ]
        )

    def remembered_blocks(self, key: str, limit: int = 50) -> tuple[Blocked, ...]:
        """The calls auto mode blocked that the log holds for this agent (an earlier run's), oldest first, with their own times."""
        if self.log is None:
            return ()
        try:
            rows = self.log.query(agent=key, kind="blocked", limit=limit)
        except EventLogError:
            return ()
        return tuple(sorted((Blocked.from_json({**row.payload, "at": row.ts}) for row in rows), key=lambda b: b.at))

    def state_changed(self, agent: Agent, old: AgentState | None, new: AgentState, at: float) -> None:
        """A state began: kept (and logged) at its claim, ``agent.since``, the time its row counts from."""
        key = who(agent)
        history = self._history(key)
        since = agent.since or at  # an agent with no claim (a replay) counts from when the change was told
        history.changes.append((since, old.value if old else "", new.value))
        if old is None:
            self.history.found_again(key, new)
        if old is None and self.history.last_logged_state(key) == new.value:
            # Headspace restarted and found the agent as it left it: nothing happened,
            # unless this run dates the state otherwise (Claude's word, read now).
            logged = self.history.remembered_in_log(key)
            if logged is not None and abs(logged[1] - since) >= 0.5:
                self.writer.write([{"kind": CLOCK, "agent": key, "state": new.value, "since": since, "since_source": agent.since_source}])
            return
        evidence = agent.observation.evidence[0] if agent.observation.evidence else None
        ended: list[dict] = []
        if new is AgentState.EXITED:
            # Claude is gone (exit, crash, closed pane): its command stays where it was (PRD FR11).
            history.commands, ended = end_session(history.commands, ts=at, reason=evidence.rule if evidence else "exited")
        self.writer.write(
            [
                *ended,
                {
                    "kind": STATE,
                    "agent": who(agent),
                    "ts": at,
                    "pane": agent.pane_id,
                    "target": agent.target,
                    "from": old.value if old else None,
                    "to": new.value,
                    "source": agent.observation.source,
                    "rule": evidence.rule if evidence else "",
                    "since": since,
                    "since_source": agent.since_source,
                },
            ]
        )

    def clock_moved(self, agent: Agent, now: float) -> None:
        """The claim of when the agent's state began moved: earlier (a more trusted source spoke late), or later (a new wait).

        Earlier, the wait counts from there too, logged (``agent_clock``)
        when it moved by half a second or more, so the total after a restart
        and the timeline agree with the row.  Later only when the clock saw
        the next request in the same state (another permission right after
        one was answered: detect/clock.py): the wait before it ended, and a
        new one begins, logged as a state of its own.
        """
        key = who(agent)
        history = self.agents.get(key)
        if history is None or not history.changes:
            return
        at, old, new = history.changes[-1]
        if new != agent.state.value or not agent.since or at == agent.since:
            return
        if agent.since > at:
            self.state_changed(agent, agent.state, agent.state, now)
            return
        history.changes[-1] = (agent.since, old, new)
        if abs(at - agent.since) >= 0.5:
            self.writer.write([{"kind": CLOCK, "agent": key, "state": new, "since": agent.since, "since_source": agent.since_source}])

    def conversation(self, agent: Agent, at: float, session: str, how: str) -> None:
        """Claude began another conversation in the same process (``how``: "cleared" by /clear, or "resumed" by /resume): a line of the timeline."""
        self.writer.write([{"kind": "conversation", "agent": who(agent), "ts": at, "pane": agent.pane_id, "target": agent.target, "session": session, "how": how}])

    # -- the pieces' answers ------------------------------------------------------------
    def turns(self, agent: Agent, turns: list[transcript.Turn], *, record: bool = True) -> tuple[str, str]:
        """New transcript turns through the command machine: the agent's (command, outcome) after them (``CommandTracker.turns``)."""
        return self.tracker.turns(agent, turns, record=record)

    def replayed(self, agent: Agent, turns: list[transcript.Turn]) -> Callable[[], tuple[str, str]]:
        """History replayed off the loop; the step that adopts it (``CommandTracker.replayed``)."""
        return self.tracker.replayed(agent, turns)

    def remembered(self, key: str) -> tuple[str, float] | None:
        """The agent's last state as headspace last saw it, and since when (``History.remembered``)."""
        return self.history.remembered(key)

    def remembered_in_log(self, key: str) -> tuple[str, float] | None:
        return self.history.remembered_in_log(key)

    def timeline(self, key: str, limit: int = 200) -> list[StoredEvent]:
        """One agent's events (``key``: ``who(agent)``), oldest first."""
        return self.history.timeline(key, limit, self._history)

    def waited_today(self, agents: dict[str, Agent], now: float | None = None) -> float:
        """Seconds agents spent needing you since midnight (earlier runs included)."""
        return self.history.waited_today(agents, now)

    def spent(self, now: float, days: int) -> tuple[Spent, list[SpentRow]]:
        """What agents spent today, and per agent per day for the last ``days`` days (0: none), earlier runs included."""
        return self.ledger.today(now), self.ledger.days(now, days) if days else []

    def away(self, agents: list[Agent], ruled: list[dict], since: float) -> list[dict]:
        """What each agent did since ``since`` (away.py): its finished turns from the log's state changes, its spending from the ledger's."""
        return away(agents, self.writer.since(self.log, STATE, since), spent_since(self.ledger.since(since), since, spent_of), ruled, since)

    def close(self) -> None:
        self.writer.close()
        if self.log is not None and self.writer.log is None:  # a reading journal: the log is its own to close
            self.log.close()
