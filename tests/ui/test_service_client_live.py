"""The app as a client of a real resident service (``headspace serve``, its own process), with real Claude Code: the keys do what they do in-process.

* ``y`` on a Bash permission goes through the service's answerer and guard:
  Claude runs the command, the answer's reports come back to this client
  (and only the final one says how it went), and the inbox moves on.
* ``y`` pressed again on the agent once it has moved on sends nothing.
* Input mode types into Claude's box through the service's WebSocket.
* The why view and a snooze are answered by the service.
"""

from __future__ import annotations

import asyncio

import pytest

from headspace_tui.answering.answerer import Report
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.why import WhyScreen
from headspace_tui.model import AgentState
from headspace_tui.resident.facade_client import ServiceClient
from headspace_tui.shared.config import Config
from headspace_tui.shared.resident_place import place_of
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_resident_service import started
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU
from tests.ui.apps import screen_open
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

            await pilot.press("y")
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
            await pilot.press("ctrl+right_square_bracket")
            await until(pilot, lambda: app.main.input_mode.pane_id is None, lambda: "input mode left")

    asyncio.run(scenario())
