"""The command state machine against the PRD: every row of FR3, the lifecycle, the edge cases.

The transition table is data (``machine.TRANSITIONS``), so the tests walk
every row of it; ``PRD_FR3`` below is the PRD's table typed in again by hand,
so a wrong row in the code cannot pass by agreeing with itself.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor

import pytest

from headspace_tui.state import machine
from headspace_tui.state.intent import IntentResult, TurnIntent
from headspace_tui.state.machine import (
    TRANSITIONS,
    Actor,
    AgentCommands,
    CommandState,
    Turn,
    apply_turn,
    apply_turns,
    end_session,
    validate,
)

S, I = CommandState, TurnIntent  # noqa: E741 - the table reads as S/I
USER_INTENTS = (I.COMMAND, I.ANSWER)
AGENT_INTENTS = (I.PROGRESS, I.QUESTION, I.COMPLETION)

# FR3 as written in the PRD: (state, actor, intent or "*") -> new state, or None when invalid.
PRD_FR3 = [
    (S.IDLE, "user", I.COMMAND, S.COMMANDED),
    (S.IDLE, "user", I.ANSWER, None),
    (S.IDLE, "agent", "*", None),
    (S.COMMANDED, "agent", I.PROGRESS, S.PROCESSING),
    (S.COMMANDED, "agent", I.QUESTION, S.AWAITING_INPUT),
    (S.COMMANDED, "agent", I.COMPLETION, S.COMPLETE),
    (S.COMMANDED, "user", "*", None),
    (S.PROCESSING, "agent", I.PROGRESS, S.PROCESSING),
    (S.PROCESSING, "agent", I.QUESTION, S.AWAITING_INPUT),
    (S.PROCESSING, "agent", I.COMPLETION, S.COMPLETE),
    (S.PROCESSING, "user", "*", None),
    (S.AWAITING_INPUT, "user", I.ANSWER, S.PROCESSING),
    (S.AWAITING_INPUT, "user", I.COMMAND, S.COMMANDED),
    (S.AWAITING_INPUT, "agent", "*", None),
]


def expand(rows):
    for state, actor, intent, new in rows:
        intents = (USER_INTENTS if actor == "user" else AGENT_INTENTS) if intent == "*" else (intent,)
        for one in intents:
            yield state, actor, one, new


PRD_ROWS = list(expand(PRD_FR3))
VALID = [(k, r) for k, r in TRANSITIONS.items() if r.valid]
INVALID = [(k, r) for k, r in TRANSITIONS.items() if not r.valid]


def row_id(key) -> str:
    state, actor, intent = key
    return f"{state.value}-{actor.value}-{intent.value}"


def sure(intent: TurnIntent) -> IntentResult:
    return IntentResult(intent, 1.0, "", "test")


_ids = iter(range(1, 1_000_000))


def turn(actor: str, text: str = "", ts: float | None = None) -> Turn:
    n = next(_ids)
    return Turn(id=f"t{n}", actor=actor, text=text, ts=float(n) if ts is None else ts)


def agent_in(state: CommandState, name: str = "agent-1") -> AgentCommands:
    """An agent driven into ``state`` by real turns (complete is where a command ends: idle)."""
    agent = AgentCommands(name)
    path = {
        S.IDLE: [],
        S.COMPLETE: [("user", I.COMMAND), ("agent", I.COMPLETION)],
        S.COMMANDED: [("user", I.COMMAND)],
        S.PROCESSING: [("user", I.COMMAND), ("agent", I.PROGRESS)],
        S.AWAITING_INPUT: [("user", I.COMMAND), ("agent", I.QUESTION)],
    }[state]
    for actor, intent in path:
        agent, _ = apply_turn(agent, turn(actor, f"{actor} {intent.value}"), intent=sure(intent))
    return agent


# --------------------------------------------------------------------------
# The table itself


def test_the_table_lists_every_state_actor_intent_combination():
    expected = {(s, Actor.USER, i) for s in S for i in USER_INTENTS} | {(s, Actor.AGENT, i) for s in S for i in AGENT_INTENTS}
    assert set(TRANSITIONS) == expected
    assert len(TRANSITIONS) == 25
    assert all(rule.reason for rule in TRANSITIONS.values()), "every row says why"


@pytest.mark.parametrize("state,actor,intent,new", PRD_ROWS, ids=[f"{s.value}-{a}-{i.value}" for s, a, i, _ in PRD_ROWS])
def test_the_table_says_what_the_prd_says(state, actor, intent, new):
    assert TRANSITIONS[(state, Actor(actor), intent)].new_state == new


@pytest.mark.parametrize("intent", USER_INTENTS + AGENT_INTENTS, ids=lambda i: i.value)
def test_complete_means_the_task_ended(intent):
    """FR3's last row: from complete only a new command is valid (it behaves like idle)."""
    actor = "user" if intent in USER_INTENTS else "agent"
    result = validate(S.COMPLETE, actor, intent)
    assert result.valid == (intent is I.COMMAND)
    assert result.valid == validate(S.IDLE, actor, intent).valid


