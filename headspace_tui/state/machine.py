"""The command state machine (PRD FR1, FR3, FR4, FR6, FR7, FR8, FR11), as pure functions.

Why pure: the machine decides what the dashboard says an agent is doing, so it
must be easy to prove right.  Every function here takes immutable values and
returns new ones plus a list of event dicts; nothing is stored in a module or
an object, nothing is written anywhere.  That gives the PRD's guarantees for
free:

* reentrant: no global mutable state; two threads can run two agents at once;
* atomic: a rejected turn returns the *same* ``AgentCommands`` object, so
  there is no partial update to undo (and a caller that fails to store the
  result has changed nothing either);
* idempotent: the ids of recent turns travel with the agent's value, so the
  same turn applied twice makes one transition.

The transition table is data (``TRANSITIONS``): every (state, actor, intent)
combination is listed, the invalid ones with the reason the validator gives,
so the tests can walk every row and the table can be printed for a human.

"complete" is where a command ends, not where an agent waits: the transition
into it sets ``completed_at`` and moves the command to ``history``, and the
agent's derived state (FR7) is ``idle`` again.  The ``complete`` rows of the
table therefore behave like ``idle`` and are only reached by ``validate``
called directly.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from .intent import AGENT_INTENTS, USER_INTENTS, IntentResult, TurnIntent, detect_intent, normalize_actor

log = logging.getLogger(__name__)

# How many recent turn ids an agent remembers for de-duplication, and how
# many finished commands it keeps.  Both bound memory for long-lived agents;
# a duplicate arrives right after the original (a transcript re-read, a hook
# and a tail reporting the same turn), far inside the window.
SEEN_TURNS = 512
HISTORY = 50


class CommandState(str, Enum):
    """The five states of a command (FR1)."""

    IDLE = "idle"
    COMMANDED = "commanded"
    PROCESSING = "processing"
    AWAITING_INPUT = "awaiting_input"
    COMPLETE = "complete"


class Actor(str, Enum):
    USER = "user"
    AGENT = "agent"


@dataclass(frozen=True)
class Rule:
    """One row of the transition table: where it leads, or why it is refused."""

    new_state: CommandState | None  # None: invalid
    reason: str

    @property
    def valid(self) -> bool:
        return self.new_state is not None


def _table() -> dict[tuple[CommandState, Actor, TurnIntent], Rule]:
    S, U, A, I = CommandState, Actor.USER, Actor.AGENT, TurnIntent  # noqa: E741 - the table reads as S/U/A/I
    ok = lambda to, why: Rule(to, why)  # noqa: E731
    no = lambda why: Rule(None, why)  # noqa: E731
    table = {
        (S.IDLE, U, I.COMMAND): ok(S.COMMANDED, "the user starts a command"),
        (S.IDLE, U, I.ANSWER): no("no question is pending"),
        (S.COMMANDED, A, I.PROGRESS): ok(S.PROCESSING, "the agent starts working"),
        (S.COMMANDED, A, I.QUESTION): ok(S.AWAITING_INPUT, "the agent asks before starting"),
        (S.COMMANDED, A, I.COMPLETION): ok(S.COMPLETE, "the agent finished at once"),
        (S.COMMANDED, U, I.COMMAND): no("waiting for the agent to respond"),
        (S.COMMANDED, U, I.ANSWER): no("waiting for the agent to respond"),
        (S.PROCESSING, A, I.PROGRESS): ok(S.PROCESSING, "the agent keeps working"),
        (S.PROCESSING, A, I.QUESTION): ok(S.AWAITING_INPUT, "the agent asks a question"),
        (S.PROCESSING, A, I.COMPLETION): ok(S.COMPLETE, "the agent finished"),
        (S.PROCESSING, U, I.COMMAND): no("the agent is working"),
        (S.PROCESSING, U, I.ANSWER): no("the agent is working"),
        (S.AWAITING_INPUT, U, I.ANSWER): ok(S.PROCESSING, "the user answers"),
        (S.AWAITING_INPUT, U, I.COMMAND): ok(S.COMMANDED, "the user starts a new command (the old one is abandoned)"),
        (S.COMPLETE, U, I.COMMAND): ok(S.COMMANDED, "the task ended; the user starts a command"),
        (S.COMPLETE, U, I.ANSWER): no("the task ended; no question is pending"),
    }
    for intent in sorted(AGENT_INTENTS, key=lambda i: i.value):
        table[(S.IDLE, A, intent)] = no("the agent cannot act when idle")
        table[(S.AWAITING_INPUT, A, intent)] = no("waiting for the user")
        table[(S.COMPLETE, A, intent)] = no("the task ended; the agent cannot act")
    return table


# Every (state, actor, intent) an actor can produce, valid or not: 5 states x (2 + 3) intents.
TRANSITIONS: dict[tuple[CommandState, Actor, TurnIntent], Rule] = _table()


@dataclass(frozen=True)
class Validation:
    """The validator's answer (FR4)."""

    valid: bool
    new_state: CommandState | None
    reason: str


