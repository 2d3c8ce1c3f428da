"""Remarks on a diff, live: the one prompt reaches a real Claude through the reply's path, and a draft in its box stops it.

Real Claude Code in a private tmux server against the scripted API; the
diff view's fetcher is a real ``git diff`` (the service's ``changes`` is
built apart).  What counts is what reached the API (the prompt, whole, once;
then nothing) and what the view keeps (nothing once delivered; the remarks
and the reason when refused).
"""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Static

from headspace_tui.app.screens.diff_view import DiffScreen
from headspace_tui.app.widgets.diff_body import DiffBody
from headspace_tui.changes.remarks import prompt
from headspace_tui.model import AgentState
from tests.harness import fake_api as api
from tests.harness.scenarios import TURN_DONE
from tests.ui.apps import make_app, screen_open, wait_until
from tests.ui.test_app_live import select_agent
from tests.ui.test_diff_view import Fetcher, line_row, real_diffs, with_changes

pytestmark = pytest.mark.e2e

DRAFT = "half-written thought about the parser"


def test_remarks_reach_claude_as_one_prompt_and_a_draft_in_its_box_stops_them(claude_session, fake_api, private_tmux, tmp_path):
    turn, _ = real_diffs(tmp_path)
    session = claude_session([api.text("First part done."), api.text("Fixed both.")])
    session.submit("do the first part")
    session.wait_for(lambda s: "First part done." in s and TURN_DONE.search(s) is not None, what="the first turn")

    async def scenario():
        app = make_app(private_tmux.name, session.root, claude_home=session.home)
        with_changes(app, Fetcher({"turn": turn}))
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.IDLE)
            await pilot.press("d")
            await wait_until(pilot, lambda: screen_open(app, DiffScreen) and app.screen.diff is not None and not app.screen.loading, "the diff view")
            view = app.screen
            assert isinstance(view, DiffScreen)
            body = view.query_one(DiffBody)
            body.move_to(line_row(view, "app.py", "+", 2))
            await pilot.press("c", *"use four spaces", "enter")
            body.move_to(line_row(view, "[b]notes.md", "+", 1))
            await pilot.press("m", "j", "m", *"drop [this]", "enter")
            text = prompt(view.remarks)
            assert "\x1b" not in text and "\t" not in text and "␛[31m" in text
            status = view.query_one("#status", Static)
            for _try in range(40):  # a refusal that passes (the last key's confirm time, a redraw) is tried again, as a user would
                await pilot.press("s")
                await wait_until(pilot, lambda: not view.remarks or "not sent" in str(status.render()), "the remarks sent or refused", timeout=30)
                if not view.remarks or fake_api.main_requests and "use four spaces" in fake_api.main_requests[-1].user_text():
                    break
                await pilot.pause(0.25)
            request = await asyncio.to_thread(fake_api.wait_for, lambda r: "use four spaces" in r.user_text(), 45)
            assert text in request.user_text() and "drop [this]" in request.user_text()
            await wait_until(pilot, lambda: not view.remarks, "the remarks cleared once delivered", timeout=30)
            session.wait_for(lambda s: "Fixed both." in s and TURN_DONE.search(s) is not None, what="the second turn")

            # A draft in Claude's box: the remarks are refused, kept, and the reason said in one line.
            session.type(DRAFT)
            session.wait_for(lambda s: DRAFT in s, what="the draft in the box")
            asked = len(fake_api.main_requests)
            body.move_to(line_row(view, "app.py", "+", 6))
            await pilot.press("c", *"and this", "enter")
            await wait_until(pilot, lambda: app.table.agents[session.pane_id].state is AgentState.IDLE, "idle with its draft")
            for _try in range(40):  # the answerer waits out its confirm time after the last answer first, as for r ("s tries again")
                await pilot.press("s")
                await wait_until(pilot, lambda: "not sent" in str(status.render()), "a refusal")
                if "waiting to see what the last key did" not in str(status.render()):
                    break
                await pilot.pause(0.25)
            assert "holds text you did not send" in str(status.render()), status.render()
            assert "\n" not in str(status.render()) and len(view.remarks) == 1
            assert len(fake_api.main_requests) == asked

    asyncio.run(scenario())
    assert DRAFT in session.screen()