# --------------------------------------------------------------------------
# The validator (FR4)


@pytest.mark.parametrize("key,rule", VALID, ids=[row_id(k) for k, _ in VALID])
def test_validate_accepts_every_valid_row(key, rule):
    state, actor, intent = key
    result = validate(state, actor, intent)
    assert result.valid and result.new_state is rule.new_state and result.reason == rule.reason
    # Plain strings work as well as the enums.
    assert validate(state.value, actor.value, intent.value) == result


@pytest.mark.parametrize("key,rule", INVALID, ids=[row_id(k) for k, _ in INVALID])
def test_validate_rejects_every_invalid_row_with_its_reason(key, rule):
    state, actor, intent = key
    result = validate(state, actor, intent)
    assert not result.valid and result.new_state is None
    assert result.reason == rule.reason and result.reason


@pytest.mark.parametrize("actor,intent", [("user", I.QUESTION), ("user", I.PROGRESS), ("user", I.COMPLETION), ("agent", I.COMMAND), ("agent", I.ANSWER)])
def test_validate_rejects_an_intent_the_actor_cannot_have(actor, intent):
    result = validate(S.PROCESSING, actor, intent)
    assert not result.valid and f"cannot have intent {intent.value}" in result.reason


@pytest.mark.parametrize("state,actor,intent", [("sleeping", "user", "command"), ("idle", "robot", "command"), ("idle", "user", "shout")])
def test_validate_rejects_unknown_values_without_raising(state, actor, intent):
    result = validate(state, actor, intent)
    assert not result.valid and result.reason


# --------------------------------------------------------------------------
# Applying every row to a real agent value


@pytest.mark.parametrize("key,rule", VALID, ids=[row_id(k) for k, _ in VALID])
def test_every_valid_row_applies(key, rule):
    state, actor, intent = key
    before = agent_in(state)
    t = turn(actor.value, "some text")
    after, events = apply_turn(before, t, intent=sure(intent))
    transitions = [e for e in events if e["kind"] == "state_transition"]
    assert len(transitions) == 1
    event = transitions[0]
    # complete is where a command ends: the agent's derived state is idle again (FR6, FR7).
    assert after.state is (S.IDLE if rule.new_state is S.COMPLETE else rule.new_state)
    assert (event["from"], event["to"]) == (before.state.value, rule.new_state.value)
    assert event["turn"] == t.id and event["trigger"] == "turn" and event["confidence"] == 1.0


@pytest.mark.parametrize("key,rule", [(k, r) for k, r in INVALID if k[0] is not S.COMPLETE], ids=[row_id(k) for k, r in INVALID if k[0] is not S.COMPLETE])
def test_every_invalid_row_is_rejected_logged_and_changes_nothing(key, rule, caplog):
    state, actor, intent = key
    before = agent_in(state)
    snapshot = repr(before)
    t = turn(actor.value, "some text")
    with caplog.at_level(logging.WARNING, logger="headspace_tui.state.machine"):
        after, events = apply_turn(before, t, intent=sure(intent))
    assert after is before and repr(after) == snapshot, "a rejected turn changes nothing"
    assert not after.seen(t.id)
    assert [e["kind"] for e in events] == ["transition_rejected"]
    event = events[0]
    assert event["from"] == state.value and event["intent"] == intent.value and event["reason"] == rule.reason
    assert event["agent"] == "agent-1" and event["turn"] == t.id
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and rule.reason in warnings[0].getMessage()


def test_agent_speaking_when_idle_is_rejected_with_detected_intent():
    idle = AgentCommands("a")
    for text in ("Let me look at that.", "Done — the build is green.", "Should I go ahead?"):
        after, events = apply_turn(idle, turn("agent", text))
        assert after is idle and events[0]["kind"] == "transition_rejected"
        assert events[0]["reason"] == "the agent cannot act when idle"


@pytest.mark.parametrize("state", [S.COMMANDED, S.PROCESSING])
def test_user_speaking_while_the_agent_has_the_turn_is_rejected(state):
    busy = agent_in(state)
    after, events = apply_turn(busy, turn("user", "hurry up please"))  # detected: command
    assert after is busy
    assert events[0]["kind"] == "transition_rejected" and events[0]["intent"] == "command"


