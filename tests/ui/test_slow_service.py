"""Nothing blocks the keys: with a resident service that answers after 2 s, a cursor move is on screen at once.

The parts are real: ``headspace serve`` in its own process on a private
tmux server, watching real Claude Code sessions, and the app as its client
(``ServiceClient``).  The one thing added is the slowness: the client talks
to the service through a relay (a Unix socket beside the service's) that
hands every byte the client sends to the service ``delay`` seconds after it
came, as a busy or far service would answer; the service's bytes come back
at once (the stream of events flows as it does).  Nothing is stubbed.

* Several rows, ``down`` then ``up`` 80 ms apart: each move's frame (the
  app's own ``_display``, what goes to the terminal) shows the cursor on the
  new row and the preview titled for its agent (its screen follows when the
  service sends it) within 100 ms, the aim; asserted: well
  before the 2 s a move that waited on the service would take (``LIMIT``).
* ``y`` on a permission while the service takes 1.5 s (within the client's
  2 s, so the answer does go and its report comes back): the header says
  "waiting for the service" while the answer is out, the cursor still moves
  at once, a second ``y`` on that agent meanwhile sends nothing (the relay
  counts one answer request), and the answer lands.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from textual import events

from headspace_tui.answering.answerer import Report
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.widgets.preview import PanePreview
from headspace_tui.app.widgets.summary import SummaryLine
from headspace_tui.model import AgentState
from headspace_tui.resident.facade_client import ServiceClient
from headspace_tui.shared.config import Config
from headspace_tui.shared.resident_place import Place, place_of
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_resident_service import started
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU
from tests.ui.apps import wait_until

AGENTS = 4  # one waiting on a permission (first in the table), three idle
SLOW = 2.0  # seconds the service takes to hear each request
ANSWER_SLOW = 1.5  # for the answer: slow, yet within the client's 2 s, so the answer goes and its report comes
GAP = 0.08  # seconds between two key presses
BUDGET = 0.1  # seconds from a key to the frame that shows its move, on a machine not loaded past 5x
# What is asserted: a move waits on no request.  One request waited on costs SLOW (the client gives up at
# 2 s); drawing a move costs 20-90 ms of CPU here, which on two cores shared by a load of 16 (other test
# runs) took up to 430 ms of wall clock in-process, where nothing is asked at all.  A move shown before
# SLOW has passed did not wait on a request: that order is the assertion (the numbers are printed; BUDGET,
# the aim, is not met under such load).  Half of SLOW was the bound until a clean-clone run with a core busy
# beside it saw every move reach the screen together, one stall of 1.07 s after the first key (no garbage
# collection longer than 10 ms meanwhile): the whole loop starved, not a move waiting on the service.
LIMIT = SLOW
ANSWERING_LIMIT = SLOW / 2  # a move while the answer is out (it comes back 1.5 s after y): the bound as it was
WAITING = "waiting for the service"


class SlowRelay:
    """A Unix socket in front of the service's: what a client sends reaches the service ``delay`` s later, in order; answers come back at once.

    Runs its own loop in its own thread, so a client that blocks the app's
    loop does not hold the relay up too (the service is slow, not stopped).
    """

    def __init__(self, target: Place) -> None:
        self.target = target
        self.place = Place(target.folder, f"{target.name}-slow")
        self.delay = 0.0
        self.sent: list[bytes] = []  # every chunk a client sent, as it came
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="slow-relay", daemon=True)
        self._server: asyncio.Server | None = None

    def answers_asked(self) -> int:
        return b"".join(self.sent).count(b"POST /v1/answers ")

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, slow: bool) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def take() -> None:
            with contextlib.suppress(OSError):
                while chunk := await reader.read(1 << 16):
                    if slow:
                        self.sent.append(chunk)
                    await queue.put((loop.time() + (self.delay if slow else 0.0), chunk))
            await queue.put((loop.time() + (self.delay if slow else 0.0), b""))

        taker = loop.create_task(take())
        try:
            while True:
                due, chunk = await queue.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                if not chunk:
                    with contextlib.suppress(OSError):
                        writer.write_eof()
                    return
                writer.write(chunk)
                await writer.drain()
        except OSError:
            pass
        finally:
            taker.cancel()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(str(self.target.socket))
        except OSError:
            writer.close()
            return
        try:
            await asyncio.gather(self._pump(reader, up_writer, True), self._pump(up_reader, writer, False))
        finally:
            up_writer.close()
            writer.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_unix_server(self._client, path=str(self.place.socket))

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()

    def __enter__(self) -> SlowRelay:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        with contextlib.suppress(OSError):
            Path(self.place.socket).unlink()


@dataclass
class Frames:
    """Every frame the app writes to its terminal: when, how many cursor moves the table had made, its cursor row, the preview's title."""

    app: HeadspaceApp
    shown: list[tuple[float, int, int, str]] = field(default_factory=list)
    moved: int = 0  # cursor moves the table made (its up and down actions run)

    def __post_init__(self) -> None:
        display, table = self.app._display, self.app.table

        def spy(screen, renderable) -> None:
            self.shown.append((time.monotonic(), self.moved, table.cursor_row, str(self.app.main.query_one(PanePreview).border_title or "")))
            display(screen, renderable)

        def counted(action: Callable[[], None]) -> Callable[[], None]:
            def move() -> None:
                self.moved += 1
                action()

            return move

        self.app._display = spy  # type: ignore[method-assign]
        table.action_cursor_down = counted(table.action_cursor_down)  # type: ignore[method-assign]
        table.action_cursor_up = counted(table.action_cursor_up)  # type: ignore[method-assign]

    def first(self, after: float, done: Callable[[int, int, str], bool]) -> float | None:
        """When the first frame from ``after`` on showed what ``done`` (moves made, row, title) looks for; None if none did yet."""
        return next((at for at, moved, row, title in self.shown if at >= after and done(moved, row, title)), None)


