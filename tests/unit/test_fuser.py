"""The multi-source fuser: hooks sooner than the screen, idle grace, exited at once, explain."""

from __future__ import annotations

import pytest

from headspace_tui.detect.claude import classify_capture
from headspace_tui.detect.fusion import Fuser
from headspace_tui.model import AgentState, Evidence, Observation
from tests.harness.record import DEFAULT_OUT


def screen(name: str) -> Observation:
    return classify_capture((DEFAULT_OUT / "alt" / "120x40" / f"{name}.ansi").read_text(), command="claude")


def hook(state: AgentState, tool: str = "") -> Observation:
    return Observation(state, source="hook", confidence=0.95, evidence=(Evidence(f"hook:{state.value}", -1, tool),))


def test_a_hook_permission_is_believed_before_the_screen_draws_it():
    fuser = Fuser()
    fuser.observe(screen("working_spinner"), now=10.0)
    assert fuser.observe(hook(AgentState.PERMISSION, "Bash"), now=10.1).state is AgentState.PERMISSION
    # The next capture still shows the spinner (redraw lag): the hook holds.
    assert fuser.observe(screen("working_spinner"), now=10.3).state is AgentState.PERMISSION
    # Then the dialog is drawn: the screen supplies the details.
    fused = fuser.observe(screen("permission_bash"), now=10.5)
    assert fused.state is AgentState.PERMISSION and fused.tool == "Bash" and fused.prompt.options


def test_a_hook_goes_stale_once_the_screen_moved_on():
    """Answered in the pane itself, a prompt sends no hook; the screen must win after a redraw's time."""
    fuser = Fuser(idle_grace=0)
    fuser.observe(hook(AgentState.PERMISSION), now=10.0)
    fuser.observe(screen("permission_bash"), now=10.2)
    fuser.observe(screen("working_spinner"), now=12.0)
    assert fuser.observe(screen("working_spinner"), now=12.5).state is AgentState.WORKING


def test_idle_from_a_less_trusted_source_waits_for_the_grace_without_new_output():
    fuser = Fuser(idle_grace=5.0)
    fuser.observe(hook(AgentState.WORKING), now=0.0)
    # Within a redraw's time the hook's "working" still holds outright.
    assert fuser.observe(screen("idle_finished"), now=1.0).state is AgentState.WORKING
    assert fuser.explain(1.0).decision == "screen + hook"
    # Later the screen's idle stands alone, but must hold for the grace; new output restarts the wait.
    assert fuser.observe(screen("idle_finished"), now=4.0, output_changed=True).state is AgentState.WORKING
    assert "idle pending" in fuser.explain(4.0).decision
    assert fuser.observe(screen("idle_finished"), now=8.0).state is AgentState.WORKING
    assert fuser.observe(screen("idle_finished"), now=9.5).state is AgentState.IDLE


def test_idle_from_the_same_source_needs_no_grace():
    fuser = Fuser(idle_grace=60)
    fuser.observe(screen("working_streaming"), now=0.0)
    assert fuser.observe(screen("idle_finished"), now=0.5).state is AgentState.IDLE


def test_exited_is_accepted_at_once():
    fuser = Fuser(idle_grace=60)
    fuser.observe(hook(AgentState.WORKING), now=0.0)
    exited = classify_capture("tester@box:work$ ", command="bash")
    assert fuser.observe(exited, now=0.2).state is AgentState.EXITED


def test_explain_lists_every_source_with_its_evidence():
    fuser = Fuser()
    fuser.observe(screen("permission_bash"), now=1.0)
    fuser.observe(hook(AgentState.PERMISSION, "Bash"), now=1.1)
    why = fuser.explain(2.0)
    assert [source for source, _ in why.verdicts] == ["hook", "screen"]
    assert "screen + hook" in why.decision
    assert any(e.rule == "permission-question" for _, v in why.verdicts for e in v.observation.evidence)


def test_idle_confirmed_by_the_status_file_needs_no_grace():
    from headspace_tui.detect.claude.status_files import ClaudeStatus, status_observation

    fuser = Fuser(idle_grace=60)
    fuser.observe(status_observation(ClaudeStatus(pid=1, status="busy")), now=0.0)
    assert fuser.observe(screen("idle_finished"), now=0.1).state is AgentState.WORKING
    fuser.observe(status_observation(ClaudeStatus(pid=1, status="idle")), now=1.0)
    assert fuser.observe(screen("idle_finished"), now=1.1).state is AgentState.IDLE