# --------------------------------------------------------------------------
# Lifecycle (FR6, FR7) with detected intents


def test_happy_path_with_detected_intents():
    agent = AgentCommands("a")
    agent, e1 = apply_turn(agent, Turn("u1", "user", "fix the flaky test", ts=100.0))
    assert agent.state is S.COMMANDED
    command = agent.current
    assert (command.id, command.text, command.created_at, command.completed_at) == ("u1", "fix the flaky test", 100.0, None)
    agent, _ = apply_turn(agent, Turn("a1", "agent", "Let me run the tests first.", ts=101.0))
    assert agent.state is S.PROCESSING
    agent, _ = apply_turn(agent, Turn("a2", "agent", "It's timing-dependent. Should I add a retry or mock the clock?", ts=102.0))
    assert agent.state is S.AWAITING_INPUT
    agent, e4 = apply_turn(agent, Turn("u2", "user", "mock the clock", ts=103.0))
    assert agent.state is S.PROCESSING and e4[0]["intent"] == "answer"
    agent, e5 = apply_turn(agent, Turn("a3", "agent", "Done — the test now uses a fake clock and passes 100 runs in a row.", ts=104.0))
    assert agent.state is S.IDLE and agent.current is None
    (finished,) = agent.history
    assert finished.id == "u1" and finished.state is S.COMPLETE and finished.completed_at == 104.0
    assert e5[0]["to"] == "complete" and e5[0]["command"] == "u1"
    # After completion the next user turn starts a new command.
    agent, _ = apply_turn(agent, Turn("u3", "user", "now update the changelog", ts=105.0))
    assert agent.state is S.COMMANDED and agent.current.id == "u3"


def test_a_command_while_awaiting_input_abandons_the_old_one():
    agent = agent_in(S.AWAITING_INPUT)
    old = agent.current
    t = turn("user", "forget it, bump the version instead", ts=500.0)
    after, events = apply_turn(agent, t, intent=sure(I.COMMAND))
    assert after.state is S.COMMANDED and after.current.id == t.id and after.current.text == t.text
    (abandoned,) = after.history
    assert abandoned.id == old.id and abandoned.abandoned_at == 500.0 and abandoned.completed_at is None
    assert abandoned.state is S.AWAITING_INPUT and abandoned.finished
    assert [e["kind"] for e in events] == ["command_abandoned", "state_transition"]
    assert events[0]["command"] == old.id
    assert (events[1]["from"], events[1]["to"], events[1]["command"]) == ("awaiting_input", "commanded", t.id)


def test_a_detected_user_turn_while_awaiting_input_is_an_answer():
    agent = agent_in(S.AWAITING_INPUT)
    after, events = apply_turn(agent, turn("user", "the second one"))
    assert after.state is S.PROCESSING and after.current.id == agent.current.id
    assert events[0]["intent"] == "answer"


def test_empty_agent_text_is_progress():
    agent = agent_in(S.COMMANDED)
    after, events = apply_turn(agent, Turn("x", "agent", None))
    assert after.state is S.PROCESSING and events[0]["intent"] == "progress"


# --------------------------------------------------------------------------
# Edge cases (FR11, NFR4)


def test_twenty_rapid_turns_are_each_validated_against_the_updated_state():
    script = [
        ("user", "add a --verbose flag", "commanded", "state_transition"),
        ("agent", "Let me look at the CLI first.", "processing", "state_transition"),
        ("agent", "Now I'll add the flag to the parser.", "processing", "state_transition"),
        ("user", "also add -v", "processing", "transition_rejected"),  # the agent is working
        ("agent", "Should it also print timings?", "awaiting_input", "state_transition"),
        ("agent", "Let me check the logging setup.", "awaiting_input", "transition_rejected"),  # waiting for the user
        ("user", "yes, timings too", "processing", "state_transition"),
        ("agent", "Running the tests.", "processing", "state_transition"),
        ("agent", "Done. `--verbose` prints each step and its timing.", "idle", "state_transition"),
        ("agent", "Let me know if you need anything else.", "idle", "transition_rejected"),  # agent speaks when idle
        ("user", "now document it", "commanded", "state_transition"),
        ("agent", "Would you like it in the README or in --help?", "awaiting_input", "state_transition"),
        ("user", "both", "processing", "state_transition"),
        ("agent", "Updating the README.", "processing", "state_transition"),
        ("user", "and the man page", "processing", "transition_rejected"),
        ("agent", "Now let me update the --help text.", "processing", "state_transition"),
        ("agent", "I've documented `--verbose` in the README and in `--help`. Ready for review.", "idle", "state_transition"),
        ("user", "thanks, now release it", "commanded", "state_transition"),
        ("agent", "I've tagged v1.4.0 and pushed the tag; the release workflow is green.", "idle", "state_transition"),
        ("user", "great", "commanded", "state_transition"),
    ]
    assert len(script) == 20
    agent = AgentCommands("a")
    for n, (actor, text, expected_state, expected_kind) in enumerate(script):
        before = agent
        agent, events = apply_turn(agent, Turn(f"t{n}", actor, text, ts=float(n)))
        assert agent.state.value == expected_state, (n, text, events)
        assert events[-1]["kind"] == expected_kind, (n, text, events)
        if expected_kind == "transition_rejected":
            assert agent is before
    assert [c.id for c in agent.history] == ["t0", "t10", "t17"]
    # apply_turns folds the same way.
    folded, events = apply_turns(AgentCommands("a"), [Turn(f"t{n}", a, x, ts=float(n)) for n, (a, x, _, _) in enumerate(script)])
    assert folded == agent
    assert sum(e["kind"] == "transition_rejected" for e in events) == 4


