"""Multi-select questions answered from headspace, against the real Claude Code (issue 37).

What counts is what reaches the scripted API: the AskUserQuestion tool result
in Claude's next request must carry exactly the options chosen.  Measured on
2.1.330 first (answering/multi.py): a digit toggles a box, → goes to the next
page or Claude's "Review your answers", whose "1. Submit answers" submits.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from headspace_tui.answering.keys import ActionError, ThreadedPaneIO, read_pane, send_guarded
from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.app.widgets.agent_table import waiting_for
from headspace_tui.detect.families import CLAUDE
from headspace_tui.hooks import settings as hook_settings
from headspace_tui.model import AgentState
from headspace_tui.tmux.server import TmuxServer
from tests.harness import fake_api as api
from tests.harness.cli import headspace
from tests.harness.fake_api import block_text
from tests.harness.scenarios import NUMBERED_MENU, QUESTION_DB, QUESTION_FEATURES
from tests.ui.apps import live_row, readable, service_of

from .test_answer_channel import app_for, private_runtime, ready_to_answer, record_keys, tool_result_request, wait_until

pytestmark = pytest.mark.e2e

FEATURES = QUESTION_FEATURES["question"]


def answers(request) -> dict[str, str]:
    """What Claude's AskUserQuestion tool result says was answered: {question: answer}, exactly as sent to the API."""
    (result,) = request.tool_results()
    text = block_text(result)
    assert text.startswith("Your questions have been answered: "), text
    return dict(re.findall(r'"([^"]+)"="([^"]*)"', text))


def ticked(agent) -> tuple[str, ...]:
    prompt = agent.observation.prompt
    return prompt.ticked if prompt is not None else ()


async def press_when_ready(pilot, app, agent, key: str) -> None:
    """Press ``key`` once the answerer would take it (the last key's result seen, the prompt readable), and the table too (its row showed the page long enough)."""
    await wait_until(pilot, lambda: not service_of(app)._answerer.refusal(agent) and readable(app, agent.pane_id), f"the agent ready for {key!r}")
    await pilot.press(key)


def test_send_option_1_3_ticks_both_and_submits(claude_session, fake_api, private_tmux):
    session = claude_session([api.ask(QUESTION_FEATURES), api.text("Shipping those.")])
    session.submit("what ships first")
    session.wait_for("Enter to select", what="the multi-select question")
    session.wait_for(NUMBERED_MENU)
    done = headspace("send", session.pane_id, "--option", "1,3", "-L", private_tmux.name)
    assert "submitted" in done.stdout, done.stdout
    assert answers(tool_result_request(fake_api)) == {FEATURES: "Auth, Search"}
    session.wait_for("Shipping those.", what="Claude going on with the answer")


def test_send_goes_page_by_page_through_a_dialog_whose_first_question_is_multi_select(claude_session, fake_api, private_tmux):
    """--option 1,3 on page 1/2 ticks and goes on to 2/2 (nothing submitted yet); 2 answers it; --submit sends both from the review."""
    session = claude_session([api.ask(QUESTION_FEATURES, QUESTION_DB), api.text("Noted.")])
    session.submit("help me choose")
    session.wait_for("Enter to select", what="the first question")
    session.wait_for(NUMBERED_MENU)
    first = headspace("send", session.pane_id, "--option", "1,3", "-L", private_tmux.name)
    assert "shows question 2/2" in first.stdout, first.stdout
    session.wait_for("Which database should we use?", what="the second question")
    second = headspace("send", session.pane_id, "--option", "2", "-L", private_tmux.name)
    assert "moved on" in second.stdout, second.stdout
    session.wait_for("Review your answers", what="Claude's review of both answers")
    assert not [r for r in fake_api.main_requests if r.tool_results()]  # nothing submitted before the review's "Submit answers"
    done = headspace("send", session.pane_id, "--submit", "-L", private_tmux.name)
    assert "submitted" in done.stdout, done.stdout
    assert answers(tool_result_request(fake_api)) == {FEATURES: "Auth, Search", "Which database should we use?": "SQLite"}