def _claim(state: AgentState, source: str = "status-file") -> Observation:
    return Observation(state, evidence=(Evidence(source, -1, "claim"),), source=source)


def test_claims_are_the_agreeing_claims_of_claude_by_source():
    fuser = Fuser()
    assert fuser.claims(AgentState.WORKING) == {}  # no claim: the clock falls back on headspace's sight
    fuser.observe(_claim(AgentState.WORKING), 50.0, at=20.0)
    assert fuser.claims(AgentState.WORKING) == {"status-file": 20.0}
    assert fuser.claims(AgentState.PERMISSION) == {}  # "busy" cannot date a dialog
    fuser.observe(_claim(AgentState.PERMISSION, "hook"), 60.0, at=58.0)
    assert fuser.claims(AgentState.PLAN) == {"hook": 58.0}  # Claude says "waiting" for a plan too
    assert fuser.claims(AgentState.INPUT) == {"hook": 58.0}
    fuser.observe(_claim(AgentState.PERMISSION), 70.0, at=51.0)  # the status file, a source of its own: both are kept
    assert fuser.claims(AgentState.PERMISSION) == {"hook": 58.0, "status-file": 51.0}
    assert fuser.claims(AgentState.ERROR) == {}


# -- Claude's own "waiting" is a floor (issue 23) ------------------------------------
def status_file(value: str, waiting: str = "", source: str = "status-file") -> Observation:
    from headspace_tui.detect.claude.status_files import ClaudeStatus, status_observation

    return status_observation(ClaudeStatus(pid=1, status=value, waiting_for=waiting), source=source)


@pytest.mark.parametrize("shown", ["idle_finished", "working_spinner", "working_retrying_429"])
@pytest.mark.parametrize("source", ["status-file", "claude-agents"])
def test_a_status_file_that_says_waiting_is_never_shown_idle_or_working(shown, source):
    fuser = Fuser(idle_grace=0)
    fuser.observe(status_file("waiting", "permission prompt", source), now=10.0, at=10.0)
    # A hook that is newer and says "working" does not lift the floor either.
    fuser.observe(hook(AgentState.WORKING), now=10.5, at=10.5)
    fused = fuser.observe(screen(shown), now=11.0)
    assert fused.state is AgentState.PERMISSION and fused.source == source
    # Both readings are in the evidence, and "why" says which decided.
    rules = {e.rule for e in fused.evidence}
    assert source in rules and rules & {"input-box", "running-turn-hint", "retry-notice"}
    assert "floor" in fuser.explain(11.0).decision


def test_an_unreadable_screen_shows_what_the_status_file_says_it_waits_for():
    from headspace_tui.app.widgets.agent_table import waiting_for
    from headspace_tui.model import Agent

    fuser = Fuser()
    fuser.observe(status_file("waiting", "input needed"), now=10.0, at=10.0)
    fused = fuser.observe(classify_capture("\n  ◆ a dialog nobody has seen\n    ░░░ 40%\n", command="claude"), now=10.2)
    assert fused.state is AgentState.QUESTION and fused.source == "status-file"
    assert "unrecognised-screen" in {e.rule for e in fused.evidence}
    row = waiting_for(Agent(pane_id="%1", target="s:0.0", session="s", observation=fused)).plain
    assert row == "input needed (Claude's status file; press e)"


def test_the_floor_goes_when_the_status_file_stops_waiting():
    fuser = Fuser(idle_grace=0)
    fuser.observe(status_file("waiting", "permission prompt"), now=10.0, at=10.0)
    assert fuser.observe(screen("working_spinner"), now=10.1).state is AgentState.PERMISSION
    fuser.observe(status_file("busy"), now=10.3, at=10.3)
    assert fuser.observe(screen("working_spinner"), now=10.4).state is AgentState.WORKING


# -- ...until Claude has moved on (issue 37) -----------------------------------------
# What 2.1.330 writes while an AskUserQuestion dialog is up (trimmed of fields we do not read).
ASKING = {
    "pid": 2109,
    "sessionId": "78ed0c1e-0000-4000-8000-000000000000",
    "cwd": "/tmp/x/work",
    "version": "2.1.330",
    "kind": "interactive",
    "tmux": "a:@0.%0",
    "status": "waiting",
    "waitingFor": "input needed",
    "updatedAt": 1795323401000,
    "statusUpdatedAt": 1795323400950,
}


