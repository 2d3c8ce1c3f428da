"""One clock, live: headspace restarted during a wait and during a turn keeps every time on screen on Claude's claim.

Real tmux, the real Claude Code against the scripted API, headspace's hooks
installed in Claude's HOME, the app (Textual's pilot) on one event log that
outlives each run, as a restart of headspace would.  The claim a time must
come from is read here straight from Claude's own status file
(``statusUpdatedAt``, the start of the clock its own spinner shows), not
from anything headspace computed:

* during a permission: the row's time is within 1 s of the status file's
  "waiting since", before and after a restart, and never goes back; the
  header's total is the sum of the rows' waits (and says so in its text);
  ``e`` says when the wait began;
* answered, then a new prompt: the working row shows that prompt, not the
  last answer; after a restart during the turn its start is the status
  file's "busy since", and the header's total is the wait that closed
  (from the status file's "waiting" to its "busy" after the answer).
"""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from headspace_tui.app.screens.timeline import TimelineScreen, began, timeline_table
from headspace_tui.app.widgets.agent_table import elapsed
from headspace_tui.detect.claude.status_files import ClaudeStatus, read_status_file
from headspace_tui.hooks import settings as hook_settings
from headspace_tui.hooks.spool import spool_dir
from headspace_tui.model import AgentState
from headspace_tui.service.records.journal import Journal
from headspace_tui.state.eventlog import EventLog
from tests.e2e.test_answer_channel import private_runtime, wait_until
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU
from tests.ui.apps import make_app, press_as_a_person

pytestmark = pytest.mark.e2e

SIZE = (160, 48)


def claudes_status(home: Path) -> ClaudeStatus:
    """Claude's own status file (the one Claude in this HOME)."""
    (path,) = sorted((home / ".claude" / "sessions").glob("*.json"))
    status = read_status_file(path)
    assert status is not None and status.updated_at > 0, status
    return status


def seconds(cell: str) -> int:
    """A precise time cell ("7s", "1m05s") in seconds."""
    minutes, _, rest = cell.partition("m") if "m" in cell else ("0", "", cell)
    return int(minutes) * 60 + int(rest.rstrip("s") or 0)


def header(app) -> str:
    return str(app.query_one("#summary").render())


def rows_waited(app, now: float) -> float:
    return sum(now - a.since for a in app.table.agents.values() if a.state.needs_you)