def validate(state: Any, actor: Any, intent: Any) -> Validation:
    """May a turn by ``actor`` with ``intent`` happen in ``state``?  Pure; logs nothing.

    Accepts the enums or their string values.  An intent the actor cannot have
    (a user "question") or an unknown value is invalid, with the reason.
    """
    try:
        s = CommandState(getattr(state, "value", state))
        a = Actor(normalize_actor(actor))
        i = TurnIntent(getattr(intent, "value", intent))
    except ValueError as exc:
        return Validation(False, None, str(exc))
    allowed = USER_INTENTS if a is Actor.USER else AGENT_INTENTS
    if i not in allowed:
        return Validation(False, None, f"a {a.value} turn cannot have intent {i.value}")
    rule = TRANSITIONS[(s, a, i)]
    return Validation(rule.valid, rule.new_state, rule.reason)


# --------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class Turn:
    """One turn as the transcript tail or a hook reports it (FR9's turn_detected)."""

    id: str
    actor: str  # user | agent
    text: str | None = ""
    ts: float = field(default_factory=time.time)


@dataclass(frozen=True)
class Command:
    """One task the user gave.  ``id`` is the id of the turn that started it.

    Deriving the id from the turn (rather than a counter) keeps the machine
    pure and makes replays produce the same ids.
    """

    id: str
    text: str
    created_at: float
    state: CommandState = CommandState.COMMANDED
    completed_at: float | None = None
    abandoned_at: float | None = None

    @property
    def finished(self) -> bool:
        return self.completed_at is not None or self.abandoned_at is not None


@dataclass(frozen=True)
class AgentCommands:
    """Everything the machine knows about one agent; replaced, never mutated."""

    agent: str
    current: Command | None = None  # the active, incomplete command
    history: tuple[Command, ...] = ()  # completed or abandoned, oldest first
    recent_turns: tuple[str, ...] = ()
    active: bool = True  # False once its session ended (FR11)

    @property
    def state(self) -> CommandState:
        """FR7: the current command's state, or idle when there is none."""
        return self.current.state if self.current is not None else CommandState.IDLE

    def seen(self, turn_id: str) -> bool:
        return turn_id in self.recent_turns


Event = dict[str, Any]


# --------------------------------------------------------------------------
# Applying turns


def apply_turn(agent: AgentCommands, turn: Turn, *, intent: IntentResult | None = None, trigger: str = "turn") -> tuple[AgentCommands, list[Event]]:
    """The agent after ``turn``, and the events it caused.

    ``intent`` overrides detection (a hook knows for sure that a turn ended);
    otherwise the intent is detected from the text in the current state.
    A duplicate turn returns ``(agent, [])``; an invalid one returns the same
    ``agent`` and one ``transition_rejected`` event, logged at WARNING.
    """
    if agent.seen(turn.id):
        log.debug("agent %s: turn %s already applied", agent.agent, turn.id)
        return agent, []
    before = agent.state
    found = intent or detect_intent(turn.actor, turn.text, before)
    verdict = validate(before, turn.actor, found.intent)
    command_id = agent.current.id if agent.current is not None else None
    if not verdict.valid:
        log.warning(
            "agent %s: rejected %s %s in state %s (turn %s): %s",
            agent.agent,
            turn.actor,
            found.intent.value,
            before.value,
            turn.id,
            verdict.reason,
        )
        return agent, [
            {
                "kind": "transition_rejected",
                "agent": agent.agent,
                "command": command_id,
                "from": before.value,
                "actor": str(getattr(turn.actor, "value", turn.actor)),
                "intent": found.intent.value,
                "turn": turn.id,
                "reason": verdict.reason,
                "confidence": found.confidence,
            }
        ]

    new_state = verdict.new_state
    assert new_state is not None
    events: list[Event] = []
    history = agent.history
    current = agent.current
    if found.intent is TurnIntent.COMMAND:
        if current is not None:  # a new command while one waits: the old one is abandoned (FR11)
            history = _keep(history, replace(current, abandoned_at=turn.ts))
            events.append({"kind": "command_abandoned", "agent": agent.agent, "command": current.id, "state": current.state.value, "turn": turn.id})
        current = Command(id=turn.id, text=turn.text or "", created_at=turn.ts)
    else:
        assert current is not None  # every valid non-command row has an active command
        current = replace(current, state=new_state)
    if new_state is CommandState.COMPLETE:
        history = _keep(history, replace(current, completed_at=turn.ts))
        finished_id, current = current.id, None
    else:
        finished_id = current.id
    events.append(
        {
            "kind": "state_transition",
            "agent": agent.agent,
            "command": finished_id,
            "from": before.value,
            "to": new_state.value,
            "trigger": trigger,
            "confidence": found.confidence,
            "intent": found.intent.value,
            "turn": turn.id,
        }
    )
    log.info("agent %s: %s -> %s (%s, turn %s)", agent.agent, before.value, new_state.value, found.intent.value, turn.id)
    after = replace(agent, current=current, history=history, recent_turns=(agent.recent_turns + (turn.id,))[-SEEN_TURNS:], active=True)
    return after, events


