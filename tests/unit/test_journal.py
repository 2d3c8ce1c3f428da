"""The journal: commands and outcomes from a real transcript, waiting time, the event log behind it."""

from __future__ import annotations

from pathlib import Path

import pytest

from headspace_tui.detect.claude.transcript import TranscriptTail
from headspace_tui.model import Agent, AgentState, Observation
from headspace_tui.service.records.journal import Journal, start_of_day
from headspace_tui.state.eventlog import EventLog

TRANSCRIPT = Path(__file__).resolve().parents[1] / "data" / "transcripts" / "bash_question_2.1.330.jsonl"
NOON = start_of_day(1_800_000_000.0) + 12 * 3600


def agent(pane: str = "%1") -> Agent:
    return Agent(pane_id=pane, target="s:0.0", session="s")


def test_a_real_transcript_drives_the_command_machine_and_outcomes(tmp_path):
    journal = Journal(EventLog(tmp_path / "events.db"), clock=lambda: NOON)
    a = agent()
    a.command, a.outcome = journal.turns(a, TranscriptTail(TRANSCRIPT).read_new())  # what the store applies
    commands = journal.agents["%1"].commands
    # Three commands, each completed (the question was answered through the dialog).
    assert [c.text for c in commands.history] == ["say hello", "create the marker file", "pick a database"]
    assert all(c.completed_at for c in commands.history) and commands.current is None
    assert a.command == "pick a database"
    transitions = [(e.payload["from"], e.payload["to"]) for e in journal.timeline("%1") if e.kind == "state_transition"]
    assert ("commanded", "awaiting_input") in transitions and ("awaiting_input", "processing") in transitions
    assert not [e for e in journal.timeline("%1") if e.kind == "transition_rejected"]


def test_outcomes_come_from_tool_results_and_replies(tmp_path):
    from headspace_tui.detect.claude.transcript import Turn

    journal = Journal(None, clock=lambda: NOON)
    a = agent()
    a.command, a.outcome = journal.turns(
        a,
        [
            Turn(role="user", text="run the tests", uuid="u1"),
            Turn(role="agent", tool_uses=(("Bash", {"command": "pytest"}),), stop_reason="tool_use", uuid="a1"),
            Turn(role="tool_result", text="=== 12 passed in 0.5s ===", uuid="r1"),
            Turn(role="agent", text="All 12 tests pass.", stop_reason="end_turn", uuid="a2"),
        ],
    )
    assert a.outcome == "tests passed: 12 passed"
    assert [e.kind for e in journal.timeline("%1")].count("outcome") == 1


def test_replay_writes_nothing(tmp_path):
    log = EventLog(tmp_path / "events.db")
    journal = Journal(log, clock=lambda: NOON)
    journal.turns(agent(), TranscriptTail(TRANSCRIPT).read_new(), record=False)
    assert log.count() == 0


def test_waited_today_sums_needs_you_time_and_survives_a_restart(tmp_path):
    path = tmp_path / "events.db"
    a = agent()
    first = Journal(EventLog(path), clock=lambda: NOON)
    first.state_changed(a, None, AgentState.WORKING, NOON - 300)
    first.state_changed(a, AgentState.WORKING, AgentState.PERMISSION, NOON - 200)
    first.state_changed(a, AgentState.PERMISSION, AgentState.WORKING, NOON - 150)  # 50 s waiting
    first.state_changed(a, AgentState.WORKING, AgentState.QUESTION, NOON - 30)  # still waiting: 30 s so far
    assert first.waited_today({"%1": a}, NOON) == 80
    first.close()

    second = Journal(EventLog(path), clock=lambda: NOON + 60)
    assert second.waited_today({}, NOON + 60) == 50  # the open interval of a past run is not guessed


def test_yesterday_does_not_count(tmp_path):
    journal = Journal(None, clock=lambda: NOON)
    a = agent()
    midnight = start_of_day(NOON)
    journal.state_changed(a, None, AgentState.PERMISSION, midnight - 600)
    journal.state_changed(a, AgentState.PERMISSION, AgentState.IDLE, midnight + 60)
    assert journal.waited_today({"%1": a}, NOON) == 60


