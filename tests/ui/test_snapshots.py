"""Snapshots of the main screen at 80x24 and 160x48.

The app runs with its detectors off and is shown real recorded panes from the
corpus (screens the real Claude drew, classified by the real detector), with
a fixed clock, so the picture depends only on the code.  Regenerate after an
intended change with ``pytest tests/ui --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

import json

import pytest

from headspace_tui.app.main import HeadspaceApp
from headspace_tui.detect.claude import classify_capture
from headspace_tui.journal import Journal
from headspace_tui.tmux.server import PaneRecord, TmuxServer
from tests.harness.record import DEFAULT_OUT

NOW = 1_800_000_000.0
# (session, recorded screen, seconds in state)
AGENTS = [
    ("api", "permission_bash", 95),
    ("web", "question_two_options", 40),
    ("docs", "input_plain_question", 610),
    ("parser", "working_streaming", 12),
    ("ci", "error_retrying_500", 5),
    ("notes", "idle_finished", 3600 + 120),
    ("old", "exited_shell_back", 7200),
]


def demo_app() -> HeadspaceApp:
    app = HeadspaceApp(
        TmuxServer(socket_name="headspace-snapshot-unused"), live=False, clock=lambda: NOW, journal=Journal(None), hooks=False
    )

    async def load(pilot) -> None:
        for n, (session, screen, age) in enumerate(AGENTS):
            base = DEFAULT_OUT / "alt" / "120x40" / screen
            meta = json.loads(base.with_suffix(".json").read_text())
            ansi = base.with_suffix(".ansi").read_text()
            record = PaneRecord(
                pane_id=f"%{n}",
                session_id=f"${n}",
                session_name=session,
                window_index=0,
                pane_index=0,
                target=f"{session}:0.0",
                pid=1000 + n,
                current_command=meta["pane_command"],
                cwd=f"/home/dev/src/{session}",
                width=meta["width"],
                height=meta["height"],
                alternate_on=meta["alternate_on"],
                in_mode=False,
                title=meta["pane_title"],
                dead=False,
                dead_status=None,
            )
            app.replay(record, ansi, classify_capture(ansi, command=meta["pane_command"]), NOW - age)
        await pilot.pause()  # the monitor's reports reach the table as messages
        app.table.move_cursor(row=0)
        await pilot.pause()

    app.snapshot_loader = load  # type: ignore[attr-defined]
    return app


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_main_screen(snap_compare, size):
    app = demo_app()
    assert snap_compare(app, terminal_size=size, run_before=app.snapshot_loader)