def test_a_duplicate_turn_makes_no_second_transition():
    agent = AgentCommands("a")
    first = Turn("u1", "user", "fix it", ts=1.0)
    progress = Turn("a1", "agent", "Let me look.", ts=2.0)
    agent, e1 = apply_turn(agent, first)
    agent, e2 = apply_turn(agent, progress)
    again, e3 = apply_turn(agent, progress)
    assert again is agent and e3 == []
    again, e4 = apply_turn(agent, first)  # the command turn replayed later: no new command
    assert again is agent and e4 == []
    replayed, events = apply_turns(AgentCommands("a"), [first, first, progress, progress, first])
    assert replayed == agent and [e["turn"] for e in events] == ["u1", "a1"]


def test_the_dedup_window_is_bounded():
    agent = AgentCommands("a")
    agent, _ = apply_turn(agent, Turn("u", "user", "go"))
    for n in range(machine.SEEN_TURNS + 10):
        agent, _ = apply_turn(agent, Turn(f"p{n}", "agent", "Let me keep going."))
    assert len(agent.recent_turns) == machine.SEEN_TURNS
    assert agent.seen(f"p{machine.SEEN_TURNS + 9}") and not agent.seen("p0")


def test_agent_crash_mid_command_keeps_the_command_and_marks_the_agent_inactive():
    agent = agent_in(S.PROCESSING)
    command = agent.current
    ended, events = end_session(agent, ts=42.0, reason="pane closed")
    assert ended.state is S.PROCESSING and ended.current == command, "the command stays where it was"
    assert ended.active is False and agent.active is True
    assert events == [{"kind": "agent_inactive", "agent": "agent-1", "command": command.id, "state": "processing", "reason": "pane closed", "ts": 42.0}]
    again, more = end_session(ended)
    assert again is ended and more == []
    # The session resumed (claude --resume): the next valid turn makes it active again.
    resumed, _ = apply_turn(ended, turn("agent", "Let me pick up where I left off."))
    assert resumed.active and resumed.state is S.PROCESSING


def test_ending_an_idle_session_reports_no_command():
    ended, events = end_session(AgentCommands("a"), ts=1.0)
    assert events[0]["command"] is None and events[0]["state"] == "idle" and not ended.active


def test_state_transition_event_payload_shape():
    _, events = apply_turn(AgentCommands("a"), Turn("u1", "user", "go", ts=1.0))
    (event,) = events
    assert event == {
        "kind": "state_transition",
        "agent": "a",
        "command": "u1",
        "from": "idle",
        "to": "commanded",
        "trigger": "turn",
        "confidence": 1.0,
        "intent": "command",
        "turn": "u1",
    }
    assert {"agent", "command", "from", "to", "trigger", "confidence"} <= set(event)
    json.dumps(event)  # plain values only: ready for the event log
    _, manual = apply_turn(AgentCommands("a"), Turn("u2", "user", "go"), trigger="manual")
    assert manual[0]["trigger"] == "manual"


def test_every_transition_logs_info(caplog):
    with caplog.at_level(logging.INFO, logger="headspace_tui.state.machine"):
        apply_turn(AgentCommands("a"), Turn("u1", "user", "go"))
    assert any(r.levelno == logging.INFO and "idle -> commanded" in r.getMessage() for r in caplog.records)


