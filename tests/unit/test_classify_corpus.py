"""The screen detector is right on every recorded real screen.

The corpus (``snapshots/panes/claude-2.1.330``) was recorded from the real
binary with a known state per screen; this runs the detector on each, with
and without the pane's command (``headspace classify FILE`` may get neither).
"""

from __future__ import annotations

import json

import pytest

from headspace_tui.detect.claude_screen import classify_capture
from tests.harness.record import DEFAULT_OUT

SCREENS = sorted(DEFAULT_OUT.glob("*/*/*.json"))
IDS = [str(p.relative_to(DEFAULT_OUT).with_suffix("")) for p in SCREENS]


def load(path):
    return json.loads(path.read_text()), path.with_suffix(".ansi").read_text()


def check(observation, expected):
    assert observation.state.value == expected["state"], observation.evidence
    assert observation.evidence, "every observation carries its evidence"
    if "tool" in expected:
        assert observation.tool == expected["tool"]
    if "detail" in expected:
        assert observation.prompt.detail == expected["detail"]
    if "options" in expected:
        labels = observation.option_labels
        assert labels[: len(expected["options"])] == expected["options"]
        assert observation.prompt.multi_select is expected["multi_select"]
    if "question" in expected:
        assert observation.question == expected["question"]
    if "question_index" in expected:
        assert (observation.prompt.question_index, observation.prompt.question_count) == (
            expected["question_index"],
            expected["question_count"],
        )
    if "retrying" in expected:
        assert observation.retrying is expected["retrying"]
        assert str(expected["status"]) in observation.error or expected["status"] == 529


def test_corpus_is_there():
    assert len(SCREENS) == 150


@pytest.mark.parametrize("path", SCREENS, ids=IDS)
def test_classify_with_pane_command(path):
    meta, ansi = load(path)
    check(classify_capture(ansi, command=meta["pane_command"]), meta["expected"])


@pytest.mark.parametrize("path", SCREENS, ids=IDS)
def test_classify_from_the_screen_alone(path):
    meta, ansi = load(path)
    check(classify_capture(ansi), meta["expected"])


@pytest.mark.parametrize(
    "capture",
    ["", "\n\n\n", "\x1b[31m\x1b[", "\x00\xff garbage \x1b]0;title\x07 more", "❯ 1. Yes\n  2. No\n" * 50, "─" * 500],
)
def test_garbage_never_raises_and_never_offers_digits_without_evidence(capture):
    observation = classify_capture(capture)
    assert observation.evidence
    if observation.state.is_menu:
        assert observation.prompt is not None and observation.prompt.options


def test_a_shell_pane_is_exited_when_claude_is_gone():
    observation = classify_capture("user@host:~/src$ ls\nREADME.md\nuser@host:~/src$ ", command="bash")
    assert observation.state.value == "exited"
    assert observation.evidence[0].rule == "pane-command-is-shell"
