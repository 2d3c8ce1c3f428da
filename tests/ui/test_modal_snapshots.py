"""Snapshots of every modal screen: why (``e``), timeline (``t``), help (``?``), batch approve (``A``), reply (``r``), snooze (``z``).

The same demo app as test_snapshots.py (detectors off, real recorded panes
from the corpus, a fixed clock, a named theme), at 100x30; the help also at
80x24 (taller than both, it scrolls).  Each screen is opened the way a user opens
it, with its key on a chosen agent, except the batch approval (see its
test).  What else would vary from run to run is pinned: the timeline prints
clock times in the local time zone (pinned to UTC here), and the help names
the config file's path (pinned to a made-up home, not the test run's
temporary XDG folder).  Regenerate after an intended change with
``pytest tests/ui/test_modal_snapshots.py --snapshot-update`` and look at
the SVGs.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input

from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.batch import BatchApproveScreen
from headspace_tui.app.screens.help import HelpScreen
from headspace_tui.app.screens.reply import ReplyScreen
from headspace_tui.app.screens.snooze import SnoozeScreen
from headspace_tui.app.screens.timeline import TimelineScreen
from headspace_tui.app.screens.why import WhyScreen
from headspace_tui.hooks.calls import PendingCall
from headspace_tui.model import AgentState
from tests.ui.apps import AGENTS, demo_app, service_of, settle, show_recorded, wait_until

SIZE = (100, 30)


def pane_of(session: str) -> str:
    """The demo table's pane for ``session`` (tests/ui/apps.py shows AGENTS[n] in pane %n)."""
    return f"%{[name for name, _screen, _age in AGENTS].index(session)}"


API, DOCS = pane_of("api"), pane_of("docs")  # a Bash permission; a plain-text question at the input box


@pytest.fixture
def utc() -> Iterator[None]:
    """Local time is UTC while the test runs (the timeline shows clock times)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "UTC")
        time.tzset()
        yield
    time.tzset()


async def wait_for_screen(pilot: Pilot, kind: type[Screen], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not isinstance(pilot.app.screen, kind):
        if time.monotonic() > deadline:
            raise AssertionError(f"{kind.__name__} did not open; the screen is {type(pilot.app.screen).__name__}")
        await pilot.pause(0.02)


def compare(snap_compare, app: HeadspaceApp, size: tuple[int, int], steps: Callable[[Pilot], Awaitable[None]]) -> bool:
    """``snap_compare`` after ``steps``; a failed step fails the test with its own message.

    (An exception in ``run_before`` only ends the app: snap_compare would
    report a missing screenshot, not the reason.)
    """
    failed: list[BaseException] = []

    async def run_before(pilot: Pilot) -> None:
        try:
            await steps(pilot)
            await settle(pilot)  # what the app asked its service (from threads) came back and was drawn: one picture, not a race
        except BaseException as exc:
            failed.append(exc)
            raise

    try:
        return snap_compare(app, terminal_size=size, run_before=run_before)
    except AssertionError:
        if failed:
            raise failed[0] from None
        raise


async def select(pilot: Pilot, pane_id: str) -> None:
    """Put the cursor on ``pane_id``'s row, as a user picking it."""
    app = pilot.app
    assert app.table.select(pane_id), f"{pane_id} is not in the table"
    await settle(pilot)  # its preview, asked of the service
    assert app.selected_agent().pane_id == pane_id


async def press_on(pilot: Pilot, pane_id: str, key: str, kind: type[Screen]) -> None:
    """Select ``pane_id``, press ``key``: ``kind`` must open."""
    await select(pilot, pane_id)
    await pilot.press(key)
    await wait_for_screen(pilot, kind)


def test_why_screen(snap_compare):
    """``e`` on the Bash permission: the state, the version line, the screen reader's verdict, the closed channel.

    The demo table's replay shows a pane without handing the reading to the pane's fuser (the live
    monitor does both), so the why screen would say "no verdict yet" over an empty table; the test
    hands the fuser that same screen reading, made 1.5 s before the demo clock's now.
    """
    app = demo_app()

    async def steps(pilot: Pilot) -> None:
        await app.snapshot_loader(pilot)
        agent, watch = app.table.agents[API], service_of(app)._fleet.watch(API)
        assert watch is not None and agent.observation.source == "screen"
        watch.fuser.observe(agent.observation, app.clock(), at=app.clock() - 1.5)
        await press_on(pilot, API, "e", WhyScreen)

    assert compare(snap_compare, app, SIZE, steps)


