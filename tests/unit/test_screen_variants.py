"""Screens a future Claude Code may draw, made from real recorded ones by changing what versions change.

Each case takes a recorded screen and changes only what Claude Code has
changed between versions before (a glyph, a hint's words, where and how a
retry is worded, a dialog's title), as the issue reports them from the
field.  The structure must carry the reading: an agent that needs you is
never shown as one that doesn't, and what the reader does not know is
``unknown``, never a confident wrong state.
"""

from __future__ import annotations

import pytest

from headspace_tui.detect.claude import BASE, classify_capture
from headspace_tui.model import AgentState
from tests.harness.record import corpus_dir


def recorded(name: str, version: str = "2.1.330", renderer: str = "alt", size: str = "80x24") -> str:
    return (corpus_dir(version) / renderer / size / f"{name}.ansi").read_text()


def lines_of(ansi: str) -> list[str]:
    return ansi.split("\n")


def replace_line(ansi: str, needle: str, new: str) -> str:
    """The capture with the row containing ``needle`` replaced by ``new`` (colours of that row dropped)."""
    rows = lines_of(ansi)
    index = next(i for i, row in enumerate(rows) if needle in row)
    rows[index] = new
    return "\n".join(rows)


@pytest.mark.parametrize("rules", [None, BASE], ids=["newest table", "structure alone"])
@pytest.mark.parametrize(
    "notice",
    [
        "✻ 529 overloaded · Retrying in 10s · attempt 5/10",
        "  ⎿  Retrying in 17 seconds… (attempt 6/10)",
        "✻ Waiting for API response · will retry in 4m 11s · check your network",
        "✻ API ERROR · RETRYING IN 3S · ATTEMPT 2/10",
        "✻ 529 overloaded · retrying in 9s · attempt 5/10",
        "✻ 401 invalid x-api-key · Retrying in 14s · attempt 6/10",
        "  ⎿  Retrying in 15 seconds… (attempt 6/10)",
        "✻ Waiting for API response · will retry in 4m 15s · check your network",
    ],
)
def test_a_retry_notice_is_working_with_the_retrying_mark_wherever_and_however_it_is_worded(notice, rules):
    # The spinner row of a real working screen, replaced by the notice: Claude
    # still runs the turn (esc to interrupt), nothing waits for you (issue 23).
    ansi = replace_line(recorded("working_spinner"), "…", notice)
    observation = classify_capture(ansi, command="claude", rules=rules)
    assert observation.state is AgentState.WORKING and observation.retrying
    assert not observation.state.needs_you
    assert observation.error
    assert observation.to_json()["retrying"] is True


@pytest.mark.parametrize("where", ["above the box", "under the footer"])
def test_a_plugin_notice_that_will_retry_on_next_startup_is_not_an_error(where):
    # 2.1.x prints this on machines without network, above the input box or under its footer.
    notice = "          Failed to install Anthropic marketplace · Will retry on next startup"
    rows = lines_of(recorded("idle_fresh", renderer="inline"))
    box = next(i for i, row in enumerate(rows) if "❯" in row)
    rows.insert(box - 1 if where == "above the box" else box + 3, notice)
    observation = classify_capture("\n".join(rows), command="claude", rules=BASE)
    assert observation.state is AgentState.IDLE, observation.evidence


@pytest.mark.parametrize("glyph", ["›", ">", "»", "❱", "$"])
def test_the_input_box_is_found_by_its_shape_whatever_its_glyph(glyph):
    ansi = recorded("idle_finished", renderer="inline")
    rows = [row for row in lines_of(ansi)]
    box = next(i for i, row in enumerate(rows) if row.startswith("\x1b") and "❯" in row and i > 0 and "─" in rows[i - 1])
    rows[box] = rows[box].replace("❯", glyph, 1)
    observation = classify_capture("\n".join(rows), command="claude", rules=BASE)
    assert observation.state is AgentState.IDLE, observation.evidence


def test_an_interrupted_turn_is_idle_not_a_question_for_you():
    ansi = recorded("idle_interrupted")
    assert "What should Claude do instead?" in ansi
    observation = classify_capture(ansi, command="claude", rules=BASE)
    assert observation.state is AgentState.IDLE
    assert any(e.rule == "interrupted-by-user" for e in observation.evidence)


@pytest.mark.parametrize("title", ["Pick a deployment target", "Choose one:", "Select the environment to use"])
def test_a_numbered_menu_nobody_named_still_needs_you_with_its_options(title):
    # A permission dialog whose title and header words are unknown.
    ansi = recorded("permission_write", renderer="inline", size="120x40")
    ansi = replace_line(ansi, "Do you want to create", f" {title}")
    ansi = replace_line(ansi, "Create file", " Something new")
    observation = classify_capture(ansi, command="claude", rules=BASE)
    assert observation.state.needs_you and observation.state.is_menu
    assert observation.prompt.kind == "menu" and observation.prompt.title == title
    assert [o.key for o in observation.prompt.options] == ["1", "2", "3"]


def test_a_new_layout_while_claude_runs_is_unknown_with_the_line_it_stopped_at():
    ansi = "\n".join(["", " ▐▛███▛█   Claude Code v9.0.0", "", "  ◆ Claude is thinking in a brand new way", "    ░░░░░░░░░░ 40%", ""])
    observation = classify_capture(ansi, command="claude")
    assert observation.state is AgentState.UNKNOWN
    (evidence,) = observation.evidence
    assert evidence.rule == "unrecognised-screen" and evidence.line == 4 and "40%" in evidence.text


def test_the_banner_alone_is_starting_and_a_blank_pane_running_claude_too():
    assert classify_capture(" ▐▛███▛█   Claude Code v2.1.330\n▝▜██████▀  Opus 5.5\n", command="claude").state is AgentState.STARTING
    assert classify_capture("\n\n", command="claude").state is AgentState.STARTING


@pytest.mark.parametrize("version", ["2.0.60", "2.1.30", "2.1.160", "2.1.330"])
def test_a_given_up_error_above_an_idle_looking_box_is_an_error(version):
    renderer = "inline"
    observation = classify_capture(recorded("error_auth_401", version, renderer), command="claude", rules=BASE)
    assert observation.state is AgentState.ERROR and not observation.retrying
    assert "401" in observation.error


def test_an_answer_that_mentions_an_api_error_is_not_one():
    ansi = recorded("idle_finished", renderer="inline", size="120x40")
    ansi = ansi.replace("Hello there! The build is green and all tests pass.", "I fixed the API Error handling in the client.")
    assert classify_capture(ansi, command="claude").state is AgentState.IDLE
