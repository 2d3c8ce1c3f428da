"""The resident service: the facade in a process of its own, served over HTTP on a Unix socket.

Why HTTP, and why aiohttp: the clients ask plain questions (who is there,
what each waits for) and follow a stream of changes; HTTP says both with
standard parts (JSON answers; Server-Sent Events for the stream, which a
browser reads natively, so the phone page of the next issue is one more
client of the same routes), and aiohttp is a well-kept asyncio HTTP server
that listens on a Unix socket as readily as on TCP.  No protocol of our own.

The routes (version 1; every answer is JSON, nothing a GET does changes
anything):

* ``GET /v1/hello``: the card (version, pid, tmux server, hosts, started).
* ``GET /v1/agents[?settle=S]``: every agent as a row (service/rows.py), in
  the table's order, and one line per host with a problem; ``settle`` waits
  up to S seconds for the first look to be whole, so a client that asks
  right after the start is not told of half the agents.
* ``GET /v1/events``: Server-Sent Events, one JSON object per change
  (``agent`` with its row, ``removed``, ``hosts``, ``notice``).  A client that
  falls behind by more than EVENTS_QUEUED is cut off: it asks again.
* ``POST /v1/stop``: the service ends (its clients' lines end with it).

Who may ask: the socket is 0600 in a 0700 folder (shared/resident_place.py), and each
connection's peer is checked by SO_PEERCRED: the same user only, as the
answer channel does.

The service lives while its tmux server does: it asks the server its pid
every TMUX_CHECK seconds (a plain command, never a control client), and ends
when the server is gone or another one has taken its socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .. import __version__
from ..events import AgentChanged, AgentRemoved, Event, Notice, ProblemChanged
from ..model import PaneAddress
from ..service.facade import Service
from ..service.rows import agent_row
from ..shared.peer import peer_uid
from ..shared.resident_place import Place, make_folder, remove_files, take_lock, write_card
from .ringer import Ringer

TMUX_CHECK = 2.0  # seconds between two looks at whether the tmux server still runs
SETTLE_MAX = 30.0  # seconds a request may wait for the first look
EVENTS_QUEUED = 1000  # events a slow client may fall behind by before it is cut off
WRITE_TIMEOUT = 5.0  # seconds one write to an events client may take (one that stops reading is cut off)
SHUTDOWN_TIMEOUT = 1.0  # seconds the clients' connections get to end when the service does
WATCH_BACKOFF_MAX = 30.0  # seconds between two looks at tmux after the look itself kept failing
MAX_REQUEST = 64 * 1024  # bytes: no route takes a body worth more

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Watched:
    """The tmux server the service lives by: its key (the place's name), its name for people, and how to ask its pid."""

    key: str
    where: str
    pid: Callable[[], int | None]  # TmuxServer.server_pid: None when no server runs, 0 when one runs but did not say


class Resident:
    """One service, its HTTP routes, and its life: started by ``run``, ended by its tmux server, a signal or ``/v1/stop``."""

    def __init__(self, service: Service, server: Watched, place: Place, *, ringer: Ringer | None = None, config_path: str | None = None, hosts: Sequence[str] = ()) -> None:
        self.service = service
        self.ringer = ringer
        self.config_path = config_path  # None: the default config (what a plain ``status`` reads)
        self.server = server
        self.place = place
        self.hosts = list(hosts)
        self.started = time.time()
        self.stopping = asyncio.Event()
        self.why = ""  # why the service ended, for its log
        self._streams: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._streaming: set[asyncio.Task[Any]] = set()  # the events handlers: ended with the service, whatever they wait on
        self._settled = asyncio.Event()
        service.subscribe(self._event)

    # -- the card and the routes -----------------------------------------------------------
    def card(self) -> dict[str, Any]:
        return {
            "version": __version__,
            "pid": os.getpid(),
            "server": self.server.key,
            "socket": str(self.place.socket),
            "started": self.started,
            "hosts": [name for name, _ in self.service.hosts()],
            "config": self.config_path,
        }

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._same_user], client_max_size=MAX_REQUEST)
        app.router.add_get("/v1/hello", self._hello)
        app.router.add_get("/v1/agents", self._agents)
        app.router.add_get("/v1/events", self._events)
        app.router.add_post("/v1/stop", self._stop)
        return app

    @web.middleware
    async def _same_user(self, request: web.Request, handler: Any) -> web.StreamResponse:
        uid = peer_uid(request.transport.get_extra_info("socket") if request.transport is not None else None)
        if uid is not None and uid != os.getuid():
            log.warning("refused a request from uid %s", uid)
            return web.json_response({"error": "another user's request"}, status=403)
        try:
            return await handler(request)
        except web.HTTPException as exc:
            return web.json_response({"error": exc.reason}, status=exc.status)

    async def _hello(self, request: web.Request) -> web.Response:
        return web.json_response(self.card())

    async def _agents(self, request: web.Request) -> web.Response:
        try:
            settle = min(SETTLE_MAX, max(0.0, float(request.query.get("settle", "0"))))
        except ValueError:
            return web.json_response({"error": "settle: a number of seconds"}, status=400)
        if settle and not self._first_look_whole():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._settled.wait(), settle)
        now = time.time()
        rows = [agent_row(agent, now) for agent in self.service.agents()]
        problems = [f"{host}: {problem}" if not problem.startswith(host) else problem for host, problem in self._problems()]
        return web.json_response({"agents": rows, "problems": problems})

    def _problems(self) -> list[tuple[str, str]]:
        out = []
        for host, problem in self.service.hosts():
            if problem == "starting":
                out.append((host, "still on its first look"))
            elif problem:
                out.append((host, problem))
        return out

    def _first_look_whole(self) -> bool:
        whole = all(problem != "starting" for _, problem in self.service.hosts())
        if whole:
            self._settled.set()
        return whole

    async def _events(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(EVENTS_QUEUED)
        self._streams.add(queue)
        handler = asyncio.current_task()
        if handler is not None:
            self._streaming.add(handler)
        try:
            await asyncio.wait_for(response.write(b": headspace events\n\n"), WRITE_TIMEOUT)
            while not self.stopping.is_set():
                item = await queue.get()
                if item is None:
                    break
                # A client that stops reading blocks the write: it is cut off, never waited on.
                await asyncio.wait_for(response.write(b"data: " + json.dumps(item).encode() + b"\n\n"), WRITE_TIMEOUT)
        except (ConnectionError, TimeoutError):
            log.info("an events client went away or stopped reading: cut off")
        finally:
            self._streams.discard(queue)
            if handler is not None:
                self._streaming.discard(handler)
        return response

    async def _stop(self, request: web.Request) -> web.Response:
        self.end("asked to stop (serve --stop)")
        return web.json_response({"stopping": True})

    # -- events to the streams ---------------------------------------------------------------
    def _event(self, event: Event) -> None:
        item: dict[str, Any] | None = None
        if isinstance(event, AgentChanged):
            item = {"type": "agent", "row": agent_row(event.agent, time.time())}
        elif isinstance(event, AgentRemoved):
            address = PaneAddress.parse(event.pane_id)
            item = {"type": "removed", "host": address.host, "pane_id": address.pane}
        elif isinstance(event, ProblemChanged):
            self._first_look_whole()
            item = {"type": "hosts", "hosts": [{"host": host, "problem": problem} for host, problem in self.service.hosts()]}
        elif isinstance(event, Notice):
            item = {"type": "notice", "text": event.text}
        if item is None:
            return
        for queue in list(self._streams):
            try:
                queue.put_nowait(item)
            except asyncio.QueueFull:
                log.info("an events client fell %d behind: cut off", EVENTS_QUEUED)
                self._streams.discard(queue)
                self._cut(queue)

    @staticmethod
    def _cut(queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        with contextlib.suppress(asyncio.QueueEmpty):
            queue.get_nowait()
        queue.put_nowait(None)

    # -- life ----------------------------------------------------------------------------------
    def end(self, why: str) -> None:
        if not self.stopping.is_set():
            self.why = why
            self.stopping.set()

    async def _watch_tmux(self, first_pid: int) -> None:
        """End the service when its tmux server is gone or replaced; a look that fails (no fork, say) is tried again, less often each time."""
        pause = TMUX_CHECK
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), pause)
            if self.stopping.is_set():
                return
            try:
                pid = await asyncio.to_thread(self.server.pid)
            except Exception:
                log.exception("could not ask the tmux server whether it runs; asking again in %gs", pause)
                pause = min(WATCH_BACKOFF_MAX, pause * 2)
                continue
            pause = TMUX_CHECK
            if pid is None:
                self.end(f"the tmux server ({self.server.where}) is gone")
            elif pid and first_pid and pid != first_pid:
                self.end(f"another tmux server ({self.server.where}, pid {pid}) took the socket")

    async def run(self) -> str:
        """Serve until the end; why it ended."""
        first_pid = await asyncio.to_thread(self.server.pid)
        if first_pid is None:
            return f"no tmux server runs ({self.server.where})"
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(signum, self.end, f"signal {signal.Signals(signum).name}")
        runner = web.AppRunner(self.app(), access_log=None, handle_signals=False, handler_cancellation=True, shutdown_timeout=SHUTDOWN_TIMEOUT)
        await runner.setup()
        inode: int | None = None
        running = asyncio.create_task(self.service.run())
        watch = asyncio.create_task(self._watch_tmux(first_pid))
        ringing = asyncio.create_task(self.ringer.run()) if self.ringer is not None else None
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.place.socket)  # a stale socket: the lock is ours, so nobody listens there
            site = web.UnixSite(runner, str(self.place.socket))
            await site.start()
            os.chmod(self.place.socket, 0o600)
            inode = os.lstat(self.place.socket).st_ino
            write_card(self.place, self.card())
            log.info("service %s serving %s at %s", __version__, self.server.where, self.place.socket)
            asked = asyncio.ensure_future(self.stopping.wait())
            done, _ = await asyncio.wait({running, asked, watch}, return_when=asyncio.FIRST_COMPLETED)
            asked.cancel()
            for part, name in ((running, "the service"), (watch, "the watch on tmux")):
                if part in done and not part.cancelled() and part.exception() is not None:
                    self.why = f"{name} failed: {part.exception()}"
                    log.error("%s failed", name, exc_info=part.exception())
        finally:
            self.end(self.why or "ended")
            for queue in list(self._streams):
                self._cut(queue)
            for handler in list(self._streaming):
                handler.cancel()  # one blocked on a client that stopped reading ends now, not at the runner's timeout
            watch.cancel()
            running.cancel()
            if ringing is not None:
                ringing.cancel()
            await asyncio.gather(watch, running, *([ringing] if ringing else []), return_exceptions=True)
            await self.service.stop()
            await runner.cleanup()
            remove_files(self.place, inode)
            for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.remove_signal_handler(signum)
        log.info("service ended: %s", self.why)
        return self.why


def serve(service: Service, server: Watched, place: Place, make_ringer: Callable[[Service], Ringer] | None = None, *, config_path: str | None = None) -> str:
    """Hold the server's lock and serve until the end (resident_place.Taken when another service holds it); why it ended.

    ``make_ringer``: the service's ringer (ringer.py), made on the service's loop.
    """
    make_folder(place)
    lock = take_lock(place)

    async def main() -> str:
        return await Resident(service, server, place, ringer=make_ringer(service) if make_ringer else None, config_path=config_path).run()

    try:
        return asyncio.run(main())
    finally:
        os.close(lock)  # the kernel lets go of the flock with it