def test_confidence_comes_from_intent_detection():
    agent = agent_in(S.COMMANDED)
    _, events = apply_turn(agent, turn("agent", "Hmm."))  # no pattern: a default guess
    assert events[0]["intent"] == "progress" and events[0]["confidence"] < 1.0


def test_agents_are_independent_and_the_machine_is_reentrant():
    """No global state: many agents on many threads give what one thread gives."""

    def run(name: str) -> tuple[AgentCommands, list[dict]]:
        turns = [
            Turn(f"{name}-{n}", actor, text, ts=float(n))
            for n, (actor, text) in enumerate([("user", "go"), ("agent", "Let me look."), ("agent", "Should I?"), ("user", "yes"), ("agent", "Done.")] * 20)
        ]
        return apply_turns(AgentCommands(name), turns)

    names = [f"agent{n}" for n in range(16)]
    sequential = [run(n) for n in names]
    with ThreadPoolExecutor(8) as pool:
        threaded = list(pool.map(run, names))
    assert threaded == sequential
    assert all(agent.state is S.IDLE and len(agent.history) == 20 for agent, _ in threaded)


def test_history_is_bounded():
    agent = AgentCommands("a")
    for n in range(machine.HISTORY + 5):
        agent, _ = apply_turns(agent, [Turn(f"u{n}", "user", "go"), Turn(f"a{n}", "agent", "Done.")])
    assert len(agent.history) == machine.HISTORY and agent.history[-1].id == f"u{machine.HISTORY + 4}"


def test_six_hundred_turns_in_a_row_each_move_the_command_on():
    """How fast each transition is (the PRD's 50 ms) is measured by benchmarks/intent_speed.py, not gated here."""
    turns = [
        Turn(f"t{n}", actor, text) for n, (actor, text) in enumerate([("user", "go"), ("agent", "Let me look at the parser and the tests."), ("agent", "I've fixed it; all 12 tests pass.")] * 200)
    ]
    agent = AgentCommands("a")
    for t in turns:
        agent, _ = apply_turn(agent, t)
    assert agent.state is S.IDLE and len(agent.history) == machine.HISTORY


# --------------------------------------------------------------------------
# An interrupt (Esc) ends the command, in whatever state: nothing stays "commanded"


@pytest.mark.parametrize("state", [S.COMMANDED, S.PROCESSING, S.AWAITING_INPUT])
def test_claudes_interrupt_note_ends_the_command_in_any_state(state):
    busy = agent_in(state)
    note = Turn("i1", "user", "[Request interrupted by user]", ts=900.0)
    assert machine.is_interrupt(note.text)
    after, events = machine.interrupt(busy, note)
    assert after.state is S.IDLE and after.current is None
    (ended,) = after.history
    assert ended.id == busy.current.id and ended.abandoned_at == 900.0 and ended.finished
    assert events == [{"kind": "command_interrupted", "agent": busy.agent, "command": busy.current.id, "from": state.value, "to": "idle", "turn": "i1"}]
    assert machine.interrupt(after, note) == (after, [])  # the same note twice: one transition


def test_interrupt_then_nudge_then_interrupt_leaves_the_agent_idle_not_commanded():
    """x, c, x on one agent, as Claude's transcript has it: before, the nudge was rejected and the command stayed "commanded"."""
    agent = AgentCommands("a")
    agent, _ = apply_turn(agent, Turn("u1", "user", "refactor the parser", ts=1.0))
    agent, _ = apply_turn(agent, Turn("a1", "agent", "Let me read the parser first.", ts=2.0))
    for turn_, expected in (
        (Turn("x1", "user", "[Request interrupted by user for tool use]", ts=3.0), S.IDLE),
        (Turn("u2", "user", "continue", ts=4.0), S.COMMANDED),
        (Turn("x2", "user", "[Request interrupted by user]", ts=5.0), S.IDLE),
    ):
        step = machine.interrupt if machine.is_interrupt(turn_.text) else apply_turn
        agent, events = step(agent, turn_)
        assert agent.state is expected, (turn_.text, agent.state)
        assert not [e for e in events if e["kind"] == "transition_rejected"]
    assert [c.text for c in agent.history] == ["refactor the parser", "continue"]


def test_an_interrupt_with_no_command_changes_nothing_and_a_typed_bracket_is_not_one():
    idle = AgentCommands("a")
    after, events = machine.interrupt(idle, Turn("i1", "user", "[Request interrupted by user]"))
    assert after.state is S.IDLE and events == [] and after.seen("i1")
    assert not machine.is_interrupt("please don't [Request interrupted by user] me")
    assert not machine.is_interrupt(None) and not machine.is_interrupt("")