def test_app_digits_tick_page_two_and_S_submits_by_keys(claude_session, fake_api, private_tmux, tmp_path):
    """Two questions, no answer hook: 1 answers question 1/2; on 2/2 (multi-select) 1 and 3 tick, S submits."""
    runtime = private_runtime(tmp_path)
    session = claude_session([api.ask(QUESTION_DB, QUESTION_FEATURES), api.text("Noted.")], extra_env={"XDG_RUNTIME_DIR": str(runtime)})

    async def scenario() -> None:
        app = app_for(private_tmux, session, runtime)
        async with app.run_test(size=(160, 48)) as pilot:
            sent = record_keys(app)
            await wait_until(pilot, lambda: session.pane_id in app.table.agents, "the agent in the table")
            await asyncio.to_thread(session.submit, "help me choose")
            await ready_to_answer(pilot, app, session.pane_id, AgentState.QUESTION, channel="")
            agent = live_row(app, session.pane_id)
            assert not app.main.check_action("submit", ())  # question 1/2 is single-choice: S is not offered
            await pilot.press("1")  # Postgres: question 2/2 follows
            await wait_until(
                pilot,
                lambda: agent.observation.prompt is not None and agent.observation.prompt.question_index == 2,
                lambda: f"question 2/2 (keys sent: {sent}; the row says {waiting_for(agent).plain!r})",
            )
            assert agent.observation.prompt.multi_select
            await wait_until(pilot, lambda: app.main.check_action("submit", ()), "S offered (the footer shows it) at the multi-select page")
            for digit, now in (("1", ("1",)), ("3", ("1", "3"))):
                await press_when_ready(pilot, app, agent, digit)
                await wait_until(pilot, lambda now=now: ticked(agent) == now, f"the row to show {now} ticked")
            # What the row shows once the tick is confirmed (until then it may say "sent; waiting for the pane to show it").
            await wait_until(pilot, lambda: "✔ Auth, Search" in waiting_for(agent).plain, "the row to show what is ticked")
            assert app.selected_agent().pane_id == session.pane_id  # a toggle never moves the inbox on
            await press_when_ready(pilot, app, agent, "S")
            request = await asyncio.to_thread(tool_result_request, fake_api)
            assert answers(request) == {"Which database should we use?": "Postgres", FEATURES: "Auth, Search"}
            await wait_until(pilot, lambda: agent.state is not AgentState.QUESTION, "the dialog gone from the row")
            assert [args[1:] for args in sent] == [("1",), ("1",), ("3",), ("Right",), ("1",)]

    asyncio.run(scenario())


def test_app_S_submits_a_one_question_multi_select_through_the_answer_hook(claude_session, fake_api, private_tmux, tmp_path):
    """With Claude's answer hook holding the question: digits tick by keys (a hook cannot tick), S answers through the hook."""
    runtime = private_runtime(tmp_path)
    session = claude_session([api.ask(QUESTION_FEATURES), api.text("Noted.")], launch=False, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
    hook_settings.install(session.home / ".claude" / "settings.json", answer_wait=30)
    session.launch()

    async def scenario() -> None:
        app = app_for(private_tmux, session, runtime)
        async with app.run_test(size=(160, 48)) as pilot:
            sent = record_keys(app)
            await wait_until(pilot, lambda: session.pane_id in app.table.agents, "the agent in the table")
            await asyncio.to_thread(session.submit, "what ships first")
            await ready_to_answer(pilot, app, session.pane_id, AgentState.QUESTION, channel="hook")
            agent = live_row(app, session.pane_id)
            for digit, now in (("3", ("3",)), ("1", ("1", "3"))):
                await press_when_ready(pilot, app, agent, digit)
                await wait_until(pilot, lambda now=now: ticked(agent) == now, f"the row to show {now} ticked")
            assert agent.channel == "hook"  # ticking keeps the dialog the hook's
            await press_when_ready(pilot, app, agent, "S")
            request = await asyncio.to_thread(tool_result_request, fake_api)
            assert answers(request) == {FEATURES: "Auth, Search"}
            await wait_until(pilot, lambda: agent.answered.startswith("via hook"), "the row to say the hook answered")
            assert [args[1:] for args in sent] == [("3",), ("1",)]  # the ticks only: the answer went through the hook

    asyncio.run(scenario())
    session.wait_for("Allowed by PermissionRequest hook", timeout=10, what="Claude's own note that the hook answered")


def test_a_box_ticked_in_the_pane_after_you_looked_stops_the_submit(claude_session, fake_api, private_tmux):
    """What the user saw is what goes: ticks changed in the pane since (2 ticked there) and no key is sent, nothing submitted."""
    session = claude_session([api.ask(QUESTION_FEATURES), api.text("Noted.")])
    session.submit("what ships first")
    session.wait_for("Enter to select", what="the multi-select question")
    session.answer("1")
    session.wait_for("1. [✔] Auth", what="Auth ticked")
    io = ThreadedPaneIO(TmuxServer(socket_name=private_tmux.name))

    async def scenario() -> None:
        seen, _ = await read_pane(io, session.pane_id, family=CLAUDE)
        assert seen.prompt is not None and seen.prompt.ticked == ("1",)
        await asyncio.to_thread(session.answer, "2")  # the person at the pane ticks Billing too
        await asyncio.to_thread(session.wait_for, "2. [✔] Billing", what="Billing ticked in the pane")
        with pytest.raises(ActionError, match="changed since you looked"):
            await send_guarded(io, session.pane_id, seen, Intent(IntentKind.SUBMIT), timeout=5, family=CLAUDE)
        with pytest.raises(ActionError, match="changed since you looked"):
            await send_guarded(io, session.pane_id, seen, Intent(IntentKind.OPTION, option="3"), timeout=5, family=CLAUDE)
        # "1,3" names the boxes wanted, whatever they show: 2 is unticked again, and the answer goes.
        done = await send_guarded(io, session.pane_id, seen, Intent(IntentKind.OPTION, option="1,3"), timeout=10, family=CLAUDE)
        assert done.delivered and not done.more, done.detail

    asyncio.run(scenario())
    assert answers(tool_result_request(fake_api)) == {FEATURES: "Auth, Search"}
    session.wait_for("Noted.", what="Claude going on with the answer")
    assert len([r for r in fake_api.main_requests if r.tool_results()]) == 1
