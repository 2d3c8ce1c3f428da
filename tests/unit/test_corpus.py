"""The recorded screen corpus is complete and says what it shows.

Each screen was recorded from the real binary by ``python -m
tests.harness.record``; these checks make sure none is missing, each file
agrees with its siblings and with the scenario that produced it, and the
screen really contains the prompt its label claims (so a broken recording
cannot hide behind a correct-looking JSON file).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.harness.record import DEFAULT_OUT, RENDERERS, SIZES, plain_text
from tests.harness.scenarios import SCENARIOS, STATES

CASES = [(sc, w, h, r) for sc in SCENARIOS for (w, h) in SIZES for r in RENDERERS]
IDS = [f"{r}-{w}x{h}-{sc.name}" for sc, w, h, r in CASES]


def files(scenario, width, height, renderer) -> tuple[Path, Path, Path]:
    base = DEFAULT_OUT / renderer / f"{width}x{height}" / scenario.name
    return base.with_suffix(".ansi"), base.with_suffix(".txt"), base.with_suffix(".json")


@pytest.mark.parametrize("scenario,width,height,renderer", CASES, ids=IDS)
def test_screen_is_recorded_and_consistent(scenario, width, height, renderer):
    ansi_path, text_path, json_path = files(scenario, width, height, renderer)
    ansi, text, meta = ansi_path.read_text(), text_path.read_text(), json.loads(json_path.read_text())

    assert meta["scenario"] == scenario.name and meta["renderer"] == renderer
    assert (meta["width"], meta["height"]) == (width, height)
    assert meta["expected"] == {"state": scenario.state, **scenario.expected}, "re-record: the scenario changed"
    assert text == plain_text(ansi)
    assert "\x1b[" in ansi, "an -e capture of Claude always carries colours"
    lines = text.split("\n")
    assert len(lines) in (height, height + 1)  # capture-pane ends with a newline
    assert max(cell_len(line) for line in lines) <= width
    assert 0 <= meta["cursor"]["x"] <= width and 0 <= meta["cursor"]["y"] < height


@pytest.mark.parametrize("scenario,width,height,renderer", CASES, ids=IDS)
def test_screen_shows_what_its_label_claims(scenario, width, height, renderer):
    _, text_path, json_path = files(scenario, width, height, renderer)
    text, meta = text_path.read_text(), json.loads(json_path.read_text())
    flat = re.sub(r"\s+", " ", text)
    state = meta["expected"]["state"]

    claude_in_front = state != "exited"
    assert (meta["pane_command"] == "claude") is claude_in_front
    if renderer == "inline":
        assert meta["alternate_on"] is False
    elif state in ("idle", "working", "permission", "question", "plan", "input", "error"):
        assert meta["alternate_on"] is True

    if state == "permission":
        assert re.search(r"❯ 1\. Yes", text)
    if state == "plan":
        assert "Would you like to proceed?" in flat
    if state == "question":
        assert meta["expected"]["question"] in flat
        assert re.search(r"1\. (\[ \] )?" + re.escape(meta["expected"]["options"][0]), text)
    if state == "error":
        assert ("retrying in" in text) is meta["expected"]["retrying"]
    if state == "input":
        assert "leave them alone?" in flat
    if state == "exited":
        assert re.search(r"tester@box:\S*[$#]\s*$", text.rstrip())


def test_every_state_is_covered_at_every_size_in_both_renderers():
    for renderer in RENDERERS:
        for width, height in SIZES:
            folder = DEFAULT_OUT / renderer / f"{width}x{height}"
            states = {json.loads(p.read_text())["expected"]["state"] for p in folder.glob("*.json")}
            assert states == set(STATES), f"{folder}: missing {set(STATES) - states}"
