"""The journal's command tracker: transcript turns through the command machine, and the outcomes in them.

The monitor hands the journal an agent's new transcript turns; this runs the
PRD's command state machine over them (what the user asked, whether the
agent is on it, finished it, or asks back), picks out outcomes (tests
passed, commits, errors ...) and meets answers with Claude's word on them
(``evidence.py``).  It writes through the journal's writer and keeps its
state in the journal's per-agent histories.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from ...detect import turns as transcript
from ...detect.outcome import Outcome, analyze, last_outcome
from ...model import Agent
from ...state.eventlog import StoredEvent
from ...state.intent import IntentResult, TurnIntent, detect_intent
from ...state.machine import AgentCommands, CommandState, Turn, apply_turn, interrupt, is_interrupt
from .event_writer import EventWriter
from .evidence import KEPT_USES, AnswerEvidence, Confirmation

REPLAYED_CALL_TURNS = 4 * KEPT_USES  # a replay's last lines read for their tool calls
ASKING_TOOLS = ("AskUserQuestion", "ExitPlanMode")  # tool calls that put a question to the user


@dataclass
class AgentHistory:
    commands: AgentCommands
    changes: list[tuple[float, str, str]] = field(default_factory=list)  # (at, from, to)
    events: list[StoredEvent] = field(default_factory=list)  # in-memory copy (no log)
    outcome: Outcome | None = None


def who(agent: Agent) -> str:
    """The key an agent's history is kept under (its pane id where it has no identity: replays, tests)."""
    return agent.key or agent.pane_id


def work(history: AgentHistory) -> tuple[str, str]:
    """An agent's current (or last) command and its last outcome, as the row shows them."""
    current = history.commands.current
    command = current.text if current is not None else (history.commands.history[-1].text if history.commands.history else "")
    return command, history.outcome.describe() if history.outcome is not None else ""


class CommandTracker:
    def __init__(self, history: Callable[[str], AgentHistory], writer: EventWriter, clock: Callable[[], float]) -> None:
        self._history = history  # the journal's history of an agent, made on first use
        self.writer = writer
        self.clock = clock
        self.evidence = AnswerEvidence(clock)  # answers waiting for Claude's word on who was first

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
            events.extend(self.evidence_events(agent, self.evidence.turns(who(agent), turns)))
            self.writer.write(events)
        return work(history)

    def evidence_events(self, agent: Agent, confirmed: list[Confirmation]) -> list[dict]:
        """Claude's word on answers (``answer_evidence`` events): which call each answered, and who was first."""
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
        histories: dict[str, AgentHistory] = {}

        def scratch_history(key: str) -> AgentHistory:
            return histories.setdefault(key, AgentHistory(AgentCommands(agent=key)))

        scratch = CommandTracker(scratch_history, EventWriter(None, self.clock, lambda events: None), self.clock)
        done = scratch.turns(agent, turns, record=False)
        replayed = scratch_history(who(agent))
        # The last calls, so that an answer to a dialog up at start-up meets its call.
        scratch.evidence.turns(who(agent), turns[-REPLAYED_CALL_TURNS:])

        def adopt() -> tuple[str, str]:
            history = self._history(who(agent))
            history.commands, history.outcome = replayed.commands, replayed.outcome
            self.evidence.adopt(who(agent), scratch.evidence)
            return done

        return adopt

    def _outcome(self, agent: Agent, history: AgentHistory, text: str, ts: float, events: list) -> None:
        found = analyze(text)
        if not found or found[0] == history.outcome:
            return  # nothing, or the reply restating what the tool output showed
        history.outcome = found[0]
        events.append({"kind": "outcome", "agent": who(agent), "ts": ts, "outcome": found[0].kind, "detail": found[0].detail})


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
