"""The screen detector is right on every recorded real screen of every recorded version.

The corpus (``snapshots/panes/claude-<version>/``) was recorded from the real
binaries with a known state per screen; this runs the detector on each, with
and without the pane's command (``headspace classify FILE`` may get neither),
and with the version the screen came from, as the app knows it.
"""

from __future__ import annotations

import json

import pytest

from headspace_tui.detect.claude import classify_capture
from tests.harness.accuracy import problems
from tests.harness.record import PANES

SCREENS = sorted(PANES.glob("claude-*/*/*/*.json"))
IDS = [str(p.relative_to(PANES).with_suffix("")).removeprefix("claude-") for p in SCREENS]


def load(path):
    return json.loads(path.read_text()), path.with_suffix(".ansi").read_text()


def check(observation, expected, text: str) -> None:
    """``observation`` says what the recorded screen's label says, in every detail the label has."""
    assert problems(observation, expected, text) == [], observation.evidence


def test_the_corpus_holds_every_recorded_version():
    versions = {p.parent.parent.parent.name for p in SCREENS}
    assert len(versions) >= 4, versions
    assert len(SCREENS) >= 4 * 36 * 2


@pytest.mark.parametrize("path", SCREENS, ids=IDS)
def test_classify_with_pane_command_and_version(path):
    meta, ansi = load(path)
    observation = classify_capture(ansi, command=meta["pane_command"], version=meta["claude_version"])
    check(observation, meta["expected"], path.with_suffix(".txt").read_text())


@pytest.mark.parametrize("path", SCREENS, ids=IDS)
def test_classify_from_the_screen_alone(path):
    meta, ansi = load(path)
    check(classify_capture(ansi), meta["expected"], path.with_suffix(".txt").read_text())


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
