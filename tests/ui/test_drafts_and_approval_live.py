"""Issue 37, live: no typed line joins a draft, and ``y`` never widens permissions.

Real Claude Code in a private tmux server against the scripted API; the app
driven by Textual's pilot, ``headspace send`` as a subprocess.  What counts
is what reached the API (nothing, for a refused key) and what Claude shows
afterwards (the draft still in its box; a permission still asked).
"""

from __future__ import annotations

import asyncio
import subprocess

import pytest
from textual.widgets import Input, Static

from headspace_tui.app.screens.reply import ReplyScreen
from headspace_tui.app.widgets.preview import PromptBar
from headspace_tui.detect.claude import box_text
from headspace_tui.model import AgentState
from tests.harness import fake_api as api
from tests.harness.claude import ClaudeUnavailable, find_claude
from tests.harness.cli import headspace
from tests.harness.scenarios import PLAN, TURN_DONE
from tests.harness.session import NUMBERED_MENU, ClaudeSession
from tests.ui.apps import make_app, press_as_a_person, screen_open, wait_until
from tests.ui.test_app_live import select_agent

pytestmark = pytest.mark.e2e

DRAFT = "half-written thought about the parser"


def box_of(private_tmux, session) -> str | None:
    ansi = subprocess.run(["tmux", "-L", private_tmux.name, "capture-pane", "-p", "-e", "-t", session.pane_id], capture_output=True, text=True, check=True).stdout
    return box_text(ansi)


def refused_by_cli(private_tmux, session, *args: str) -> str:
    proc = headspace("send", session.pane_id, *args, "-L", private_tmux.name, check=False)
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    return proc.stderr


def test_a_draft_in_the_box_survives_c_send_nudge_and_send_text(claude_session, fake_api, private_tmux):
    session = claude_session([api.text("First part done.")])
    session.submit("do the first part")
    session.wait_for(lambda s: "First part done." in s and TURN_DONE.search(s) is not None, what="the first turn")
    session.type(DRAFT)  # typed into the real pane (send-keys -l), as the user would, and not sent
    session.wait_for(lambda s: DRAFT in s, what="the draft in the box")
    assert box_of(private_tmux, session) == DRAFT
    asked = len(fake_api.main_requests)

    async def scenario():
        app = make_app(private_tmux.name, session.root, claude_home=session.home)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.IDLE)
            await pilot.press("c")
            await wait_until(pilot, lambda: any("holds text you did not send" in str(n.message) for n in app._notifications), "the refusal")
            shown = next(str(n.message) for n in app._notifications if "holds text" in str(n.message))
            assert "\n" not in shown and "nothing sent" in shown and "i types there" in shown and DRAFT[:20] in shown
            # r: the reply box hears the same refusal and keeps what was typed.
            await pilot.press("r")
            await wait_until(pilot, lambda: screen_open(app, ReplyScreen) and isinstance(app.focused, Input), "the reply box")
            await pilot.press(*"and the lexer", "enter")
            reason = app.screen.query_one("#reason", Static)
            await wait_until(pilot, lambda: "holds text you did not send" in str(reason.render()), "the reply's refusal")
            assert app.screen.query_one("#reply", Input).value == "and the lexer"

    asyncio.run(scenario())
    assert "holds text you did not send" in refused_by_cli(private_tmux, session, "--nudge")
    assert "holds text you did not send" in refused_by_cli(private_tmux, session, "--text", "and the lexer")
    assert box_of(private_tmux, session) == DRAFT  # the draft survives, untouched
    assert len(fake_api.main_requests) == asked  # nothing reached the API


def test_the_prompt_claude_puts_back_after_an_interrupt_is_a_draft(claude_session, fake_api, private_tmux):
    session = claude_session([api.stall(seconds=120)])
    session.submit("explain the parser")
    fake_api.wait_for(lambda r: "explain the parser" in r.user_text(), timeout=30)
    session.press("Escape")
    # Interrupted before any answer, Claude puts the prompt back into its box.
    session.wait_for(lambda s: box_text(s) == "explain the parser" and "esc to interrupt" not in s, timeout=15, what="the prompt put back")
    session.wait_stable(quiet=1.0, timeout=10)
    asked = len(fake_api.main_requests)
    assert "holds text you did not send ('explain the parser')" in refused_by_cli(private_tmux, session, "--nudge")
    assert box_of(private_tmux, session) == "explain the parser"
    assert len(fake_api.main_requests) == asked


NEWEST = "2.1.332"


@pytest.fixture
def claude_332(fake_api, private_tmux, tmp_path):
    """Claude Code 2.1.332 (its plan menu offers auto mode first), installed in the test cache."""
    try:
        binary = find_claude(version=NEWEST)
    except ClaudeUnavailable as exc:
        pytest.skip(f"Claude Code {NEWEST}: {exc}")
    sessions: list[ClaudeSession] = []

    def start(script, **options) -> ClaudeSession:
        fake_api.set_script(script)
        session = ClaudeSession(private_tmux, fake_api, binary, tmp_path / f"new{len(sessions)}", name=f"new{len(sessions)}", version=NEWEST, **options)
        sessions.append(session)
        session.launch()
        return session

    yield start
    for session in sessions:
        session.close()


def test_y_on_the_2_1_332_plan_menu_approves_manually_and_the_next_command_is_still_asked(claude_332, fake_api, private_tmux):
    session = claude_332([api.write_plan(PLAN), *api.exit_plan_mode(PLAN), api.bash("touch after-plan.txt", "Start on the plan")], permission_mode="plan")
    session.submit("plan the config parser")
    menu = session.wait_for(lambda s: "Yes, and use auto mode" in s and "manually approve edits" in s, timeout=60, what="2.1.332's plan menu")
    assert "1. Yes, and use auto mode" in menu

    async def scenario():
        app = make_app(private_tmux.name, session.root, claude_home=session.home)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.PLAN)
            bar = str(app.query_one(PromptBar).render())
            assert "→ 2. Yes, manually approve edits" in bar, bar
            await press_as_a_person(pilot, app, session.pane_id, "y", lambda: "touch after-plan.txt" in session.screen(), "the plan approved and the next command asked", timeout=60)
            # The plan approved, Claude goes on and asks for its first command: permission prompts are still on.
            await asyncio.to_thread(session.wait_for, lambda s: "touch after-plan.txt" in s and NUMBERED_MENU.search(s) is not None, timeout=60, what="the next permission")

    asyncio.run(scenario())
    screen = session.screen()
    assert "auto mode on" not in screen
    assert "Do you want to proceed?" in screen and not (session.workdir / "after-plan.txt").exists()
    results = [api.block_text(block) for r in fake_api.main_requests for block in r.tool_results()]
    assert any(text.startswith("User has approved your plan") for text in results), results
