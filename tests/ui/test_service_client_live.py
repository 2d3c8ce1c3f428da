"""The app as a client of a real resident service (``headspace serve``, its own process), with real Claude Code: the keys do what they do in-process.

* ``y`` on a Bash permission goes through the service's answerer and guard:
  Claude runs the command, the answer's reports come back to this client
  (and only the final one says how it went), and the inbox moves on.
* ``y`` pressed again on the agent once it has moved on sends nothing.
* Input mode types into Claude's box through the service's WebSocket.
* The why view is answered by the service.
* Batch approve (``A``) approves the identical hooked requests through
  their hooks, by the service's answerer, and leaves a different one.
"""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from headspace_tui.answering.answerer import Report
from headspace_tui.api.facade import KeyStroke
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.batch import BatchApproveScreen
from headspace_tui.app.screens.why import WhyScreen
from headspace_tui.hooks import settings as hook_settings
from headspace_tui.model import AgentState
from headspace_tui.resident.facade_client import ServiceClient
from headspace_tui.shared.config import Config
from headspace_tui.shared.resident_place import place_of
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_answer_channel import WAIT, ready_to_answer
from tests.e2e.test_resident_service import started
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU
from tests.ui.apps import press_as_a_person, screen_open
from tests.ui.test_inbox_live import wait_until as until

pytestmark = pytest.mark.e2e


def test_keys_answer_through_the_service_as_they_do_in_process(claude_session, private_tmux, tmp_path, services):
    session = claude_session([api.bash("touch through-service.txt", "Create a file"), api.text("Created it.")], name="asking")
    session.submit("create a file")
    session.wait_for(NUMBERED_MENU, timeout=60)
    started(private_tmux.name, services)
    client = ServiceClient(place_of(TmuxServer(socket_name=private_tmux.name).identity), config=Config())
    client.connect()
    assert [a.state for a in client.agents()] == [AgentState.PERMISSION]  # before the app: its first frame draws from this

    async def scenario() -> None:
        app = HeadspaceApp(client)
        async with app.run_test(size=(140, 44)) as pilot:
            table = app.table
            assert list(table.agents) == [session.pane_id] and table.agents[session.pane_id].state is AgentState.PERMISSION
            reports: list[Report] = []
            client.on_answer_report(reports.append)

            def row() -> str:
                agent = table.agents.get(session.pane_id)
                return f"{agent.state.value if agent else 'gone'}; reports {reports}"

            await until(pilot, lambda: table.selected_pane_id == session.pane_id, row)
            await pilot.pause(0.5)  # a reaction time on the prompt
            await pilot.press("e")
            await until(pilot, lambda: screen_open(app, WhyScreen), lambda: "the why view")
            why = app.screen
            assert isinstance(why, WhyScreen) and why.explanation is not None and why.channel is not None  # the service's readings, not "none yet"
            assert "screen" in dict(why.explanation.verdicts) and why.explanation.verdicts[0][1].observation.state is not None
            await pilot.press("escape")

            await press_as_a_person(pilot, app, session.pane_id, "y", lambda: any(r.final for r in reports), "the answer's final report", timeout=60)
            await until(pilot, lambda: any(r.final for r in reports), lambda: f"the answer's final report: {row()}")
            assert [r.pane_id for r in reports] == [session.pane_id] * len(reports) and reports[-1].delivered, reports
            assert not reports[0].final or len(reports) == 1
            await asyncio.to_thread(session.wait_for, "Created it.", timeout=30)
            assert (session.workdir / "through-service.txt").exists()
            await until(pilot, lambda: table.agents[session.pane_id].state is AgentState.IDLE, row)

            said = len(reports)
            await pilot.press("y")  # nothing waits for an answer now
            await pilot.pause(1.0)
            assert len(reports) == said, reports

            await pilot.press("i")
            await until(pilot, lambda: app.main.input_mode.link is not None, lambda: "input mode's session")
            for letter in "typed via service":
                await pilot.press("space" if letter == " " else letter)
            await app.main.input_mode.link.wait_sent()
            await asyncio.to_thread(session.wait_for, "typed via service", timeout=15)
            app.main.input_mode.link.send(KeyStroke((" " + "é" * 4000,), literal=True))  # a paste of 24 KB as JSON: more than one message takes
            await app.main.input_mode.link.wait_sent()
            await asyncio.to_thread(session.wait_for, re.compile("éééééééé|Pasted text"), timeout=15)
            await pilot.pause(0.5)
            assert app.main.input_mode.pane_id == session.pane_id, "input mode ended on a long paste"
            await pilot.press("ctrl+right_square_bracket")
            await until(pilot, lambda: app.main.input_mode.pane_id is None, lambda: "input mode left")

    asyncio.run(scenario())


def test_batch_approve_goes_through_the_services_hooks_and_leaves_the_odd_one(claude_session, fake_api, private_tmux, services):
    """``A`` on one of two identical hooked requests: the service's answerer approves both through their hooks; a third, different one waits."""
    same, other = "touch same.txt && echo batch-ok", "touch other.txt"
    fake_api.set_script([api.bash(same, "Same"), api.bash(same, "Same"), api.bash(other, "Other")] + [api.text("Done.")] * 3)
    runtime = {"XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"]}  # the service's: its answer socket is where the hooks look
    sessions = []
    for n in range(3):
        session = claude_session((), launch=False, name=f"batch{n}", extra_env=runtime)
        hook_settings.install(session.home / ".claude" / "settings.json", answer_wait=WAIT)
        session.launch()
        sessions.append(session)
    started(private_tmux.name, services)
    for session in sessions:  # one after the other: the scripted API answers them in this order
        session.submit("make the file")
        session.wait_for(NUMBERED_MENU, timeout=60)
    client = ServiceClient(place_of(TmuxServer(socket_name=private_tmux.name).identity), config=Config())
    client.connect()

    async def scenario() -> None:
        app = HeadspaceApp(client)
        async with app.run_test(size=(160, 48)) as pilot:
            reports: list[Report] = []
            client.on_answer_report(reports.append)
            for session in sessions:
                await ready_to_answer(pilot, app, session.pane_id, AgentState.PERMISSION)
            app.table.select(sessions[0].pane_id)
            await until(pilot, lambda: app.table.selected_pane_id == sessions[0].pane_id, lambda: "the cursor on the first")
            await press_as_a_person(pilot, app, sessions[0].pane_id, "A", lambda: isinstance(app.screen, BatchApproveScreen), "the confirmation")
            listed = {agent.pane_id: call.detail for agent, call in app.screen.pairs}
            assert listed == {s.pane_id: same for s in sessions[:2]}
            await pilot.press("y")
            for session in sessions[:2]:
                await asyncio.to_thread(session.wait_for, "Allowed by PermissionRequest hook", timeout=20)
            await pilot.pause(1.0)  # an approval that reached the third would show by now
            assert app.table.agents[sessions[2].pane_id].state is AgentState.PERMISSION
            finals = lambda: {r.pane_id for r in reports if r.final and r.delivered}  # noqa: E731
            await until(pilot, lambda: finals() == {s.pane_id for s in sessions[:2]}, lambda: f"each approval's report, to this client: {reports}")

    asyncio.run(scenario())
    assert all((s.workdir / "same.txt").exists() for s in sessions[:2]) and not (sessions[2].workdir / "other.txt").exists()
    assert NUMBERED_MENU.search(sessions[2].screen())