def header(app: HeadspaceApp) -> str:
    line = app.main.query_one("#summary", SummaryLine).line
    return line.plain if line is not None else ""


@contextlib.contextmanager
def collections_timed() -> Iterator[list[tuple[int, float]]]:
    """Every garbage collection of this process while inside: its generation and how long it took."""
    collected: list[tuple[int, float]] = []
    began: list[float] = []

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            began.append(time.perf_counter())
        elif began:
            collected.append((int(info.get("generation", -1)), round(time.perf_counter() - began.pop(), 4)))

    gc.callbacks.append(timed)
    try:
        yield collected
    finally:
        gc.callbacks.remove(timed)


def send_key(app: HeadspaceApp, key: str) -> None:
    """A key as the terminal hands it over (what ``pilot.press`` sends), without waiting for the app to be idle after it."""
    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(app)
    app._driver.send_message(event)


async def moves(app: HeadspaceApp, frames: Frames, keys: list[str], rows: list[int], pane_of: Callable[[int], str]) -> list[tuple[float, float | None]]:
    """Press ``keys`` GAP apart (each at its time, as a hand would); for each, seconds from its press to the first frame
    with the cursor on row ``rows[i]``, and to the first with the preview titled for that row's agent too (None: never).

    A frame after a later move (keys queued behind a blocked loop are read
    together) counts as showing it.
    """
    start = time.monotonic()
    pressed = []
    for n, key in enumerate(keys):
        await asyncio.sleep(max(0.0, start + n * GAP - time.monotonic()))
        pressed.append(start + n * GAP)  # when the hand pressed it (a blocked loop reads it late: that is part of the wait)
        send_key(app, key)
    deadline = time.monotonic() + 4 * SLOW * len(keys) + 5
    latencies: list[tuple[float, float | None]] = []
    for n, (at, row) in enumerate(zip(pressed, rows, strict=True)):
        while (cursor := frames.first(at, lambda moved, _row, _title, n=n: moved > n)) is None:  # this move, or one after it (keys read together)
            assert time.monotonic() < deadline, f"move {n + 1} ({keys[n]} to row {row}) never reached the screen; frames {frames.shown[-5:]}"
            await asyncio.sleep(0.05)
        latencies.append((cursor - at, None))
    await asyncio.sleep(SLOW + 0.5)  # a preview that follows at all has by now
    for n, at in enumerate(pressed):
        preview = frames.first(at, lambda moved, row, title, n=n: moved > n and pane_of(row) in title)
        latencies[n] = (latencies[n][0], None if preview is None else preview - at)
    return latencies


@contextlib.contextmanager
def slow_service(private_tmux, services) -> Iterator[tuple[SlowRelay, ServiceClient]]:
    started(private_tmux.name, services)
    with SlowRelay(place_of(TmuxServer(socket_name=private_tmux.name).identity)) as relay:
        client = ServiceClient(relay.place, config=Config())
        client.connect()
        yield relay, client


