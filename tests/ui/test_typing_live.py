"""Typing into a real Claude from the app: a free-text answer to a question (``r``), a prompt through input mode (``i``).

Each test brings a real Claude session (with the scripted API) to where the
user types, then drives the real app with Textual's pilot on the same
private tmux server.  What counts is what Claude sent on to the API: the
typed answer in the question's tool result, the typed prompt as the next
user message.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Input

from headspace_tui.app.input_mode import LEAVE_KEY
from headspace_tui.app.screens.reply import ReplyScreen
from headspace_tui.app.widgets.preview import PanePreview
from headspace_tui.hooks import settings as hook_settings
from headspace_tui.model import AgentState, Channel
from tests.e2e.test_answer_channel import app_for as hooked_app
from tests.e2e.test_answer_channel import private_runtime, record_keys
from tests.harness import fake_api as api
from tests.harness.fake_api import block_text
from tests.harness.scenarios import QUESTION_DB, QUESTION_FEATURES, TURN_DONE
from tests.ui.apps import live_row, screen_open, wait_until
from tests.ui.test_app_live import app_for, run, select_agent

pytestmark = pytest.mark.e2e

ANSWER = "3 nodes of MariaDB, please"  # a digit first: typed before the field opened, it would pick option 3 itself


@pytest.mark.parametrize("answer_hook", [False, True], ids=["keys-only", "hook-holds-the-dialog"])
def test_r_on_a_question_types_into_its_own_free_text_option(claude_session, fake_api, private_tmux, tmp_path, answer_hook):
    """With Claude's answer hook holding the dialog too: a typed answer still goes by keys, and the hook lets go."""
    runtime = private_runtime(tmp_path)
    fake_api.set_script([api.ask(QUESTION_DB, QUESTION_FEATURES), api.text("MariaDB it is.")])
    session = claude_session((), launch=False, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
    if answer_hook:
        hook_settings.install(session.home / ".claude" / "settings.json", answer_wait=120)
    session.launch()

    async def scenario() -> None:
        app = hooked_app(private_tmux, session, runtime)
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_until(pilot, lambda: session.pane_id in app.table.agents, "the row")
            await asyncio.to_thread(session.submit, "pick a database")
            await asyncio.to_thread(session.wait_for, "Enter to select", timeout=30, what="the question dialog")
            if answer_hook:
                await wait_until(pilot, lambda: app.table.agents[session.pane_id].channel == Channel.HOOK, "the hook holding the question")
            sent = record_keys(app)
            await select_agent(pilot, app, session.pane_id, AgentState.QUESTION)
            assert app.main.check_action("reply", ())
            agent = app.selected_agent()
            assert agent.observation.prompt.free_text == "3" and agent.observation.prompt.question_index == 1
            await pilot.press("r")
            await wait_until(pilot, lambda: screen_open(app, ReplyScreen) and isinstance(app.focused, Input), "the reply box, open and focused")
            await pilot.press(*ANSWER, "enter")
            # The box closes once the answer is confirmed: Claude moved on to the second question.
            await wait_until(pilot, lambda: not screen_open(app, ReplyScreen), "the reply box to close once delivered", timeout=15)
            row = live_row(app, session.pane_id)
            await wait_until(pilot, lambda: row.answered.startswith("by keys") and ANSWER in row.answered, f"the row to say how it was answered (it says {row.answered!r})")
            await asyncio.to_thread(session.wait_for, "Which features should ship first?", timeout=15, what="the second question")
            # The second question is multi-select: in the pane, 3 ticks Search, Tab goes on to the review, 1 submits.
            await asyncio.to_thread(session.answer, "3")
            await asyncio.to_thread(session.wait_for, "[✔] Search", timeout=15, what="Search ticked")
            await asyncio.to_thread(session.answer, "Tab")
            await asyncio.to_thread(session.wait_for, "Review your answers", timeout=15, what="the review")
            await asyncio.to_thread(session.answer, "1")
            request = await asyncio.to_thread(fake_api.wait_for, lambda r: bool(r.tool_results()), 30)
            result = block_text(request.tool_results()[0])
            assert f'"Which database should we use?"="{ANSWER}"' in result, result
            assert "Postgres" not in result and "SQLite" not in result
            assert [args[1:] for args in sent] == [("3",), (ANSWER,), ("Enter",)], sent

    run(scenario())


def test_a_prompt_typed_in_input_mode_reaches_claude(claude_session, fake_api, private_tmux):
    session = claude_session([api.text("First part done."), api.text("Hello from Claude.")])
    session.submit("do the first part")
    session.wait_for(lambda s: "First part done." in s and TURN_DONE.search(s) is not None, what="the first turn")

    async def scenario() -> None:
        app = app_for(private_tmux, session)
        async with app.run_test(size=(160, 48)) as pilot:
            sent = record_keys(app)
            await select_agent(pilot, app, session.pane_id, AgentState.IDLE)
            assert app.main.check_action("input_mode", ())
            await pilot.press("i")
            screen = app.main
            await wait_until(pilot, lambda: screen.input_mode.link is not None, "input mode's link to the pane")
            assert screen.query_one(PanePreview).has_class("-input")
            # y, n and c are agent keys outside input mode; here they are letters of the prompt.
            await pilot.press(*"say hellx", "backspace", *"o: yes, no, continue")
            await screen.input_mode.sent()
            await asyncio.to_thread(session.wait_for, "say hello: yes, no, continue", timeout=10, what="the prompt in Claude's input box")
            await pilot.press("enter")
            request = await asyncio.to_thread(fake_api.wait_for, lambda r: "say hello: yes, no, continue" in r.user_text(), 30)
            assert request.tool_results() == []
            await pilot.press(LEAVE_KEY)
            await wait_until(pilot, lambda: not screen.input_mode.active, "input mode to end")
            assert all(args[0] == session.pane_id for args in sent)
            assert not any("\x1d" in str(args) for args in sent)

    run(scenario())
