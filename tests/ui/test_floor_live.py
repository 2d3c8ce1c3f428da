"""After a reply, the row follows Claude back to work: Claude's late status file does not hold it at "needs you" (issue 37).

Seen in a trial on a loaded machine: for about 5 s after an ``r`` reply went
into a question's "Type something.", the row read "? question … input needed
(Claude's status file)" while the pane showed Claude working.  Here the real
Claude Code (the pinned version, its scripted API holding its next answer
back so its turn keeps running) is answered through the app's ``r``; the
pane and the row are watched side by side, and the row must read working
within about a second of the pane showing the turn running again.

On a quiet machine Claude rewrites its status file within a frame of the
redraw (measured here: 0.0–0.26 s), so the late file is reproduced by
holding back, for ``late`` seconds, the status-file watcher's report that
Claude stopped waiting: the one stand-in in these tests, for the load
that cannot be made on demand.  Everything else is real: Claude, tmux, the
files Claude writes, the app's reply.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from textual.widgets import Input

from headspace_tui.app.screens.reply import ReplyScreen
from headspace_tui.detect.claude import classify_capture
from headspace_tui.hooks import settings as hook_settings
from headspace_tui.model import AgentState, Channel
from tests.e2e.test_answer_channel import app_for as hooked_app
from tests.e2e.test_answer_channel import private_runtime
from tests.harness import fake_api as api
from tests.harness.scenarios import QUESTION_DB
from tests.ui.apps import press_as_a_person, screen_open, service_of, wait_until
from tests.ui.test_app_live import run, select_agent

pytestmark = pytest.mark.e2e

ANSWER = "MariaDB on three nodes"


class PaneWatch(threading.Thread):
    """Reads the pane (and Claude's status file) every 50 ms and notes when each first showed Claude working."""

    def __init__(self, session) -> None:
        super().__init__(daemon=True)
        self.session = session
        self.stop = threading.Event()
        self.working_at: float | None = None
        self.file_busy_at: float | None = None

    def run(self) -> None:
        while not self.stop.is_set():
            now = time.time()
            if self.working_at is None and classify_capture(self.session.ansi(), command="claude").state is AgentState.WORKING:
                self.working_at = now
            if self.file_busy_at is None and self._file_says_busy():
                self.file_busy_at = now
            self.stop.wait(0.05)

    def _file_says_busy(self) -> bool:
        for path in (self.session.home / ".claude" / "sessions").glob("*.json"):
            try:
                if json.loads(path.read_text()).get("status") == "busy":
                    return True
            except (OSError, ValueError):
                continue
        return False


def hold_back_the_end_of_a_wait(watch_statuses, late: float, released: threading.Event):
    """``host.watch_statuses`` whose report that an agent stopped waiting arrives ``late`` seconds after Claude wrote it (``released`` set as it goes)."""

    async def watch(folder):
        waiting: set[int] = set()
        async for statuses in watch_statuses(folder):
            if any(pid not in statuses or statuses[pid].status != "waiting" for pid in waiting):
                await asyncio.sleep(late)
                released.set()
            waiting = {pid for pid, status in statuses.items() if status.status == "waiting"}
            yield statuses

    return watch


@pytest.mark.parametrize("answer_hook,late", [(False, 0.0), (False, 5.0), (True, 5.0)], ids=["keys-only", "keys-only-file-5s-late", "hook-holds-the-dialog-file-5s-late"])
def test_after_a_reply_the_row_reads_working_as_soon_as_the_pane_does(claude_session, fake_api, private_tmux, tmp_path, answer_hook, late):
    runtime = private_runtime(tmp_path)
    # After the answer Claude's next request is held for a minute: its turn runs on screen.
    fake_api.set_script([api.ask(QUESTION_DB), api.text("MariaDB it is.", delay=60)])
    session = claude_session((), launch=False, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
    if answer_hook:
        hook_settings.install(session.home / ".claude" / "settings.json", answer_wait=120)
    session.launch()

    released = threading.Event()  # the held-back report that Claude stopped waiting reached the service

    async def scenario() -> None:
        app = hooked_app(private_tmux, session, runtime)
        if late:
            host = service_of(app)._fleet.first.host
            host.watch_statuses = hold_back_the_end_of_a_wait(host.watch_statuses, late, released)  # type: ignore[method-assign]
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_until(pilot, lambda: session.pane_id in app.table.agents, "the row")
            await asyncio.to_thread(session.submit, "pick a database")
            await asyncio.to_thread(session.wait_for, "Enter to select", timeout=30, what="the question dialog")
            if answer_hook:
                # The reply is for the question as the user saw it: with the hook holding it.
                await wait_until(pilot, lambda: app.table.agents[session.pane_id].channel == Channel.HOOK, "the hook holding the question")
            await select_agent(pilot, app, session.pane_id, AgentState.QUESTION)
            await press_as_a_person(pilot, app, session.pane_id, "r", lambda: screen_open(app, ReplyScreen) and isinstance(app.focused, Input), "the reply box, open and focused")
            watch = PaneWatch(session)
            watch.start()
            released.clear()  # from this answer's wait on
            try:
                await pilot.press(*ANSWER, "enter")
                try:
                    request = await asyncio.to_thread(fake_api.wait_for, lambda r: bool(r.tool_results()), 30)
                except Exception as exc:
                    row = app.table.agents[session.pane_id]
                    raise AssertionError(f"{exc}\nrow: {row.state} {row.answered!r}\npane:\n{session.screen()}") from exc
                assert ANSWER in json.dumps(request.tool_results()), "the typed answer reached Claude"
                row = app.table.agents[session.pane_id]
                await wait_until(pilot, lambda: watch.working_at is not None, "the pane to show Claude working", timeout=15)
                await wait_until(pilot, lambda: app.table.agents[session.pane_id].state is AgentState.WORKING, "the row to read working", timeout=15)
                row_at, read_before_the_file = time.time(), not released.is_set()
                row = app.table.agents[session.pane_id]
                assert watch.working_at is not None
                lag = row_at - watch.working_at
                file_lag = f"{watch.file_busy_at - watch.working_at:.2f}s after" if watch.file_busy_at else "not yet"
                # How soon is the benchmarks' (inbox_move.py); here, what the row follows: with Claude's
                # word that the wait ended held back, the row reads working from the pane before that word arrives.
                print(f"\nrow read working {lag:.2f}s after the pane showed it; Claude's file said busy {file_lag}")
                if late:
                    assert read_before_the_file, f"the row waited for Claude's file, held {late:g}s, not the pane (its evidence: {row.observation.evidence})"
                # Nobody needs to answer it any more: the header's count does not hold it.
                assert not app.table.agents[session.pane_id].state.needs_you
            finally:
                watch.stop.set()
                await asyncio.to_thread(watch.join, 2)

    run(scenario())