def test_timeline_screen(snap_compare, utc):
    """``t`` on the Bash permission, after it was idle and then working: three state changes with their UTC times."""
    app = demo_app()

    async def steps(pilot: Pilot) -> None:
        # The agent's earlier states, before the demo table puts it at its permission (95 s ago).
        show_recorded(app, int(API[1:]), "api", "idle_fresh", 400)
        show_recorded(app, int(API[1:]), "api", "working_spinner", 300)
        await app.snapshot_loader(pilot)
        await press_on(pilot, API, "t", TimelineScreen)

    assert compare(snap_compare, app, SIZE, steps)


@pytest.mark.parametrize("size", [(100, 30), (80, 24)], ids=["100x30", "80x24"])
def test_help_screen(snap_compare, size):
    """``?``: the keys, made from the bindings.  The list is taller than both sizes: the snapshot shows its
    top and the scrollbar; the closing lines (where the config lives) are below the fold, their path
    pinned all the same so the picture cannot depend on the run's temporary folders."""
    app = demo_app()
    app.config_path = Path("/home/dev/.config/headspace/config.toml")

    async def steps(pilot: Pilot) -> None:
        await app.snapshot_loader(pilot)
        await press_on(pilot, DOCS, "question_mark", HelpScreen)

    assert compare(snap_compare, app, size, steps)


def test_reply_screen(snap_compare):
    """``r`` on the agent asking a plain-text question: its target, the question, the empty reply box."""
    app = demo_app()

    async def steps(pilot: Pilot) -> None:
        await app.snapshot_loader(pilot)
        await press_on(pilot, DOCS, "r", ReplyScreen)
        box = app.screen.query_one("#reply", Input)
        assert box.has_focus
        box.cursor_blink = False  # a steady cursor: the snapshot cannot catch it blinked off

    assert compare(snap_compare, app, SIZE, steps)


def test_snooze_screen(snap_compare):
    """``z`` on the Bash permission: the agent's target and the four lengths, each with its number key."""
    app = demo_app()

    async def steps(pilot: Pilot) -> None:
        await app.snapshot_loader(pilot)
        await press_on(pilot, API, "z", SnoozeScreen)

    assert compare(snap_compare, app, SIZE, steps)


# Two more agents showing the same recorded Bash permission as "api": three identical requests.
BATCH_AGENTS = [*AGENTS, ("shop", "permission_bash", 70), ("infra", "permission_bash", 20)]
COMMAND = {"command": "touch marker.txt && echo headspace-ok", "description": "Create a marker file"}


def test_batch_approve_screen(snap_compare):
    """The ``A`` confirmation, built directly.  ``A`` needs a permission whose dialog Claude's answer
    hook holds, and the demo app has no live hook (no answer channel), so there the key is not offered
    and does nothing (asserted below).  The screen is made from a hand-made list of (Agent,
    PendingCall) pairs, one per demo agent showing the same recorded Bash permission (two more than
    the standard demo table), each call with the exact input that permission shows, and pushed onto
    the demo app as ``action_approve_all`` would push it."""
    app = demo_app(BATCH_AGENTS)

    async def steps(pilot: Pilot) -> None:
        await app.snapshot_loader(pilot)
        await select(pilot, API)
        # Without a hook holding the dialog, A is not offered and does nothing.
        assert app.check_action("approve_all", ()) is False
        await pilot.press("A")
        # ... but says why (silent keys, issue 25), once the service answers (a call off the app's loop: waited for);
        # the line is cleared so the snapshot shows the batch screen alone.
        said = ["A: no batch: api:0.0 has no permission held by Claude's hook"]
        await wait_until(pilot, lambda: [n.message for n in app._notifications] == said, lambda: f"the reason: {[n.message for n in app._notifications]}")
        assert app.screen is app.screen_stack[0]
        app.clear_notifications()
        waiting = [a for a in (app.table.agents[p] for p in app.table.order) if a.state is AgentState.PERMISSION]
        assert [a.target for a in waiting] == ["api:0.0", "shop:0.0", "infra:0.0"]  # longest-waiting first
        assert {a.observation.prompt.detail for a in waiting} == {COMMAND["command"]}
        pairs = [
            (agent, PendingCall(id=n, pane_id=agent.pane_id, pid=2000 + n, session_id=f"session-{n}", tool_name="Bash", tool_input=dict(COMMAND), cwd=agent.cwd, arrived=agent.since))
            for n, agent in enumerate(waiting, start=1)
        ]
        app.push_screen(BatchApproveScreen(pairs))
        await wait_for_screen(pilot, BatchApproveScreen)

    assert compare(snap_compare, app, SIZE, steps)
