"""Issue 37's papercuts: each one seen by a k9s/lazygit user, each with the check that it is gone."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

from headspace_tui.app.widgets.summary import SummaryLine, summary_text
from headspace_tui.model import Agent, AgentState, Observation
from tests.ui.apps import make_app, wait_until

REPO = Path(__file__).resolve().parents[2]
FAKE_AGENT = REPO / "benchmarks" / "fake_agent.py"  # draws real recorded Claude screens; SIGUSR2: the permission menu
CORPUS = REPO / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "120x40"


def run(coro):
    return asyncio.run(coro)


# -- until the first full look the header says it is still looking --------------------------------


def test_the_header_says_looking_while_starting_not_a_count():
    agents = [Agent(pane_id="%1", target="api:0.0", session="api", observation=Observation(AgentState.PERMISSION))]
    line = summary_text(agents, "starting", None).plain
    assert line == "headspace  looking…"
    assert "agent" not in summary_text([], "starting", None).plain  # never "0 agents"
    assert summary_text(agents, None, None).plain.startswith("headspace  1 agent  ·  1 needs you")


def test_from_the_first_frame_the_header_never_under_counts_who_needs_you(private_tmux, tmp_path, monkeypatch):
    """Three agents on a real tmux server (stand-ins drawing recorded Claude screens), two at a permission menu.

    Every line the header shows from the app's first frame is either "looking…"
    or the whole count: never "0 agents", never fewer than two needing you.
    """
    results = tmp_path / "results"
    results.mkdir()
    command = ["bash", "-c", f"exec -a claude {sys.executable} -S {FAKE_AGENT} {CORPUS} {results}"]
    panes = [private_tmux.new_session(f"agent{n}", width=120, height=40, cwd=str(tmp_path), command=command) for n in range(3)]
    for pane in panes:  # each stand-in has drawn its idle screen: its signal handlers are set
        _wait(lambda pane=pane: "❯" in private_tmux.run("capture-pane", "-p", "-t", pane), f"{pane} drawn")
    for pane in panes[:2]:
        os.kill(int(private_tmux.run("display-message", "-p", "-t", pane, "#{pane_pid}").strip()), signal.SIGUSR2)
    _wait(lambda: len(list(results.glob("*.drawn"))) == 2, "both menus drawn")  # before headspace starts

    shown: list[str] = []
    real_show = SummaryLine.show

    def recording_show(self, text):  # records what the header is asked to show; shows it as before
        shown.append(text.plain)
        real_show(self, text)

    monkeypatch.setattr(SummaryLine, "show", recording_show)

    async def scenario():
        app = make_app(private_tmux.name, tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: shown and "3 agents" in shown[-1], "the header to count three agents", 30)

    run(scenario())
    assert shown[0] == "headspace  looking…", shown[:3]
    counted = [line for line in shown if line != "headspace  looking…"]
    assert counted, shown
    for line in counted:
        assert line.startswith("headspace  3 agents  ·  2 need you"), shown


def _wait(predicate, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
