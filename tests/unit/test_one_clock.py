"""One clock end to end without tmux: the store's claim, the journal's total and timeline, over a restart.

The header's "waits today (sum)" must be the sum of the waits the rows
show (closed ones today, open ones so far), and a restart of headspace must
neither drop a wait still open nor count it from zero.
"""

from __future__ import annotations

from headspace_tui.app.screens.timeline import began
from headspace_tui.detect.clock import REMEMBERED
from headspace_tui.model import AgentState, Observation, Prompt
from headspace_tui.service.records.journal import Journal, start_of_day
from headspace_tui.service.records.store import AgentStore
from headspace_tui.service.watching.pane_watch import PaneWatch
from headspace_tui.state.eventlog import EventLog
from headspace_tui.tmux.server import PaneRecord

NOON = start_of_day(1_800_000_000.0) + 12 * 3600
KEY = "local|s|%1|7@1"


def _record() -> PaneRecord:
    return PaneRecord(
        pane_id="%1",
        session_id="$0",
        session_name="s",
        window_index=0,
        pane_index=0,
        target="s:0.0",
        pid=100,
        current_command="claude",
        cwd="/w",
        width=80,
        height=24,
        alternate_on=False,
        in_mode=False,
        title="",
        dead=False,
        dead_status=None,
    )


def _question() -> Observation:
    return Observation(AgentState.QUESTION, prompt=Prompt("question", title="Which database?", fingerprint="q"))


class Run:
    """One run of headspace: a store told to a journal on the event log at ``path``."""

    def __init__(self, path, now: float) -> None:
        self.now = now
        self.journal = Journal(EventLog(path), clock=lambda: self.now)
        self.store = AgentStore()
        self.store.subscribe(self.journal.on_event)
        self.watch = PaneWatch(_record(), KEY)

    def see(self, observation: Observation, at: float, claims: dict | None = None):
        """``claims``: what Claude's files, hooks and transcript say; the journal's word is added as the monitor adds it."""
        self.now = at
        found = self.watch.claims(observation.state, self.journal.remembered)  # the code the monitor runs
        return self.store.observed(_record(), KEY, observation, at, agent_pid=7, claims={**found, **(claims or {})})

    def rows_waited(self, now: float) -> float:
        return sum(now - a.since for a in self.store.agents.values() if a.state.needs_you)

    def header(self, now: float) -> float:
        return self.journal.waited_today(self.store.agents, now)


def test_the_header_counts_an_open_wait_from_the_claim_the_row_shows(tmp_path):
    run = Run(tmp_path / "e.db", NOON)
    agent = run.see(Observation(AgentState.PERMISSION), NOON, {"status-file": NOON - 203})  # headspace started 3m23s into the wait
    assert NOON + 1 - agent.since == 204
    assert run.header(NOON + 1) == run.rows_waited(NOON + 1) == 204  # not "<1m" beside a row at 3m23s


def test_a_restart_during_a_wait_keeps_its_start_and_its_total(tmp_path):
    first = Run(tmp_path / "e.db", NOON)
    first.see(Observation(AgentState.WORKING), NOON - 100)
    first.see(_question(), NOON - 40)  # no status file dates a question here: headspace's own sight
    assert first.header(NOON) == 40
    first.journal.close()

    second = Run(tmp_path / "e.db", NOON + 10)
    agent = second.see(_question(), NOON + 10)
    assert agent.since == NOON - 40 and agent.since_source == REMEMBERED  # not 0 s for a 50 s old question
    assert second.header(NOON + 20) == second.rows_waited(NOON + 20) == 60


def test_a_wait_left_open_that_ended_while_headspace_was_away_counts_to_the_next_state(tmp_path):
    first = Run(tmp_path / "e.db", NOON)
    first.see(Observation(AgentState.PERMISSION), NOON - 30, {"status-file": NOON - 30})
    first.journal.close()

    second = Run(tmp_path / "e.db", NOON + 60)
    second.see(Observation(AgentState.WORKING), NOON + 60, {"status-file": NOON + 15})  # answered at the pane at NOON+15
    assert second.header(NOON + 60) == 45


def test_a_claim_moved_earlier_moves_the_total_and_the_timeline_and_survives_a_restart(tmp_path):
    first = Run(tmp_path / "e.db", NOON)
    first.see(Observation(AgentState.WORKING), NOON - 100)
    first.see(Observation(AgentState.PERMISSION), NOON - 11, {"hook": NOON - 11})
    agent = first.see(Observation(AgentState.PERMISSION), NOON, {"hook": NOON - 11, "status-file": NOON - 18.5})
    assert agent.since == NOON - 18.5
    assert first.header(NOON) == first.rows_waited(NOON) == 18.5
    events = first.journal.timeline(KEY)
    dated = began(events)
    assert [dated[i] for i, e in enumerate(events) if e.kind == "agent_state"][-1] == NOON - 18.5  # the timeline says when it began
    first.see(Observation(AgentState.WORKING), NOON + 1.5, {"status-file": NOON + 1.5})  # answered: 20 s waited
    first.journal.close()

    second = Run(tmp_path / "e.db", NOON + 100)
    assert second.header(NOON + 100) == 20