def status_from_file(data: dict) -> tuple[Observation, float]:
    """The status file as the monitor hands it to the fuser: its observation, dated by ``statusUpdatedAt``."""
    from headspace_tui.detect.claude.status_files import parse_status, status_observation

    status = parse_status(data)
    assert status is not None
    return status_observation(status), status.updated_at


def test_a_running_turn_read_after_the_status_files_wait_beats_it():
    """Answered through "Type something.": the pane shows Claude working while its file still says "input needed"."""
    fuser = Fuser(idle_grace=5.0)
    asking, since = status_from_file(ASKING)
    fuser.observe(asking, now=since + 0.1, at=since)
    assert fuser.observe(screen("question_two_options"), now=since + 0.2).state is AgentState.QUESTION
    # Eight seconds later the user answers; Claude works, its file is not rewritten yet.
    fuser.observe(asking, now=since + 8.4, at=since)
    fused = fuser.observe(screen("working_spinner"), now=since + 8.5)
    assert fused.state is AgentState.WORKING and fused.source == "screen"
    assert "moved on" in fuser.explain(since + 8.5).decision
    assert "status-file" in {e.rule for e in fused.evidence}  # the file's word stays in "why"
    assert fuser.claims(AgentState.WORKING) == {}  # nor does the old wait date the turn
    # Claude's file catches up: still working, now by both.
    busy, busy_since = status_from_file({**ASKING, "status": "busy", "waitingFor": None, "statusUpdatedAt": ASKING["statusUpdatedAt"] + 8400})
    assert fuser.observe(busy, now=since + 9.0, at=busy_since).state is AgentState.WORKING


def test_within_a_redraw_of_the_files_wait_a_running_turn_does_not_lift_it():
    """The dialog may not be drawn yet: the file is newer news than a screen read a moment after it."""
    fuser = Fuser(idle_grace=0)
    asking, since = status_from_file(ASKING)
    fuser.observe(screen("working_spinner"), now=since - 2.0)
    fuser.observe(asking, now=since + 0.05, at=since)
    assert fuser.observe(screen("working_spinner"), now=since + 0.6).state is AgentState.QUESTION


@pytest.mark.parametrize("shown", ["idle_finished", "idle_fresh"])
def test_only_a_running_turn_lifts_the_files_wait(shown):
    """An idle-looking screen, however new, may be a dialog headspace does not know: the floor holds."""
    fuser = Fuser(idle_grace=0)
    asking, since = status_from_file(ASKING)
    fuser.observe(asking, now=since, at=since)
    assert fuser.observe(screen(shown), now=since + 30.0).state is AgentState.QUESTION


def test_a_dialog_declined_with_esc_lifts_the_files_wait_once_the_screen_shows_interrupted():
    """Deny by Esc ends Claude's turn: "Interrupted · What should Claude do instead?" under an idle box.

    Claude's status file went on saying "waiting" for 30 s after that in a
    CI run, and the row stayed a permission with no options to pick.
    """
    fuser = Fuser(idle_grace=0)
    asking, since = status_from_file({**ASKING, "waitingFor": "permission prompt"})
    fuser.observe(asking, now=since, at=since)
    assert fuser.observe(screen("permission_bash"), now=since + 0.5).state is AgentState.PERMISSION
    # Within a redraw of the file's word the file still wins.
    interrupted = screen("idle_interrupted")
    assert "interrupted-by-user" in {e.rule for e in interrupted.evidence}
    assert fuser.observe(interrupted, now=since + 0.9).state is AgentState.PERMISSION
    # Read later, Claude's own line says the turn is over: the row is idle.
    fused = fuser.observe(interrupted, now=since + 3.0)
    assert fused.state is AgentState.IDLE and fused.source == "screen"
    assert "moved on" in fuser.explain(since + 3.0).decision


def test_a_still_pane_is_read_again_once_a_redraw_after_the_files_wait():
    """Claude rewrote "waiting" as a dialog was declined; the pane, read at once, then stays still: a look is asked for when the file can be passed over."""
    fuser = Fuser(idle_grace=0)
    asking, since = status_from_file({**ASKING, "waitingFor": "permission prompt"})
    fuser.observe(asking, now=since + 0.1, at=since)
    interrupted = screen("idle_interrupted")
    assert fuser.observe(interrupted, now=since + 0.2).state is AgentState.PERMISSION
    deadline = fuser.claim_deadline
    assert deadline is not None and since + 1.0 < deadline < since + 1.2
    # Read again then (the same still screen): Claude's own line wins, and no further look is asked for.
    assert fuser.observe(interrupted, now=deadline).state is AgentState.IDLE
    assert fuser.claim_deadline is None
