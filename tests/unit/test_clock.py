"""The one clock: when the current wait or turn began, by trust, never younger within one state, kept over a restart."""

from __future__ import annotations

from headspace_tui.detect.clock import REMEMBERED, SIGHT, Claim, Clock
from headspace_tui.model import AgentState

P, W, IDLE = AgentState.PERMISSION, AgentState.WORKING, AgentState.IDLE


def test_the_most_trusted_source_dates_a_new_state():
    clock = Clock()
    claim = clock.update(P, {"hook": 111.0, "status-file": 104.5, "transcript": 103.0, REMEMBERED: 100.0}, now=122.0)
    assert claim == Claim(104.5, "status-file")  # status file > hook > transcript > headspace (issue: 11 s vs 18.5 s)


def test_with_no_source_a_state_counts_from_headspaces_sight():
    assert Clock().update(W, {}, now=50.0) == Claim(50.0, SIGHT)


def test_a_later_time_never_makes_a_wait_younger():
    clock = Clock()
    clock.update(P, {"hook": 100.0}, now=101.0)
    # The screen confirms the hook a second later; the status file, read late, says a later time: the row must not go from 6 s to 5 s.
    assert clock.update(P, {"hook": 100.0, "status-file": 101.0}, now=106.0).at == 100.0
    assert clock.update(P, {"hook": 101.0}, now=107.0).at == 100.0


def test_a_more_trusted_source_arriving_late_moves_the_claim_earlier():
    clock = Clock()
    assert clock.update(P, {"hook": 111.0}, now=112.0) == Claim(111.0, "hook")
    assert clock.update(P, {"hook": 111.0, "status-file": 104.5}, now=113.0) == Claim(104.5, "status-file")


def test_a_less_trusted_earlier_source_does_not_override_a_more_trusted_one():
    clock = Clock()
    clock.update(P, {"status-file": 104.5}, now=110.0)
    assert clock.update(P, {"status-file": 104.5, "transcript": 90.0, REMEMBERED: 80.0}, now=111.0) == Claim(104.5, "status-file")


def test_sight_is_corrected_by_the_transcript_read_after_it():
    clock = Clock()
    assert clock.update(P, {}, now=200.0) == Claim(200.0, SIGHT)  # a fresh headspace, the transcript not read yet
    assert clock.update(P, {"transcript": 190.0}, now=200.3) == Claim(190.0, "transcript")  # not 0 s for a 10 s old prompt


def test_a_claim_older_than_the_state_before_dates_nothing():
    clock = Clock()
    clock.update(W, {"status-file": 15.0}, now=100.0)
    clock.update(P, {"hook": 118.5}, now=120.0)
    # Back to work: the status file still says "busy since 15" (not yet rewritten): about the turn before the dialog.
    assert clock.update(W, {"status-file": 15.0}, now=130.0) == Claim(130.0, SIGHT)
    assert clock.update(W, {"status-file": 129.6}, now=131.0) == Claim(129.6, "status-file")


def test_no_time_from_the_future():
    clock = Clock()
    assert clock.update(IDLE, {"status-file": 90.0}, now=70.0) == Claim(70.0, "status-file")  # another machine's clock, ahead


def test_a_restart_keeps_the_start_an_earlier_run_saw():
    # Headspace saw the question at 1000 and was restarted; nothing of Claude's dates a question (no status file here).
    clock = Clock()
    assert clock.update(AgentState.QUESTION, {REMEMBERED: 1000.0}, now=1010.0) == Claim(1000.0, REMEMBERED)
    # Claude's word, when it comes, still wins if earlier; never later.
    assert clock.update(AgentState.QUESTION, {REMEMBERED: 1000.0, "status-file": 1005.0}, now=1011.0).at == 1000.0
    assert clock.update(AgentState.QUESTION, {"status-file": 998.0}, now=1012.0) == Claim(998.0, "status-file")


def test_a_new_state_starts_a_new_claim():
    clock = Clock()
    clock.update(P, {"status-file": 100.0}, now=105.0)
    assert clock.update(W, {"hook": 106.0}, now=107.0) == Claim(106.0, "hook")
    assert clock.update(P, {"status-file": 100.0}, now=120.0) == Claim(120.0, SIGHT)  # the old wait's time is not this wait's


def test_one_wait_keeps_its_time_when_the_screen_names_it_otherwise():
    clock = Clock()
    # Claude's file says "waiting" (read as a permission) before the screen draws the plan dialog it is.
    assert clock.update(P, {"status-file": 100.0}, now=100.2) == Claim(100.0, "status-file")
    assert clock.update(AgentState.PLAN, {"status-file": 100.0}, now=100.6) == Claim(100.0, "status-file")
    assert clock.update(W, {}, now=130.0) == Claim(130.0, SIGHT)  # answered: the wait is over


def test_the_next_permission_is_a_new_wait_even_when_the_working_moment_between_was_not_seen():
    # Approved, Claude ran the command and asked again within one read (tests/ui/test_inbox_live.py under load):
    # the second dialog's wait starts when it is first seen, not when the first one did.
    clock = Clock()
    assert clock.update(P, {"status-file": 100.0}, now=101.0, prompt="bash-touch") == Claim(100.0, "status-file")
    assert clock.update(P, {"status-file": 100.0}, now=130.0, prompt="write-file") == Claim(130.0, SIGHT)  # the file's old time dates the old wait
    assert clock.update(P, {"status-file": 129.5}, now=131.0, prompt="write-file") == Claim(129.5, "status-file")  # rewritten: it corrects


def test_a_wait_whose_details_arrive_later_or_a_questions_next_page_is_the_same_wait():
    Q = AgentState.QUESTION
    clock = Clock()
    clock.update(P, {"status-file": 100.0}, now=101.0)  # Claude's "waiting", before the screen shows the dialog
    assert clock.update(AgentState.PLAN, {"status-file": 100.0}, now=102.0, prompt="plan-a").at == 100.0
    assert clock.update(AgentState.PLAN, {}, now=103.0, prompt="plan-a").at == 100.0
    other = Clock()
    other.update(Q, {"status-file": 200.0}, now=201.0, prompt="page-1")
    assert other.update(Q, {}, now=205.0, prompt="page-2").at == 200.0