def test_a_restart_that_dates_an_open_wait_earlier_is_kept_for_the_next_restart(tmp_path):
    first = Run(tmp_path / "e.db", NOON)
    first.see(_question(), NOON - 40)  # headspace's sight
    first.journal.close()

    second = Run(tmp_path / "e.db", NOON + 10)
    agent = second.see(_question(), NOON + 10, {"status-file": NOON - 45})  # Claude's word, read now: 5 s earlier
    assert agent.since == NOON - 45
    second.journal.close()

    third = Run(tmp_path / "e.db", NOON + 20)
    agent = third.see(_question(), NOON + 20)
    assert agent.since == NOON - 45
    assert third.header(NOON + 20) == third.rows_waited(NOON + 20) == 65


def test_the_transcript_dates_a_turn_by_its_prompt_and_a_wait_by_the_reply_before_it():
    from headspace_tui.detect.claude.transcript import Turn
    from headspace_tui.service.watching.pane_watch import PaneWatch
    from headspace_tui.service.watching.transcripts import note_times

    watch = PaneWatch(_record(), KEY)
    note_times(watch, [Turn(role="user", text="go", timestamp="2026-11-25T10:00:00Z"), Turn(role="agent", text="ok", timestamp="2026-11-25T10:00:07Z")])
    assert watch.prompted_at == 1795600800.0 and watch.replied_at == 1795600807.0
    note_times(watch, [Turn(role="tool_result", text="done", timestamp="2026-11-25T10:00:09Z")])
    assert watch.replied_at == 0.0  # Claude carries on: no wait began at its last reply
    note_times(watch, [Turn(role="agent", text="no time")])  # a line without a time changes nothing
    assert watch.replied_at == 0.0


def test_a_wait_that_ended_while_away_counts_to_the_next_states_claim_even_when_it_comes_late(tmp_path):
    first = Run(tmp_path / "e.db", NOON)
    first.see(Observation(AgentState.PERMISSION), NOON - 30, {"status-file": NOON - 30})
    first.journal.close()

    second = Run(tmp_path / "e.db", NOON + 60)
    second.see(Observation(AgentState.IDLE), NOON + 60)  # first seen with nothing to date it...
    assert second.header(NOON + 60) == 90
    second.see(Observation(AgentState.IDLE), NOON + 61, {"transcript": NOON + 15})  # ...then the transcript's reply line
    assert second.header(NOON + 61) == 45


def test_a_wait_found_again_under_another_name_is_the_same_wait(tmp_path):
    first = Run(tmp_path / "e.db", NOON)
    first.see(Observation(AgentState.PERMISSION), NOON - 30)  # Claude's file said "waiting": read as a permission
    first.journal.close()

    second = Run(tmp_path / "e.db", NOON + 10)
    agent = second.see(_question(), NOON + 10)  # the screen shows the question it is
    assert agent.since == NOON - 30
    assert second.header(NOON + 10) == second.rows_waited(NOON + 10) == 40


def _permission(command: str) -> Observation:
    return Observation(AgentState.PERMISSION, prompt=Prompt("permission", title="Bash command", detail=command, fingerprint=command))


def test_the_next_permission_right_after_an_answer_is_a_wait_of_its_own_in_the_rows_and_the_header(tmp_path):
    # Answered, and Claude asked again before headspace saw it work (tests/ui/test_inbox_live.py under load):
    # the row counts the new request from when it appeared, the header both waits, and the timeline shows two.
    run = Run(tmp_path / "events.db", NOON)
    agent = run.see(_permission("touch a"), NOON, {"status-file": NOON - 4.0})
    assert agent.since == NOON - 4.0
    agent = run.see(_permission("touch b"), NOON + 10.0, {"status-file": NOON - 4.0})  # the status file not yet rewritten
    assert agent.since == NOON + 10.0
    assert abs(run.header(NOON + 15.0) - run.rows_waited(NOON + 15.0) - 14.0) < 0.01  # the closed wait (14 s) and the open one
    run.see(Observation(AgentState.WORKING), NOON + 20.0)
    assert abs(run.header(NOON + 30.0) - 24.0) < 0.01
    states = [(to, since) for since, _old, to in run.journal.agents[KEY].changes]
    assert states == [("permission", NOON - 4.0), ("permission", NOON + 10.0), ("working", NOON + 20.0)], states
