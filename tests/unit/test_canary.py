"""The release canary's reading half: every recorded screen read as the live monitor reads it, against its label.

The recording half is the corpus recorders' (their own e2e tests); here the
canary reads folders laid out as a recorder writes them: copies of the
pinned corpus, some with a label changed, so a difference is known.
"""

from __future__ import annotations

import json
import shutil

import pytest

from benchmarks.canary import FAMILIES, PANES, kind_of_change, read_all, report

PINNED = {"claude": "claude-2.1.330", "codex": "codex-0.169.0", "gemini": "gemini-0.61.0", "opencode": "opencode-1.18.33"}


@pytest.mark.parametrize("family", sorted(PINNED))
def test_every_screen_of_each_familys_pinned_release_reads_as_labelled(family):
    readings = read_all(FAMILIES[family], PANES / PINNED[family])
    assert len(readings) >= 40
    assert [(r.screen, r.problems) for r in readings if r.problems] == []


def _relabel(folder, name: str, **expected) -> None:
    path = next(folder.glob(f"*/*/{name}.json"))
    meta = json.loads(path.read_text())
    meta["expected"] = expected
    path.write_text(json.dumps(meta))


def test_a_screen_that_reads_differently_is_named_and_one_that_needs_you_read_as_idle_is_marked_missed(tmp_path):
    """Two labels changed in a copy of Codex's corpus: an idle screen labelled a permission (what a release that
    redraws its dialog beyond the reader would look like), and a permission's tool renamed."""
    out = tmp_path / "codex"
    shutil.copytree(PANES / PINNED["codex"] / "alt" / "80x24", out / "alt" / "80x24")
    _relabel(out, "idle_fresh", state="permission")
    permission = json.loads(next(out.glob("*/*/permission_touch.json")).read_text())["expected"]
    _relabel(out, "permission_touch", **{**permission, "tool": "Glob"})
    readings = {r.screen: r for r in read_all(FAMILIES["codex"], out)}
    wrong = {name for name, r in readings.items() if r.problems}
    assert wrong == {"alt/80x24/idle_fresh", "alt/80x24/permission_touch"}
    assert readings["alt/80x24/idle_fresh"].missed_you and not readings["alt/80x24/permission_touch"].missed_you
    text = report(FAMILIES["codex"], "0.169.0", list(readings.values()), 0)
    assert f"{len(readings)} screens recorded, {len(readings) - 2} read as labelled" in text
    assert "MISSED alt/80x24/idle_fresh: state idle (expected permission)" in text
    assert "DIFF   alt/80x24/permission_touch: tool" in text


@pytest.mark.parametrize("family, folder", [("copilot", "copilot-1.0.102"), ("qwen", "qwen-0.24.4")])
def test_every_screen_of_the_newer_families_pinned_release_reads_as_labelled(family, folder):
    readings = read_all(FAMILIES[family], PANES / folder)
    assert len(readings) >= 27
    assert [(r.screen, r.problems) for r in readings if r.problems] == []


def _next_release(tmp_path, old: str, new: str):
    """A copy of Qwen's pinned 80x24 corpus as a made-up 0.25.0 whose screens say ``new`` where 0.24.4's said ``old``."""
    out = tmp_path / "qwen-0.25.0"
    shutil.copytree(PANES / "qwen-0.24.4" / "alt" / "80x24", out / "alt" / "80x24")
    for path in out.glob("*/*/*"):
        if path.suffix in (".ansi", ".txt"):
            path.write_text(path.read_text().replace(old, new))
    return out


def test_a_release_that_only_renamed_a_word_is_said_to_need_a_words_change(tmp_path):
    out = _next_release(tmp_path, "Waiting for user confirmation", "Awaiting your approval")
    readings = read_all(FAMILIES["qwen"], out)
    dialogs = {"alt/80x24/permission_shell", "alt/80x24/permission_long_command", "alt/80x24/permission_auto_fallback", "alt/80x24/question"}
    assert {r.screen for r in readings if r.problems} == dialogs
    change = kind_of_change(FAMILIES["qwen"], "0.25.0", out, readings)
    assert change.startswith("a words change may do (detect/qwen/words/)") and "dialog.waiting 'Waiting for user confirmation'" in change
    assert "what it needs: a words change may do" in report(FAMILIES["qwen"], "0.25.0", readings, 0, change)


def test_a_release_whose_words_are_all_still_there_is_said_to_need_code(tmp_path):
    """Every word still drawn, but a label that no longer fits: the shape changed (here: a screen relabelled)."""
    out = _next_release(tmp_path, "", "")
    _relabel(out, "idle", state="working")
    readings = read_all(FAMILIES["qwen"], out)
    assert {r.screen for r in readings if r.problems} == {"alt/80x24/idle"}
    assert kind_of_change(FAMILIES["qwen"], "0.25.0", out, readings).startswith("every word the last release showed is still shown")
    assert kind_of_change(FAMILIES["codex"], "0.170.0", out, readings).startswith("its screen words are in its reader's code")