def test_an_unopenable_log_falls_back_to_memory(tmp_path):
    bad = tmp_path / "events.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    journal, problem = Journal.open(bad)
    assert journal.log is None and problem.startswith("event log disabled:")
    journal.state_changed(agent(), None, AgentState.IDLE, NOON)
    assert [e.kind for e in journal.timeline("%1")] == ["agent_state"]


def test_an_agent_that_exits_mid_command_keeps_its_command_and_goes_inactive(tmp_path):
    from headspace_tui.detect.claude.transcript import Turn as Line

    journal = Journal(EventLog(tmp_path / "events.db"), clock=lambda: NOON)
    a = agent()
    journal.turns(a, [Line(role="user", text="refactor the parser", uuid="u1"), Line(role="agent", text="Let me look.", uuid="a1")])
    journal.state_changed(a, AgentState.WORKING, AgentState.EXITED, NOON)
    commands = journal.agents["%1"].commands
    assert commands.active is False and commands.current.text == "refactor the parser"
    inactive = [e for e in journal.timeline("%1") if e.kind == "agent_inactive"]
    assert len(inactive) == 1 and inactive[0].payload["state"] == "processing"


def keyed(pane: str, key: str) -> Agent:
    return Agent(pane_id=pane, target="s:0.0", session="s", key=key)


def test_two_agents_in_a_pane_called_percent_1_keep_separate_histories(tmp_path):
    """``%1`` exists on every tmux server and is reused by the next pane: histories follow the identity."""
    journal = Journal(EventLog(tmp_path / "events.db"), clock=lambda: NOON)
    old = keyed("%1", "local|L:default|%1|100@5")  # an hour ago, on the default server
    new = keyed("%1", "local|L:work|%1|200@9")  # now, on another server
    journal.state_changed(old, None, AgentState.PERMISSION, NOON - 3600)
    journal.state_changed(old, AgentState.PERMISSION, AgentState.EXITED, NOON - 3000)
    journal.state_changed(new, None, AgentState.WORKING, NOON - 10)
    assert [e.payload["to"] for e in journal.timeline(new.key)] == ["working"]
    assert [e.payload["to"] for e in journal.timeline(old.key) if e.kind == "agent_state"] == ["permission", "exited"]
    assert journal.waited_today({"%1": new}, NOON) == 600  # the old agent's wait, closed; nothing open for the new one
    journal.state_changed(new, AgentState.WORKING, AgentState.QUESTION, NOON - 5)
    assert journal.waited_today({"%1": new}, NOON) == 605


def test_a_restart_that_finds_the_agent_as_it_was_writes_no_new_line(tmp_path):
    path = tmp_path / "events.db"
    a = keyed("%3", "local|L:default|%3|300@7")
    first = Journal(EventLog(path), clock=lambda: NOON)
    first.state_changed(a, None, AgentState.WORKING, NOON - 100)
    first.close()
    a.since = NOON - 100  # each restart dates the state as the first run did (the one clock's "journal" source)
    for restart in range(3):
        again = Journal(EventLog(path), clock=lambda: NOON)
        again.state_changed(a, None, AgentState.WORKING, NOON + restart)
        again.close()
    last = Journal(EventLog(path), clock=lambda: NOON)
    a.since = 0.0
    last.state_changed(a, None, AgentState.IDLE, NOON + 10)  # it changed while headspace was away: that is news
    assert [(e.payload["from"], e.payload["to"]) for e in last.timeline(a.key)] == [(None, "working"), (None, "idle")]
    last.close()


def test_history_replayed_off_the_loop_is_the_same_as_replayed_in_place(tmp_path):
    turns = TranscriptTail(TRANSCRIPT).read_new()
    in_place, aside = Journal(None, clock=lambda: NOON), Journal(EventLog(tmp_path / "events.db"), clock=lambda: NOON)
    a, b = agent(), agent()
    a.command, a.outcome = in_place.turns(a, turns, record=False)
    adopt = aside.replayed(b, turns)
    assert b.command == "" and "%1" not in aside.agents  # nothing touched until adopted (on the loop)
    b.command, b.outcome = adopt()  # what the store applies
    assert (b.command, b.outcome) == (a.command, a.outcome) and b.command == "pick a database"
    assert aside.agents["%1"].commands == in_place.agents["%1"].commands
    assert aside.log.count() == 0  # replay writes nothing


