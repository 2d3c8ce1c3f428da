"""A question typed before its list of choices needs you, in the app, on the real Claude (issue 37).

Claude's status file calls the end of such a turn plain ``idle``; the screen
decides ``input``.  The row must say so (and count it among those that need
you), and ``r`` must reply to it.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from textual.widgets import Input

from headspace_tui.app.screens.reply import ReplyScreen
from headspace_tui.model import AgentState
from tests.harness import fake_api as api
from tests.harness.scenarios import INPUT_BEFORE_LIST, TURN_DONE
from tests.ui.apps import screen_open, wait_until
from tests.ui.test_app_live import app_for, run, select_agent

pytestmark = pytest.mark.e2e


def claude_says(session) -> str:
    """The status in Claude's own status file ("" while there is none, or it is caught half-written)."""
    for path in (session.home / ".claude" / "sessions").glob("*.json"):
        try:
            return str(json.loads(path.read_text()).get("status", ""))
        except (OSError, ValueError):
            continue
    return ""


def test_a_question_before_a_list_reads_input_and_r_answers_it(claude_session, fake_api, private_tmux):
    session = claude_session([api.text(INPUT_BEFORE_LIST), api.text("Looking at the cache test.")])
    session.submit("run the tests")
    session.wait_for(lambda s: "under load" in s and TURN_DONE.search(s) is not None, what="the question and its list")

    async def scenario():
        app = app_for(private_tmux, session)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.INPUT)
            agent = app.table.agents[session.pane_id]
            assert agent.observation.question == "I found three failing tests. Which one should I look at first?"
            assert agent.state.needs_you
            # Claude's own word is "idle" (once it has rewritten its file): the screen is what tells that it asks.
            await wait_until(pilot, lambda: claude_says(session) == "idle", "Claude's status file to say idle")
            await pilot.pause(0.3)  # a read of the pane after the file changed
            assert app.table.agents[session.pane_id].state is AgentState.INPUT
            await pilot.press("r")
            await wait_until(pilot, lambda: screen_open(app, ReplyScreen) and isinstance(app.focused, Input), "the reply box, open and focused")
            await pilot.press(*"the cache one", "enter")
            request = await asyncio.to_thread(fake_api.wait_for, lambda r: "the cache one" in r.user_text(), 30)
            assert request.tool_results() == []

    run(scenario())
