"""What headspace remembers: state changes, commands and outcomes, per agent.

The monitor tells the journal when an agent's state changes and hands it the
new transcript turns; the journal runs the PRD's command state machine over
the turns, picks out outcomes (tests passed, commits, errors ...) and writes
everything to the event log.  It also answers the two questions the UI asks
of history: an agent's timeline, and how long agents waited on you today.

Without an event log (it could not be opened) the journal still keeps the
session's history in memory, so the app works; it just forgets on exit.

Histories are keyed by the agent's identity (``Agent.key``: host, tmux
server, pane and Claude process), never by ``%N`` alone: every tmux server
has a ``%1``, and the next pane reuses a closed one's id.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from ..detect import turns as transcript
from ..detect.clock import needs_you, same_spell
from ..detect.outcome import Outcome, analyze, last_outcome
from ..events import AgentChanged, AgentRemoved, Answered, Event
from ..model import Agent, AgentState
from ..state.eventlog import EventLog, EventLogError, StoredEvent
from ..state.intent import IntentResult, TurnIntent, detect_intent
from ..state.machine import AgentCommands, CommandState, Turn, apply_turn, end_session, interrupt, is_interrupt
from .evidence import KEPT_USES, AnswerEvidence, Confirmation

MEMORY_EVENTS = 500  # per agent, when there is no log
ENDED_KEPT = 100  # agents that are gone whose recent in-memory events are kept (for a timeline without a log)
UNWRITTEN_CAP = 20_000  # events kept while the log cannot be written (answers are never dropped)
REPLAYED_CALL_TURNS = 4 * KEPT_USES  # a replay's last lines read for their tool calls
AUDIT_KINDS = ("answer", "answer_evidence")  # never dropped from the backlog of a log that cannot be written
RETRY_FIRST, RETRY_MAX = 2.0, 30.0  # seconds before writing to a failing log again, doubling
ASKING_TOOLS = ("AskUserQuestion", "ExitPlanMode")  # tool calls that put a question to the user

log = logging.getLogger(__name__)


@dataclass
class AgentHistory:
    commands: AgentCommands
    changes: list[tuple[float, str, str]] = field(default_factory=list)  # (at, from, to)
    events: list[StoredEvent] = field(default_factory=list)  # in-memory copy (no log)
    outcome: Outcome | None = None


def who(agent: Agent) -> str:
    """The key an agent's history is kept under (its pane id where it has no identity: replays, tests)."""
    return agent.key or agent.pane_id


def _work(history: AgentHistory) -> tuple[str, str]:
    """An agent's current (or last) command and its last outcome, as the row shows them."""
    current = history.commands.current
    command = current.text if current is not None else (history.commands.history[-1].text if history.commands.history else "")
    return command, history.outcome.describe() if history.outcome is not None else ""


def start_of_day(now: float) -> float:
    today = dt.datetime.fromtimestamp(now).date()
    return dt.datetime.combine(today, dt.time()).timestamp()