def apply_turns(agent: AgentCommands, turns: Iterable[Turn]) -> tuple[AgentCommands, list[Event]]:
    """Apply turns in order, each validated against the state the previous one left (FR11)."""
    events: list[Event] = []
    for turn in turns:
        agent, more = apply_turn(agent, turn)
        events.extend(more)
    return agent, events


# What Claude Code writes into its transcript, as a user line, when the user
# stops it with Esc: "[Request interrupted by user]", or "... for tool use]"
# when a tool call was running or waiting (2.1.330).
INTERRUPT_MARK = "[Request interrupted by user"


def is_interrupt(text: str | None) -> bool:
    """Is this user turn Claude's note that the user interrupted it (not words the user typed)?"""
    return text is not None and text.lstrip().startswith(INTERRUPT_MARK)


def interrupt(agent: AgentCommands, turn: Turn) -> tuple[AgentCommands, list[Event]]:
    """The user interrupted the agent (``turn`` is Claude's interrupt note): the current command ends there.

    Whatever its state (commanded, processing, awaiting input), the command
    is abandoned and the agent is idle: nothing the agent does after an
    interrupt belongs to that command, and the user's next words start a new
    one.  Read as a turn of the table, the note is a user "command" that
    ``commanded`` and ``processing`` reject, and the command stayed where it
    was until the agent spoke again (after Esc, a nudge and Esc, an agent
    sat idle at its box for minutes still "commanded").  Idempotent like
    ``apply_turn``; an interrupt with no command running changes nothing.
    """
    if agent.seen(turn.id):
        return agent, []
    seen = (agent.recent_turns + (turn.id,))[-SEEN_TURNS:]
    current = agent.current
    if current is None:
        return replace(agent, recent_turns=seen), []
    log.info("agent %s: %s -> idle (interrupted, turn %s)", agent.agent, current.state.value, turn.id)
    event: Event = {
        "kind": "command_interrupted",
        "agent": agent.agent,
        "command": current.id,
        "from": current.state.value,
        "to": CommandState.IDLE.value,
        "turn": turn.id,
    }
    after = replace(agent, current=None, history=_keep(agent.history, replace(current, abandoned_at=turn.ts)), recent_turns=seen, active=True)
    return after, [event]


def end_session(agent: AgentCommands, *, ts: float | None = None, reason: str = "session ended") -> tuple[AgentCommands, list[Event]]:
    """The agent's process is gone (a crash, ``/exit``, a closed pane): mark it inactive (FR11).

    The command stays in the state it was in: we do not know how far it got,
    and pretending it completed would hide unfinished work.  Ending an
    already inactive agent changes nothing.
    """
    if not agent.active:
        return agent, []
    command = agent.current
    log.info("agent %s: session ended in state %s (%s)", agent.agent, agent.state.value, reason)
    event: Event = {
        "kind": "agent_inactive",
        "agent": agent.agent,
        "command": command.id if command is not None else None,
        "state": agent.state.value,
        "reason": reason,
        "ts": time.time() if ts is None else ts,
    }
    return replace(agent, active=False), [event]


def _keep(history: tuple[Command, ...], command: Command) -> tuple[Command, ...]:
    return (history + (command,))[-HISTORY:]
