"""The change an Edit would make, shown inside its approval: under the preview, and whole in ``e`` (issue 55).

The demo app shows the recorded Claude 2.1.330 Edit dialog (README.md), and
its answer desk is handed a hook request for exactly that edit (the answer
channel's place, as Claude's hook would fill it; the demo has no socket).
What the user sees is built from the request's old and new strings, against
the README on disk, with the file's own line numbers: no recorded diff is
read from the screen.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from headspace_tui.app.screens.why import WhyScreen
from headspace_tui.app.widgets.change_box import ChangeBox
from headspace_tui.hooks.calls import PendingCall
from headspace_tui.model import AgentState, Channel
from tests.harness.scenarios import EDIT_NEW, EDIT_OLD, README_BEFORE
from tests.ui.apps import demo_app, screen_open, service_of, show_recorded, wait_until

PANE = "%0"
HOSTILE = "\x1b]0;owned\x07[b]not bold[/b] [red]"


class HeldCalls:
    """The answer channel as the desk sees it, holding the given requests (no socket, no hook process)."""

    def __init__(self, *calls: PendingCall) -> None:
        self.calls = {call.id: call for call in calls}

    def pending(self, pane_id: str) -> list[PendingCall]:
        return [call for call in self.calls.values() if call.pane_id == pane_id]

    def release(self, call_id: int) -> None:
        self.calls.pop(call_id, None)

    def decide(self, call_id: int, decision: dict) -> bool:
        return self.calls.pop(call_id, None) is not None

    async def close(self) -> None:
        self.calls.clear()


def edit_call(folder: Path, new: str = EDIT_NEW) -> PendingCall:
    return PendingCall(
        id=1,
        pane_id=PANE,
        pid=0,
        session_id="s",
        tool_name="Edit",
        tool_input={"file_path": str(folder / "README.md"), "old_string": EDIT_OLD, "new_string": new},
        cwd=str(folder),
    )


def test_an_edit_held_by_the_hook_shows_its_old_and_new_lines_in_the_preview_and_in_e(tmp_path: Path):
    (tmp_path / "README.md").write_text(README_BEFORE)
    app = demo_app([])

    async def scenario() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            service_of(app)._fleet.first.desk.channel = HeldCalls(edit_call(tmp_path, EDIT_NEW + " " + HOSTILE))
            show_recorded(app, 0, "docs", "permission_edit_diff", 30, cwd=str(tmp_path))
            await wait_until(pilot, lambda: PANE in app.table.agents and app.table.agents[PANE].proposed is not None, "the row's proposed change")
            agent = app.table.agents[PANE]
            assert agent.state is AgentState.PERMISSION and agent.channel == Channel.HOOK
            assert app.table.select(PANE)
            box = app.query_one(ChangeBox)
            await wait_until(pilot, lambda: box.display and box.region.height > 0, "the change under the preview")
            shown = str(box.render())
            assert shown.startswith("README.md  +3 −3\n")  # named from the agent's folder
            # The file's own line numbers (the edit starts at line 3), old lines then new, a line's kind its first character.
            assert "   3 - The parser reads tokens.\n   4 - It builds a tree.\n   5 - It reports errors." in shown
            assert "   3 + The parser reads tokens one rune at a time.\n   4 + It builds a typed syntax tree." in shown
            assert "@@ -1,8 +1,8 @@" in shown
            # Outside text stays text: no escape reaches the terminal, no markup is read.
            assert "\x1b" not in shown and "␛]0;owned␇[b]not bold[/b] [red]" in shown
            assert box.region.bottom <= app.query_one("#prompt").region.y  # above the prompt bar, where y's meaning is

            await pilot.press("e")
            await wait_until(pilot, lambda: screen_open(app, WhyScreen), "the why screen")
            whole = str(app.screen.query_one("#why-change").render())
            assert whole.startswith("\nThe change it would make")
            assert "   4 - It builds a tree." in whole and "   4 + It builds a typed syntax tree." in whole
            assert "   1   # Parser" in whole and "   7   ## Usage" in whole  # its context too
            assert str(tmp_path / "README.md") in whole  # the full path, in full
            await pilot.press("escape")
            await wait_until(pilot, lambda: not screen_open(app, WhyScreen), "the why screen closed")

            # Too short for the preview: the table keeps the rows (e still shows the change).
            await pilot.resize_terminal(100, 16)
            await wait_until(pilot, lambda: not box.display, "the box hidden in a short terminal")
            await pilot.resize_terminal(160, 48)
            await wait_until(pilot, lambda: box.display, "the box back")

            # Answered (the hook let go): the change goes with the request.
            service_of(app)._fleet.first.desk.channel.calls.clear()
            show_recorded(app, 0, "docs", "permission_edit_diff", 30, cwd=str(tmp_path))
            await wait_until(pilot, lambda: app.table.agents[PANE].proposed is None, "the change gone with its request")
            await wait_until(pilot, lambda: not box.display, "the box hidden")

    asyncio.run(scenario())


def test_a_remote_hosts_edit_is_not_read_here_and_says_so(tmp_path: Path):
    """Where the agent runs elsewhere its file is not read from here: the edit's own text, numbered from its first line."""
    (tmp_path / "README.md").write_text(README_BEFORE)
    app = demo_app([])

    async def scenario() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            desk = service_of(app)._fleet.first.desk
            show_recorded(app, 0, "docs", "permission_edit_diff", 30, cwd=str(tmp_path))
            await wait_until(pilot, lambda: PANE in app.table.agents, "the row")
            row = desk.store.agents[PANE]
            row.host = "box"
            change = desk.change(edit_call(tmp_path), row)
            assert change is not None and change["note"] == "current file not read (on box): lines counted from the edit's own text"
            assert change["files"][0]["hunks"][0]["old_start"] == 1

    asyncio.run(scenario())