class Journal:
    def __init__(self, log: EventLog | None, clock: Callable[[], float] = time.time) -> None:
        self.log = log
        self.clock = clock
        self.agents: dict[str, AgentHistory] = {}  # agents that are here now
        self._ended: OrderedDict[str, list[StoredEvent]] = OrderedDict()  # the last ENDED_KEPT gone agents' events
        self.evidence = AnswerEvidence(clock)  # answers waiting for Claude's word on who was first
        self._waited_before: dict[str, float] = {}  # agent key -> needs-you seconds today, from earlier runs
        self._waited_ended = 0.0  # needs-you seconds today of agents that have gone since
        self._open_before: dict[str, tuple[float, str]] = {}  # agent key -> (since, state) of a wait an earlier run left open
        self._away: dict[str, float] = {}  # agent key -> start of such a wait that ended before this run found the agent again
        # Writing to the log can fail for a while (a full disk): what could not be written waits
        # here, in order, and goes out at the next try; the user is told once, and once more when
        # it is written.
        self._unwritten: deque[dict] = deque()
        self._failing: str | None = None
        self._retry_at = 0.0
        self._retry_gap = RETRY_FIRST
        self.on_notice: Callable[[str], None] = lambda text: None  # one line for the user (the monitor wires it)
        if log is not None:
            self._load_today()

    @classmethod
    def open(cls, path=None, clock: Callable[[], float] = time.time) -> tuple[Journal, str | None]:
        """A journal on the event log at ``path``; on failure, a memory-only one and the reason."""
        try:
            return cls(EventLog(path), clock), None
        except EventLogError as exc:
            return cls(None, clock), f"event log disabled: {exc}"

    def _history(self, key: str) -> AgentHistory:
        history = self.agents.get(key)
        if history is None:
            history = self.agents[key] = AgentHistory(AgentCommands(agent=key))
        return history

    def _write(self, events: list[dict]) -> None:
        if not events:
            return
        now = self.clock()
        for event in events:
            event.setdefault("ts", now)
        if self.log is None:
            self._remember(events)
            return
        self._unwritten.extend(events)  # until written: the timeline shows them from there (one copy)
        self.flush(now)

    def _remember(self, events: list[dict]) -> None:
        """Keep events in memory (no log, or a log that cannot be written now): a bounded timeline."""
        for event in events:
            stored = _stored(event)
            key = stored.agent or ""
            history = self.agents.get(key)
            if history is None and key in self._ended:
                self._ended[key] = (self._ended[key] + [stored])[-MEMORY_EVENTS:]
                continue
            history = self._history(key)
            history.events = (history.events + [stored])[-MEMORY_EVENTS:]

    def flush(self, now: float | None = None, *, force: bool = False) -> None:
        """Write what waits to the log: at once while it works; after a failure, at most every few seconds.

        A failing write (a full disk, an I/O error, a log made read-only)
        keeps the events, tells the user once, and is tried again after 2 s,
        doubling to 30 s; when it works again everything kept is written in
        order and the user is told.  Past UNWRITTEN_CAP events the oldest
        that are not answers are dropped: the audit of answers is kept whole.
        """
        if self.log is None or not self._unwritten:
            return
        now = self.clock() if now is None else now
        if self._failing is not None and now < self._retry_at and not force:
            self._bound_unwritten()
            return
        batch = list(self._unwritten)
        try:
            self.log.write_many(batch)
        except EventLogError as exc:
            if self._failing is None:
                log.warning("event log write failed; keeping events in memory: %s", exc)
                self.on_notice(f"{exc}; headspace keeps what happens in memory and writes it when it can")
            self._failing = str(exc)
            self._retry_at = now + self._retry_gap
            self._retry_gap = min(RETRY_MAX, self._retry_gap * 2)
            self._bound_unwritten()
            return
        self._unwritten.clear()
        if self._failing is not None:
            log.info("event log writing again (%d events kept meanwhile)", len(batch))
            self.on_notice(f"event log writing again: {len(batch)} events kept meanwhile are saved")
        self._failing = None
        self._retry_gap = RETRY_FIRST

    def _bound_unwritten(self) -> None:
        if len(self._unwritten) <= UNWRITTEN_CAP:
            return
        kept = [e for e in self._unwritten if e.get("kind") in AUDIT_KINDS]
        others = [e for e in self._unwritten if e.get("kind") not in AUDIT_KINDS]
        room = max(0, UNWRITTEN_CAP - len(kept))
        keep_ids = {id(e) for e in kept} | {id(e) for e in others[len(others) - room :]}
        self._unwritten = deque(e for e in self._unwritten if id(e) in keep_ids)

    # -- what the monitor reports ------------------------------------------------
    def on_event(self, event: Event) -> None:
        """The journal subscribes to the monitor: state changes, answers, agents gone (turns it is handed: ``turns``)."""
        if isinstance(event, AgentChanged) and event.state_changed:
            self.state_changed(event.agent, event.old_state, event.agent.state, event.at)
        elif isinstance(event, AgentChanged):
            self.clock_moved(event.agent, event.at)
        elif isinstance(event, Answered):
            self.answered(event)
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
        history = self.agents.pop(key, None)
        if history is None:
            return
        now = self.clock()
        self._waited_ended += _needs_you_seconds(history.changes, start_of_day(now), now) + self._waited_away(key, history, start_of_day(now))
        self._away.pop(key, None)
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
        self._write(
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
                    "delivered": event.delivered,
                    "outcome": event.outcome,
                },
                *self._evidence_events(event.agent, found),
            ]
        )

    def state_changed(self, agent: Agent, old: AgentState | None, new: AgentState, at: float) -> None:
        """A state began: kept (and logged) at its claim, ``agent.since``, the time its row counts from."""
        key = who(agent)
        history = self._history(key)
        since = agent.since or at  # an agent with no claim (a replay) counts from when the change was told
        history.changes.append((since, old.value if old else "", new.value))
        if old is None:
            self._found_again(key, new, since)
        if old is None and self._last_logged_state(key) == new.value:
            # Headspace restarted and found the agent as it left it: nothing happened,
            # unless this run dates the state otherwise (Claude's word, read now).
            logged = self.remembered_in_log(key)
            if logged is not None and abs(logged[1] - since) >= 0.5:
                self._write([{"kind": "agent_clock", "agent": key, "state": new.value, "since": since, "since_source": agent.since_source}])
            return
        evidence = agent.observation.evidence[0] if agent.observation.evidence else None
        ended: list[dict] = []
        if new is AgentState.EXITED:
            # Claude is gone (exit, crash, closed pane): its command stays where it was (PRD FR11).
            history.commands, ended = end_session(history.commands, ts=at, reason=evidence.rule if evidence else "exited")
        self._write(
            [
                *ended,
                {
                    "kind": "agent_state",
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
                }
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
            self._write([{"kind": "agent_clock", "agent": key, "state": new, "since": agent.since, "since_source": agent.since_source}])

    def _found_again(self, key: str, state: AgentState, since: float) -> None:
        """An agent seen again after a restart: a wait an earlier run left open ends where its next state began.

        Found in the same state, the wait is still on: this run counts it
        whole, from its claim (which the journal's ``remembered`` gave the
        clock), so nothing of it is added here.
        """
        opened = self._open_before.pop(key, None)
        if opened is not None and not same_spell(opened[1], state.value):
            # Counted up to this run's first state's claim, read when the total is
            # asked: the transcript may date that state earlier a moment from now.
            self._away[key] = opened[0]

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

    def turns(self, agent: Agent, turns: list[transcript.Turn], *, record: bool = True) -> tuple[str, str]:
        """Run new transcript turns through the command machine; note outcomes; the agent's (command, outcome) after them.

        The agent is only read: the store is its one writer, and applies
        what this returns (``AgentStore.work``).

        ``record=False`` replays history (at start-up) without writing events.
        Only the last outcome of a replay is shown, so its texts are analysed
        newest first, stopping at the first that proves something: a long
        history then costs one or two analyses instead of thousands.
        """
        history = self._history(who(agent))
        events: list[dict] = []
        texts: list[str] = []  # a replay's texts that may hold an outcome
        for line in turns:
            ts = turn_time(line) or self.clock()
            if line.role == "tool_result":
                if history.commands.state is CommandState.AWAITING_INPUT:
                    # The answer to a question dialog comes back as the tool's result.
                    turn = Turn(id=line.uuid or f"r{ts}", actor="user", text=line.text, ts=ts)
                    history.commands, more = apply_turn(history.commands, turn, intent=IntentResult(TurnIntent.ANSWER, 1.0, "dialog answer", "tool-result"))
                    events.extend(more)
                elif record:
                    self._outcome(agent, history, line.text, ts, events)
                else:
                    texts.append(line.text)
                continue
            if line.role == "user":
                turn = Turn(id=line.uuid or f"u{ts}", actor="user", text=line.text, ts=ts)
                stop = interrupt if is_interrupt(line.text) else apply_turn  # Esc ends the command, in whatever state
                history.commands, more = stop(history.commands, turn)
            elif line.role == "agent":
                turn = Turn(id=line.uuid or f"a{ts}", actor="agent", text=line.text, ts=ts)
                history.commands, more = apply_turn(history.commands, turn, intent=_agent_intent(line, history.commands))
                if line.text and record:
                    self._outcome(agent, history, line.text, ts, events)
                elif line.text:
                    texts.append(line.text)
            else:
                continue
            events.extend(more)
        found = last_outcome(texts)
        if found is not None:
            history.outcome = found
        if record:
            events.extend(self._evidence_events(agent, self.evidence.turns(who(agent), turns)))
            self._write(events)
        return _work(history)

    def _evidence_events(self, agent: Agent, confirmed: list[Confirmation]) -> list[dict]:
        return [
            {
                "kind": "answer_evidence",
                "agent": who(agent),
                "ts": self.clock(),
                "pane": agent.pane_id,
                "target": agent.target,
                "channel": found.answer.channel,
                "answered_at": found.answer.at,
                "tool": found.tool,  # the call as Claude's transcript has it
                "input": found.tool_input,
                "tool_use_id": found.tool_use_id,
                "first": found.first,
                "evidence": found.evidence,
                "claude_said": found.said,
            }
            for found in confirmed
        ]

    def replayed(self, agent: Agent, turns: list[transcript.Turn]) -> Callable[[], tuple[str, str]]:
        """Replay history (turns from before headspace started) without touching the journal.

        Safe to call off the event loop: a long transcript takes tens of
        milliseconds through the command machine.  Returns the step that
        adopts the result, to be run on the loop; it gives the agent's
        (command, outcome) for the store to apply.
        """
        scratch = Journal(None, self.clock)
        work = scratch.turns(agent, turns, record=False)
        replayed = scratch._history(who(agent))
        # The last calls, so that an answer to a dialog up at start-up meets its call.
        scratch.evidence.turns(who(agent), turns[-REPLAYED_CALL_TURNS:])

        def adopt() -> tuple[str, str]:
            history = self._history(who(agent))
            history.commands, history.outcome = replayed.commands, replayed.outcome
            self.evidence.adopt(who(agent), scratch.evidence)
            return work

        return adopt

    def _outcome(self, agent: Agent, history: AgentHistory, text: str, ts: float, events: list) -> None:
        found = analyze(text)
        if not found or found[0] == history.outcome:
            return  # nothing, or the reply restating what the tool output showed
        history.outcome = found[0]
        events.append({"kind": "outcome", "agent": who(agent), "ts": ts, "outcome": found[0].kind, "detail": found[0].detail})

    # -- what the UI asks -----------------------------------------------------------
    def timeline(self, key: str, limit: int = 200) -> list[StoredEvent]:
        """One agent's events (``key``: ``who(agent)``), oldest first."""
        if self.log is not None:
            waiting = [_stored(e) for e in self._unwritten if e.get("agent") == key]  # a full disk's backlog
            try:
                return (self.log.query(agent=key, limit=limit) + waiting)[-limit:]
            except EventLogError:
                return waiting[-limit:]
        if key not in self.agents and key in self._ended:
            return self._ended[key][-limit:]
        return self._history(key).events[-limit:]

    def _last_logged_state(self, key: str) -> str | None:
        if self.log is None:
            return None
        try:
            rows = self.log.query(agent=key, kind="agent_state", limit=1)
        except EventLogError:
            return None
        return rows[-1].payload.get("to") if rows else None

    def waited_today(self, agents: dict[str, Agent], now: float | None = None) -> float:
        """Seconds agents spent needing you since midnight (earlier runs included)."""
        now = self.clock() if now is None else now
        midnight = start_of_day(now)
        live = {who(agent) for agent in agents.values()}
        total = sum(self._waited_before.values()) + self._waited_ended
        for key, history in self.agents.items():
            total += _needs_you_seconds(history.changes, midnight, now if key in live else None) + self._waited_away(key, history, midnight)
        return total

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
            self._waited_before[key] = _needs_you_seconds(changes, midnight, None)
            at, _, state = changes[-1] if changes else (0.0, "", "")
            if needs_you(state):
                self._open_before[key] = (at, state)

    def close(self) -> None:
        if self.log is not None:
            self.flush(force=True)  # a last try for what waits (a disk that has room again)
            self.log.close()


def _stored(event: dict) -> StoredEvent:
    """An event as the log would give it back (id 0: not in the log)."""
    rest = dict(event)
    return StoredEvent(0, rest.pop("ts"), rest.pop("agent", None), rest.pop("kind"), rest)


def _number(value: object, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _since(row: StoredEvent) -> float:
    """When a logged state began: its claim (``since``), or, in a log written before there was one, when it was seen."""
    return _number(row.payload.get("since"), row.ts)


def _needs_you_seconds(changes: list[tuple[float, str, str]], since: float, open_until: float | None) -> float:
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


def _agent_intent(line: transcript.Turn, commands: AgentCommands) -> IntentResult | None:
    """A reply that ends the turn (stop_reason end_turn) completes the command unless it asks.

    The transcript knows the turn ended; a regex that calls the last words
    "progress" would leave the command stuck in processing.
    """
    if any(name in ASKING_TOOLS for name, _ in line.tool_uses):
        return IntentResult(TurnIntent.QUESTION, 1.0, "question dialog", "asking-tool")
    if line.tool_uses and not line.text:
        return IntentResult(TurnIntent.PROGRESS, 1.0, "tool use", "tool-use")
    if line.stop_reason == "end_turn":
        found = detect_intent("agent", line.text, commands.state)
        if found.intent is TurnIntent.PROGRESS:
            return IntentResult(TurnIntent.COMPLETION, 0.8, "end_turn", "turn-ended")
        return found
    return None


def turn_time(line: transcript.Turn) -> float | None:
    """When Claude wrote a transcript line (its ISO timestamp), or None."""
    if not line.timestamp:
        return None
    try:
        return dt.datetime.fromisoformat(line.timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