def test_a_replay_ends_on_the_same_outcome_as_recording_the_turns_one_by_one(tmp_path):
    """A replay analyses only its newest texts; the outcome it ends on must be the one recording shows."""
    from headspace_tui.detect.claude.transcript import Turn

    turns = [
        Turn(role="user", text="run the tests", uuid="u1"),
        Turn(role="tool_result", text="=== 2 failed, 10 passed in 0.5s ===", uuid="r1"),
        Turn(role="agent", text="Two tests fail; fixing.", stop_reason="tool_use", uuid="a1"),
        Turn(role="tool_result", text="[main 3f2a9c1] Fix the parser", uuid="r2"),
        Turn(role="agent", text="Committed.", stop_reason="tool_use", uuid="a2"),
        Turn(role="tool_result", text="nothing to see", uuid="r3"),
        Turn(role="agent", text="Done.", stop_reason="end_turn", uuid="a3"),
    ]
    recorded, replayed = agent(), agent()
    recorded.command, recorded.outcome = Journal(None, clock=lambda: NOON).turns(recorded, turns)
    replayed.command, replayed.outcome = Journal(None, clock=lambda: NOON).turns(replayed, turns, record=False)
    assert recorded.outcome == replayed.outcome == "committed: 3f2a9c1 Fix the parser"
    nothing = agent()
    nothing.command, nothing.outcome = Journal(None, clock=lambda: NOON).turns(nothing, turns[-2:], record=False)
    assert nothing.outcome == ""


def test_agents_that_come_and_go_leave_a_bounded_journal():
    """1,619 short-lived agents grew the journal by ~28 KB each, for good: now what is gone shrinks to a bounded recent history."""
    import tracemalloc

    from headspace_tui.events import AgentChanged, AgentRemoved
    from headspace_tui.service.records.journal import ENDED_KEPT

    now = [1_000_000.0]
    journal = Journal(None, clock=lambda: now[0])

    def churn(first: int, count: int) -> None:
        for n in range(first, first + count):
            agent = Agent(pane_id=f"%{n}", target=f"w:{n}.0", session="w", key=f"local|s|%{n}|{n}@1")
            for old, new in ((None, AgentState.STARTING), (AgentState.STARTING, AgentState.WORKING), (AgentState.WORKING, AgentState.PERMISSION), (AgentState.PERMISSION, AgentState.IDLE)):
                now[0] += 1.0
                agent.observation = Observation(new)
                journal.on_event(AgentChanged(agent, old, now[0]))
            journal.on_event(AgentRemoved(agent.pane_id, agent.key))

    churn(0, 500)  # warm up
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    churn(500, 3000)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert journal.agents == {}
    assert len(journal._ended) == ENDED_KEPT
    assert grown < 3000 * 1024, f"{grown / 3000:.0f} bytes kept per ended agent"
    # Their waits still count: one second in permission each, today.
    assert journal.waited_today({}, now[0]) == pytest.approx(3500.0)


def test_an_interrupt_in_the_transcript_ends_the_command_so_a_nudge_after_it_starts_one(tmp_path):
    """x, c, x: Claude writes its interrupt note as a user line; the nudge after it is a new command, ended by the next Esc."""
    from headspace_tui.detect.claude.transcript import Turn

    journal = Journal(EventLog(tmp_path / "events.db"), clock=lambda: NOON)
    a = agent()
    journal.turns(
        a,
        [
            Turn(role="user", text="refactor the parser", uuid="u1"),
            Turn(role="agent", tool_uses=(("Bash", {"command": "sleep 60"}),), stop_reason="tool_use", uuid="a1"),
            Turn(role="user", text="[Request interrupted by user for tool use]", uuid="x1"),
            Turn(role="user", text="continue", uuid="u2"),
            Turn(role="user", text="[Request interrupted by user]", uuid="x2"),
        ],
    )
    commands = journal.agents["%1"].commands
    assert commands.state.value == "idle" and commands.current is None
    kinds = [e.kind for e in journal.timeline("%1")]
    assert kinds.count("command_interrupted") == 2 and "transition_rejected" not in kinds
