"""Fusing the status file with the screen; validating the config file."""

from __future__ import annotations

import pytest

from headspace_tui.detect.claude import classify_capture
from headspace_tui.detect.claude.status_files import ClaudeStatus, status_observation
from headspace_tui.detect.fusion import fuse
from headspace_tui.model import AgentState
from headspace_tui.shared.config import ConfigError, load_config, parse_config
from tests.harness.record import DEFAULT_OUT


def screen(name: str):
    return classify_capture((DEFAULT_OUT / "alt" / "120x40" / f"{name}.ansi").read_text(), command="claude")


def status(value: str, waiting: str = ""):
    return status_observation(ClaudeStatus(pid=1, status=value, waiting_for=waiting))


def test_the_screen_gives_the_details_of_a_prompt():
    fused = fuse(screen("permission_bash"), status("waiting", "permission prompt"))
    assert fused.state is AgentState.PERMISSION and fused.tool == "Bash"
    assert {e.rule for e in fused.evidence} >= {"permission-question", "status-file"}


def test_a_plain_text_question_is_input_even_when_the_file_says_idle():
    assert fuse(screen("input_plain_question"), status("idle")).state is AgentState.INPUT


def test_busy_file_beats_a_screen_that_still_looks_idle():
    fused = fuse(screen("idle_finished"), status("busy"))
    assert fused.state is AgentState.WORKING and fused.source == "status-file"


def test_waiting_file_before_the_dialog_is_drawn_needs_you_without_digits():
    fused = fuse(screen("idle_fresh"), status("waiting", "dialog open"))
    assert fused.state.needs_you and not fused.state.is_menu


def test_without_a_file_the_screen_decides():
    obs = screen("working_spinner")
    assert fuse(obs, None) is obs


def test_config_defaults_and_remap():
    config = parse_config({"nudge_text": "go on", "keys": {"approve": "a"}})
    assert config.nudge_text == "go on" and config.keys["approve"] == "a" and config.keys["deny"] == "n"


@pytest.mark.parametrize(
    "data,message",
    [
        ({"colour": "red"}, "unknown setting 'colour'"),
        ({"keys": {"approve": "1"}}, "other than a digit"),
        ({"keys": {"launch": "x"}}, "unknown action 'launch'"),
        ({"keys": {"approve": "n"}}, "more than one action"),
        ({"layout": "diagonal"}, "layout must be one of"),
        ({"nudge_text": ""}, "non-empty"),
    ],
)
def test_bad_config_is_one_clear_error(data, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(data, "cfg.toml")


def test_malformed_file_names_the_file(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("keys = [broken")
    with pytest.raises(ConfigError, match="config.toml: not valid TOML"):
        load_config(path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml")


def test_a_waiting_agent_is_never_hidden_by_a_screen_read_as_unknown_or_starting():
    unknown = classify_capture("  ◆ a layout nobody knows\n    ░░░░ 40%\n", command="claude")
    assert unknown.state is AgentState.UNKNOWN
    for screen_reading in (unknown, screen("starting_trust_dialog")):
        fused = fuse(screen_reading, status("waiting", "permission prompt"))
        assert fused.state is AgentState.PERMISSION and fused.state.needs_you
    # Without Claude's word, the start-up dialog on screen stands.
    assert fuse(screen("starting_trust_dialog"), status("idle")).state is AgentState.STARTING
