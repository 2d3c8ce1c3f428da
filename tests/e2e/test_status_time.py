"""``headspace status`` says how long each agent has been in its state (issue 37), and says so only when something dates it.

Claude's own status file dates a real Claude's state; an agent nothing of
Claude's dates is dated by the event log of an earlier headspace run that saw
it enter the same state, else its time is unknown ("?", null), never "0s".
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from headspace_tui.model import AgentState
from headspace_tui.service.records.journal import Journal
from headspace_tui.state.eventlog import EventLog
from headspace_tui.state.eventlog import default_path as events_path
from tests.e2e.test_one_clock import claudes_status
from tests.harness import fake_api as api
from tests.harness.cli import headspace
from tests.harness.scenarios import NUMBERED_MENU
from tests.harness.wait import poll
from tests.ui.apps import make_app, wait_until

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
FAKE_AGENT = REPO / "benchmarks" / "fake_agent.py"  # draws recorded Claude screens; no status file of its own
CORPUS = REPO / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "120x40"


def rows(tmux_name: str) -> dict[str, dict]:
    return {row["target"]: row for row in map(json.loads, headspace("status", "--json", "-L", tmux_name).stdout.splitlines())}


def test_status_gives_a_real_claudes_time_in_state_from_its_own_word(claude_session, fake_api, private_tmux):
    fake_api.set_script([api.bash("touch x.txt", "Make x")])
    session = claude_session(name="perm")
    session.submit("make x")
    session.wait_for(NUMBERED_MENU, what="permission")
    poll(lambda: claudes_status(session.home).status, lambda status: status == "waiting", timeout=10)  # Claude's own 'waiting'
    time.sleep(2)  # some time in the state, so that it shows
    before = time.time()
    row = rows(private_tmux.name)["perm:0.0"]
    after = time.time()
    claimed = claudes_status(session.home).updated_at
    assert row["state"] == "permission" and row["since_source"] == "status-file"
    # Counted from Claude's word, at a moment while the command ran (rounded to 0.1 s): however long it took under load.
    assert before - claimed - 0.1 <= row["in_state_for"] <= after - claimed + 0.1, (row, claimed, before, after)
    assert row["in_state_for"] >= 2.0
    text = headspace("status", "-L", private_tmux.name).stdout
    line = next(line for line in text.splitlines() if line.startswith("perm:0.0"))
    shown = line.split()[3]  # target, pane, family, time
    assert shown.endswith("s") and shown[:-1].isdigit() and int(shown[:-1]) >= 2, line


def test_an_agent_nothing_dates_is_unknown_until_a_headspace_logged_it(private_tmux, tmp_path, monkeypatch):
    """A stand-in with no status file: "?" and null, never a made-up 0s; after the app watched it, the event log's time."""
    # An event log of this test's own: the session's shared XDG_STATE_HOME may hold one an earlier test's app wrote.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    command = ["bash", "-c", f"exec -a claude {sys.executable} -S {FAKE_AGENT} {CORPUS} {tmp_path}"]
    pane = private_tmux.new_session("stand", width=120, height=40, cwd=str(tmp_path), command=command)
    poll(lambda: private_tmux.capture(pane), lambda screen: "❯" in screen, timeout=10)  # the stand-in's idle screen

    row = rows(private_tmux.name)["stand:0.0"]
    assert row["state"] == "idle" and row["in_state_for"] is None and row["since_source"] is None
    line = next(line for line in headspace("status", "-L", private_tmux.name).stdout.splitlines() if line.startswith("stand:0.0"))
    assert line.split()[3] == "?", line
    assert not events_path().exists()  # a one-shot look never creates the event log

    seen: dict[str, float] = {}

    async def watch_once() -> None:
        app = make_app(private_tmux.name, tmp_path, journal=Journal(EventLog(events_path())))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: pane in app.table.agents and app.table.agents[pane].state is AgentState.IDLE, "the idle row", 30)
            seen["since"] = app.table.agents[pane].since

    asyncio.run(watch_once())
    time.sleep(1.5)
    before = time.time()
    row = rows(private_tmux.name)["stand:0.0"]
    after = time.time()
    assert row["since_source"] == "journal", row
    # The logged time, counted at a moment while the command ran (rounded to 0.1 s): however long it took under load.
    assert before - seen["since"] - 0.1 <= row["in_state_for"] <= after - seen["since"] + 0.1, (row, seen, before, after)
