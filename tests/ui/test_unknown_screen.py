"""A screen the reader does not know is shown as unknown, and ``e`` says where it stopped and how to report it."""

from __future__ import annotations

import asyncio

from headspace_tui.app.screens.why import WhyScreen
from headspace_tui.detect.claude import classify_capture
from headspace_tui.model import AgentState
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.tmux.server import PaneRecord, TmuxServer
from tests.ui.apps import app_of, screen_open, service_of, wait_until

NOW = 1_800_000_000.0
# A Claude Code of the future: its banner, then a layout nothing in headspace knows.
NEW_LAYOUT = "\n".join([" ▐▛███▛█   Claude Code v9.0.0", "", "  ◆ Claude is thinking in a brand new way", "    ░░░░░░░░░░ 40% [/b] \x1b]0;x\x07"])


def test_e_explains_an_unrecognised_screen_and_how_to_report_it():
    app = app_of(Service.build(TmuxServer(socket_name="headspace-unknown-unused"), live=False, clock=lambda: NOW, journal=Journal(None), hooks=False))
    record = PaneRecord(
        pane_id="%7",
        session_id="$7",
        session_name="future",
        window_index=0,
        pane_index=0,
        target="future:0.0",
        pid=4242,
        current_command="claude",
        cwd="/home/dev/src/future",
        width=80,
        height=24,
        alternate_on=True,
        in_mode=False,
        title="",
        dead=False,
        dead_status=None,
    )
    observation = classify_capture(NEW_LAYOUT, command="claude")
    assert observation.state is AgentState.UNKNOWN

    async def scenario() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            service_of(app).replay(record, NEW_LAYOUT, observation, NOW - 30, family="claude")
            await wait_until(pilot, lambda: record.pane_id in app.table.agents, "the unrecognised row (over HTTP it comes down the stream)")
            app.table.move_cursor(row=0)
            await pilot.pause()
            row = " ".join(str(cell) for cell in app.table.get_row_at(0))
            assert "unknown" in row and "unrecognised screen: press e" in row
            await pilot.press("e")
            await wait_until(pilot, lambda: screen_open(app, WhyScreen), "the why screen")
            assert isinstance(app.screen, WhyScreen)
            shown = "\n".join(str(w.render()) for w in app.screen.query("Static"))
            assert "Unrecognised screen" in shown and "line 3" in shown
            assert "tmux capture-pane -p -e -t %7 > pane.txt" in shown and "headspace classify pane.txt" in shown
            assert app.is_running, "outside text in the hint ('[/b]') is data, not markup"

    asyncio.run(scenario())
