"""``y`` where every way to approve widens permissions: the app asks first, and only a confirmed choice goes (issue 37).

The monitor's replay path shows a plan whose approving options all switch
on auto mode or accept edits (no tmux: what is tested is the app's
handling of the key; the answer itself is recorded where the app hands it
to the answerer).  Real Claude menus always offer a safer option; this one
is built from the recorded 2.1.332 plan screen with its manual option
taken out, the case the rule exists for.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

from headspace_tui.api.facade import Intent, IntentKind
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.widen import WidenScreen
from headspace_tui.detect.claude import classify_capture
from headspace_tui.model import AgentState
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.tmux.server import PaneRecord, TmuxServer
from tests.harness.record import PANES
from tests.ui.apps import app_of, screen_open, service_of, wait_until

NOW = 1_800_000_000.0
PLAN = PANES / "claude-2.1.332" / "alt" / "200x50" / "plan_exit_plan_mode"


def _show(app: HeadspaceApp) -> None:
    meta = json.loads(PLAN.with_suffix(".json").read_text())
    ansi = PLAN.with_suffix(".ansi").read_text()
    seen = classify_capture(ansi, command="claude")
    prompt = seen.prompt
    assert prompt is not None and [o.label for o in prompt.options][:2] == ["Yes, and use auto mode", "Yes, manually approve edits"]
    widening_only = replace(prompt, options=tuple(o for o in prompt.options if "manually" not in o.label))
    record = PaneRecord(
        pane_id="%0",
        session_id="$0",
        session_name="s0",
        window_index=0,
        pane_index=0,
        target="s0:0.0",
        pid=1000,
        current_command="claude",
        cwd="/src",
        width=meta["width"],
        height=meta["height"],
        alternate_on=True,
        in_mode=False,
        title="",
        dead=False,
        dead_status=None,
    )
    service_of(app).replay(record, ansi, replace(seen, prompt=widening_only), NOW - 10, family="claude")


def test_y_asks_before_choosing_an_option_that_widens_and_n_sends_nothing():
    async def scenario() -> None:
        app = app_of(Service.build(TmuxServer(socket_name="headspace-widen-unused"), live=False, clock=lambda: NOW, journal=Journal(None), hooks=False))
        handed: list[tuple[Intent, object]] = []
        async with app.run_test(size=(160, 48)) as pilot:
            app.service.answer = lambda agent, intent, seen=None: handed.append((intent, seen)) or ""  # what the app hands on
            _show(app)
            await wait_until(pilot, lambda: (agent := app.selected_agent()) is not None and agent.state is AgentState.PLAN, "the plan, selected")
            await pilot.press("y")
            await wait_until(pilot, lambda: screen_open(app, WidenScreen), "the confirmation")
            shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
            assert "1. Yes, and use auto mode" in shown and "auto mode: the agent stops asking" in shown
            await pilot.press("n")
            await wait_until(pilot, lambda: not screen_open(app, WidenScreen), "the confirmation closed")
            assert handed == []  # n: nothing sent
            await pilot.press("y")
            await wait_until(pilot, lambda: screen_open(app, WidenScreen), "the confirmation, again")
            await pilot.press("y")  # a double-tapped y never confirms: only the option's own digit does
            await pilot.pause(0.2)
            assert screen_open(app, WidenScreen) and handed == []
            await pilot.press("1")
            await wait_until(pilot, lambda: handed, "the confirmed choice handed on")
            intent, seen = handed[0]
            # A deliberate digit, against the prompt the confirmation showed.
            assert intent == Intent(IntentKind.OPTION, option="1")
            assert seen is app.table.agents["%0"].observation

    asyncio.run(scenario())