def test_times_follow_claudes_claim_across_restarts_during_a_wait_and_a_turn(claude_session, private_tmux, tmp_path):
    runtime = private_runtime(tmp_path)
    script = [api.bash("touch clock.txt", "Create a file"), api.text("Created."), api.text("Thought it over.", delay=40)]
    session = claude_session(script, launch=False, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
    hook_settings.install(session.home / ".claude" / "settings.json")  # hooks on: a hook's time competes with the status file's
    session.launch()
    spool = spool_dir({"XDG_RUNTIME_DIR": str(runtime)})
    log_path = tmp_path / "events.db"
    pane = session.pane_id
    seen: dict[str, float] = {}

    def app_run():
        return make_app(private_tmux.name, session.root, claude_home=session.home, spool=spool, journal=Journal(EventLog(log_path)))

    async def check_wait(pilot, app, claim: float) -> None:
        """The claim on Claude's to the second; the row, the header and the why screen on the claim."""
        agent = app.table.agents[pane]
        assert abs(agent.since - claim) <= 1.0, f"headspace's claim ({agent.since_source}) is {agent.since - claim:+.1f}s off Claude's 'waiting since'"
        # The time cell shows whole seconds, redrawn once a second: read it as a tick redraws it, knowing when that
        # was to within one look (the redraw came after ``looked``, by ``now``), so a late look under load moves the
        # bounds with it instead of failing a fixed 1.3 s.
        before = str(app.table.get_cell(pane, "time"))
        deadline = time.monotonic() + 10
        looked = app.clock()
        while str(app.table.get_cell(pane, "time")) == before:
            assert time.monotonic() < deadline, f"no tick redrew the time cell: {before}"
            looked = app.clock()
            await pilot.pause(0.05)
        now = app.clock()
        shown = seconds(str(app.table.get_cell(pane, "time")))
        assert int(looked - agent.since) <= shown <= now - agent.since, f"the row shows {shown}s; its claim was {looked - agent.since:.1f}..{now - agent.since:.1f}s old"
        total = app.service.waited_today(app.table.agents, now)
        assert total is not None and abs(total - rows_waited(app, now)) <= 1.0, f"header total {total:.1f}s, rows {rows_waited(app, now):.1f}s"
        assert f"waits today (sum): {elapsed(total, precise=False)}" in header(app), header(app)

    async def first_run() -> None:
        app = app_run()
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: pane in app.table.agents, "the agent in the table", timeout=30)
            await asyncio.to_thread(session.submit, "create the file")
            await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30, what="the permission")
            await wait_until(pilot, lambda: app.table.agents[pane].state is AgentState.PERMISSION, "the permission row")
            await wait_until(pilot, lambda: claudes_status(session.home).status == "waiting", "Claude's own 'waiting'", timeout=10)
            seen["waiting"] = claudes_status(session.home).updated_at
            # Long enough for the late hook (Notification, about 6 s after the dialog) to arrive:
            # the row's time must never go back.
            last = 0
            deadline = time.monotonic() + 9
            while time.monotonic() < deadline:
                shown = seconds(str(app.table.get_cell(pane, "time")))
                assert shown >= last, f"the row's time went back from {last}s to {shown}s"
                last = shown
                await pilot.pause(0.2)
            await check_wait(pilot, app, seen["waiting"])

    async def second_run() -> None:
        app = app_run()
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: pane in app.table.agents and app.table.agents[pane].state is AgentState.PERMISSION, "the wait after a restart", timeout=30)
            await pilot.pause(1.0)  # the transcript and the status file read
            await check_wait(pilot, app, seen["waiting"])
            app.table.select(pane)
            await pilot.press("e")
            await wait_until(pilot, lambda: "since" in " ".join(str(s.render()) for s in app.screen.query(Static)), "the why screen's claim")
            began = time.strftime("%H:%M:%S", time.localtime(app.table.agents[pane].since))
            assert f"permission since {began}" in " ".join(str(s.render()) for s in app.screen.query(Static))
            await pilot.press("escape")
            await pilot.pause(1.2)  # past the reaction time before a key answers a prompt
            await press_as_a_person(pilot, app, pane, "y", lambda: app.table.agents[pane].answered, "the answer on the row")
            await asyncio.to_thread(session.wait_for, "Created.", timeout=30, what="the reply")
            await wait_until(pilot, lambda: app.table.agents[pane].state is AgentState.IDLE, "idle after the reply")
            await asyncio.to_thread(session.submit, "think it over")
            await wait_until(pilot, lambda: app.table.agents[pane].state is AgentState.WORKING, "the new turn")
            await wait_until(pilot, lambda: claudes_status(session.home).status == "busy", "Claude's own 'busy'", timeout=10)
            seen["busy"] = claudes_status(session.home).updated_at
            # The row says the present: the prompt it works on, not the last answer.
            await wait_until(pilot, lambda: str(app.table.get_cell(pane, "waiting")).startswith("▸ think it over"), "the prompt on the working row", timeout=10)
            await pilot.pause(2.0)

    async def third_run() -> None:
        app = app_run()
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: pane in app.table.agents and app.table.agents[pane].state is AgentState.WORKING, "the turn after a restart", timeout=30)
            await pilot.pause(1.0)
            agent = app.table.agents[pane]
            now = app.clock()
            assert abs(agent.since - seen["busy"]) <= 1.0, f"the turn counts from {agent.since - seen['busy']:+.1f}s off Claude's 'busy since'"
            assert str(app.table.get_cell(pane, "time")) == elapsed(now - agent.since, precise=False)
            assert str(app.table.get_cell(pane, "waiting")).startswith("▸ think it over")
            # No wait is open: the total is the one that closed, from Claude's "waiting" to the answer.
            total = app.service.waited_today(app.table.agents, now)
            closed = seen["answered"] - seen["waiting"]
            assert total is not None and abs(total - closed) <= 1.0, f"header total {total:.1f}s; the wait lasted {closed:.1f}s"
            assert f"waits today (sum): {elapsed(total, precise=False)}" in header(app), header(app)
            # The timeline dates each state by the same claim: the permission at Claude's "waiting since".
            app.table.select(pane)
            await pilot.press("t")
            await wait_until(pilot, lambda: isinstance(app.screen, TimelineScreen), "the timeline")
            events = app.screen.events
            dated = began(events)
            waits = [dated[i] for i, e in enumerate(events) if e.kind == "agent_state" and e.payload.get("to") == "permission"]
            assert waits and abs(waits[-1] - seen["waiting"]) <= 1.0, (waits, seen["waiting"])
            console = Console(width=160, record=True, file=io.StringIO())
            console.print(timeline_table(events, app.screen.state_styles))  # what the timeline screen draws
            # The wait's line (the timeline is in time order, and a restart's own "permission" line may sort after it).
            lines = [line for line in console.export_text().splitlines() if "state →" in line and "permission" in line]
            assert any(line.split()[0] == time.strftime("%H:%M:%S", time.localtime(waits[-1])) for line in lines), lines

    asyncio.run(first_run())
    time.sleep(3)  # headspace is not running: the wait goes on
    asyncio.run(second_run())
    seen["answered"] = answered_at(session, seen)
    time.sleep(3)  # headspace is not running: the turn goes on
    asyncio.run(third_run())


def answered_at(session, seen: dict[str, float]) -> float:
    """When the permission was answered, by Claude's own word: the transcript's tool result after the dialog."""
    from headspace_tui.detect.claude.transcript import TranscriptTail, transcript_path
    from headspace_tui.service.records.journal import turn_time

    status = claudes_status(session.home)
    turns = TranscriptTail(transcript_path(session.home / ".claude", status.cwd, status.session_id)).read_new()
    results = [turn_time(t) for t in turns if t.role == "tool_result" and (turn_time(t) or 0) > seen["waiting"]]
    assert results, "no tool result after the dialog in Claude's transcript"
    return float(results[0] or 0.0)