def test_cursor_moves_reach_the_screen_without_waiting_while_the_service_answers_after_2s(claude_session, private_tmux, services):
    asking = claude_session([api.bash("touch slow-service.txt", "Create a file"), api.text("Created it.")], name="asking")
    asking.submit("create a file")
    asking.wait_for(NUMBERED_MENU, timeout=60)
    others = [claude_session(name=f"idle{n}") for n in range(AGENTS - 1)]
    panes = {asking.pane_id, *(s.pane_id for s in others)}
    measured: dict[str, list] = {}

    with slow_service(private_tmux, services) as (relay, client):

        async def scenario() -> None:
            app = HeadspaceApp(client)
            async with app.run_test(size=(160, 44)) as pilot:
                table = app.table
                preview = app.main.query_one(PanePreview)
                await wait_until(pilot, lambda: set(table.agents) == panes, "every agent's row")
                await wait_until(pilot, lambda: table.agents[asking.pane_id].state is AgentState.PERMISSION, "the permission's row")
                await wait_until(pilot, lambda: table.selected_pane_id == asking.pane_id, "the cursor on the agent that needs you (first)")
                await wait_until(pilot, lambda: asking.pane_id in str(preview.border_title or "") and "Create a file" in str(preview._text), "its screen in the preview")
                await pilot.pause(1.0)  # the client's stream is open (it opens beside the first frame)
                frames = Frames(app)
                pane_of = lambda row: table.order[row] if 0 <= row < len(table.order) else "?"  # noqa: E731

                relay.delay = SLOW
                steps = len(panes) - 1
                keys = ["down"] * steps + ["up"] * steps
                rows = [*range(1, steps + 1), *range(steps - 1, -1, -1)]
                # The app paces the garbage collector in its own process (gc_pace); this one is a test worker's, its heap
                # every earlier test's: collected now, as the app's pacing would have, and every collection meanwhile timed.
                gc.collect()
                with collections_timed() as collected:
                    measured["moves"] = await moves(app, frames, keys, rows, pane_of)
                shown = [max(cursor, SLOW * 100 if preview is None else preview) for cursor, preview in measured["moves"]]
                assert max(shown) < LIMIT, f"key to screen per move (s; cursor, preview titled for the agent): {measured['moves']}; garbage collections meanwhile (generation, s): {collected}"

                # An answer while the service is slow: said, never waited on, never sent twice.
                relay.delay = ANSWER_SLOW
                await wait_until(pilot, lambda: table.selected_pane_id == asking.pane_id, "the cursor back on the permission")
                await wait_until(pilot, lambda: WAITING not in header(app), "nothing out before the answer", timeout=3 * SLOW + 2)
                reports: list[Report] = []
                client.on_answer_report(reports.append)
                asked_before = relay.answers_asked()
                pressed = time.monotonic()
                send_key(app, "y")
                await wait_until(pilot, lambda: WAITING in header(app), "the header saying the answer waits for the service", timeout=ANSWER_SLOW - 0.5, every=0.02)
                said = frames.first(pressed, lambda moved, row, title: True)
                assert time.monotonic() - pressed < ANSWER_SLOW, "the waiting line came only once the service had answered"
                moved_at = time.monotonic()
                send_key(app, "down")
                measured["move while answering"] = [0.0]
                while (when := frames.first(moved_at, lambda moved, row, title: row == 1 and pane_of(1) in title)) is None:
                    assert time.monotonic() - moved_at < 4 * SLOW, "the cursor did not move while the answer was out"
                    await asyncio.sleep(0.02)
                measured["move while answering"] = [when - moved_at]
                assert when - moved_at <= ANSWERING_LIMIT, f"a move while an answer is out took {when - moved_at:.3f}s"
                send_key(app, "up")
                await wait_until(pilot, lambda: table.selected_pane_id == asking.pane_id, "back on the permission", timeout=1.0, every=0.02)
                send_key(app, "y")  # a second y while the first is out: nothing more is sent
                await wait_until(pilot, lambda: any(r.final for r in reports), f"the answer's final report: {reports}", timeout=30)
                assert reports[-1].delivered, reports
                assert relay.answers_asked() - asked_before == 1, "the second y sent another answer"
                await wait_until(pilot, lambda: WAITING not in header(app), "the waiting line gone once the service answered", timeout=5)
                assert said is not None

        asyncio.run(scenario())
    print(f"key to screen with a {SLOW:g} s service: {measured}")
    if out := os.environ.get("HEADSPACE_BENCH_OUT"):  # benchmarks/slow_service_keys.py: the figures, against the 100 ms aim
        Path(out).write_text(json.dumps(measured))
    asking.wait_for("Created it.", timeout=30)
    assert (asking.workdir / "slow-service.txt").exists()
