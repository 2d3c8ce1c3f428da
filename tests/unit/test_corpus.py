"""The recorded screen corpus is complete and says what it shows, for every version.

Each screen was recorded from the real binary by ``python -m
tests.harness.record --version V``; these checks make sure none is missing,
each file agrees with its siblings and with the scenario that produced it,
and the screen really shows what its label claims, in words any version uses
(so a broken recording cannot hide behind a correct-looking JSON file).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.harness.record import PANES, SIZES, corpus_dir, plain_text, planned
from tests.harness.scenarios import SCENARIOS, STATES
from tests.harness.versions import PARTIAL, RECORDED, RELEASED, renderers

CASES = [(v, sc, w, h, r) for v in RECORDED for (sc, w, h, r) in planned(v)]
IDS = [f"{v}-{r}-{w}x{h}-{sc.name}" for v, sc, w, h, r in CASES]


def files(version, scenario, width, height, renderer) -> tuple[Path, Path, Path]:
    base = corpus_dir(version) / renderer / f"{width}x{height}" / scenario.name
    return base.with_suffix(".ansi"), base.with_suffix(".txt"), base.with_suffix(".json")


def test_the_versions_span_at_least_nine_months_of_releases():
    assert len(RECORDED) >= 4
    released = sorted(dt.date.fromisoformat(RELEASED[v]) for v in RECORDED)
    assert (released[-1] - released[0]).days >= 270
    on_disk = sorted(p.name.removeprefix("claude-") for p in PANES.glob("claude-*"))
    assert on_disk == sorted(RECORDED)
    # No stray files: every screen on disk is one the scenarios ask for.
    wanted = {str(files(*case)[2]) for case in CASES}
    assert {str(p) for p in PANES.glob("claude-*/*/*/*.json")} <= wanted


@pytest.mark.parametrize("version,scenario,width,height,renderer", CASES, ids=IDS)
def test_screen_is_recorded_and_consistent(version, scenario, width, height, renderer):
    ansi_path, text_path, json_path = files(version, scenario, width, height, renderer)
    ansi, text, meta = ansi_path.read_text(), text_path.read_text(), json.loads(json_path.read_text())

    assert meta["claude_version"] == version
    assert meta["scenario"] == scenario.name and meta["renderer"] == renderer
    assert (meta["width"], meta["height"]) == (width, height)
    assert meta["expected"] == {"state": scenario.state, **scenario.expected}, "re-record: the scenario changed"
    assert text == plain_text(ansi)
    assert "\x1b[" in ansi, "an -e capture of Claude always carries colours"
    lines = text.split("\n")
    assert len(lines) in (height, height + 1)  # capture-pane ends with a newline
    assert max(cell_len(line) for line in lines) <= width
    assert 0 <= meta["cursor"]["x"] <= width and 0 <= meta["cursor"]["y"] < height


@pytest.mark.parametrize("version,scenario,width,height,renderer", CASES, ids=IDS)
def test_screen_shows_what_its_label_claims(version, scenario, width, height, renderer):
    _, text_path, json_path = files(version, scenario, width, height, renderer)
    text, meta = text_path.read_text(), json.loads(json_path.read_text())
    flat = re.sub(r"\s+", " ", text)
    expected = meta["expected"]
    state = expected["state"]

    assert (meta["pane_command"] == "claude") is (state != "exited")
    if renderer == "inline":
        assert meta["alternate_on"] is False
    elif state in ("idle", "working", "permission", "question", "plan", "input", "error"):
        assert meta["alternate_on"] is True

    menu = re.search(r"❯ 1\. ", text)
    running = re.search(r"esc to interrupt", text, re.I)
    if state == "permission" and expected.get("tool") == "Auto mode":
        # Auto mode's gateway dialog (issue 53): keys named in its last line (cut off in a short
        # pane), no numbered menu.
        assert re.search(r"ask (whoever runs )?your gateway", flat) and not menu
    elif state == "permission":
        assert menu and re.search(r"❯ 1\. Yes", text)
        assert re.sub(r"\s+", "", expected["detail"]) in re.sub(r"[\s│]+", "", text)
    if state == "plan":
        assert menu and re.search(r"\bplan\b", text, re.I)
    if state == "question":
        shown = [n for n, label in enumerate(expected["options"], 1) if re.search(rf"{n}\. (\[[ ✔]\] )?{re.escape(label)}", text)]
        if expected["question"] in flat:
            assert 1 in shown
        else:
            # A dialog taller than the pane scrolls inside itself (issue 23): its
            # top (the question, maybe option 1 too) is out of view, said by a
            # "↑ 3 more lines" marker or plain from option 1 missing (2.1.160 and
            # 2.1.250 draw no marker at 60x20); the options in view sit at their
            # own numbers, above the question's footer.
            assert shown and "Enter to select" in text
            assert 1 not in shown or re.search(r"↑ \d+ more lines?", text)
    if "ticked" in expected:  # the boxes the scenario ticked are drawn ticked, the others empty
        for n, label in enumerate(expected["options"], 1):
            assert re.search(rf"{n}\. \[{'✔' if str(n) in expected['ticked'] else ' '}\] {re.escape(label)}", text)
    if expected.get("review"):  # Claude's last tab: every answer listed, then Submit / Cancel
        assert "Review your answers" in text and re.search(r"❯ 1\. Submit answers", text)
        assert all(f"→ {answer}" in text for answer in expected["answers"].values())
    retry = re.search(r"(retry|next try).*attempt \d+/\d+", flat, re.I)  # auto mode: "next try in 7s · attempt 5/10"
    if state == "error":  # an error Claude gave up on: no retry notice, no turn running
        assert expected["retrying"] is False and not retry
        assert re.search(r"API Error|Please run /login", flat) and not running
    if expected.get("retrying"):  # Claude retries: its turn still runs (issue 23)
        assert state == "working" and retry and running
    if state == "input":
        assert re.sub(r"\s+", "", expected["question"]) in re.sub(r"\s+", "", text) and not menu and not running
    if state == "working":
        # A turn runs; or (2.1.250+) it waits for the subagent it backgrounded.
        assert (running or re.search(r"Waiting for \d+ background agents? to finish", text)) and not menu
    if state == "idle":
        assert not running
        if not scenario.name.startswith("trap_"):  # the traps show a quoted or an answered menu
            assert not menu
    if state == "starting":
        assert re.search(r"trust|API key", text)
    if state == "exited":
        assert re.search(r"tester@box:\S*[$#]\s*$", text.rstrip())


def test_the_newest_release_holds_the_canarys_whole_grid():
    # 2.1.332 came in part (what it changed); the release canary (issue 42) then
    # recorded every scenario it plays at two sizes on both renderers, then at
    # 72x22: all of it is in the corpus.
    newest = RECORDED[-1]
    held = {(sc.name, w, h, r) for sc, w, h, r in planned(newest)}
    for sc in SCENARIOS:
        if sc.applies_to(newest):
            for size in ((80, 24), (150, 45), (72, 22)):
                for renderer in renderers(newest):
                    assert (sc.name, *size, renderer) in held, (sc.name, size, renderer)


@pytest.mark.parametrize("version", [v for v in RECORDED if v not in PARTIAL])  # a version recorded in part holds its own list (planned())
def test_every_state_is_covered_at_every_size_in_every_renderer(version):
    for renderer in renderers(version):
        for width, height in SIZES:
            folder = corpus_dir(version) / renderer / f"{width}x{height}"
            states = {json.loads(p.read_text())["expected"]["state"] for p in folder.glob("*.json")}
            assert states == set(STATES), f"{folder}: missing {set(STATES) - states}"
