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
* ``GET /v1/agents[?settle=S]``: every agent as a row (api/rows.py), in
  the table's order, and one line per host with a problem; ``settle`` waits
  up to S seconds for the first look to be whole, so a client that asks
  right after the start is not told of half the agents.
* ``GET /v1/events``: Server-Sent Events, one JSON object per change
  (``agent`` with its row, ``removed``, ``hosts``, ``notice``).  A client that
  falls behind by more than EVENTS_QUEUED is cut off: it asks again.
* ``POST /v1/answer``: answer one agent (``{"pane_id": "%3", "intent":
  "approve", "option": "", "text": "", "expect": FINGERPRINT}``) through
  the service's one answerer, its policy and guard (the hook holding the
  exact call when there is one, else the guarded keys); the answer is the
  final report, ``{"delivered": bool, "detail": "..."}``.  ``expect``: only
  if the prompt shown is that request (one appearance of it: ``status
  --json``'s ``request``).
* ``POST /v1/stop``: the service ends (its clients' lines end with it).
* The facade's own routes, what the terminal UI asks (facade_routes.py):
  ``/v1/state``, ``/v1/events?form=facade``, ``/v1/answers``, ``/v1/input``...

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
import logging
import os
import signal
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .. import __version__
from ..api.call import Asked
from ..api.calls import CALLS
from ..api.errors import ServiceError, server_gone
from ..api.facade import Report
from ..api.own_calls import OWN
from ..api.rows import agent_row
from ..events import AgentChanged, AgentRemoved, Event, Notice, ProblemChanged
from ..model import PaneAddress
from ..notifications.decide import Notification
from ..service.answer_wait import AnswerWait
from ..service.facade import Service
from ..shared import heap
from ..shared.fanout import Fanout, sse
from ..shared.peer import peer_uid
from ..shared.resident_place import Place, make_folder, remove_files, take_lock, write_card
from ..web import kept
from ..web.push import Pusher, key_path, store_path
from ..web.server import WebOptions, WebPage, WebSite, web_options
from .deadline import Deadline
from .facade_routes import SERVED_OWN, SETTLE_MAX, FacadeRoutes, FacadeStream, first_look_whole
from .ringer import Ringer

TMUX_CHECK = 2.0  # seconds between two looks at whether the tmux server still runs
GIVE_BACK_EVERY = 60.0  # seconds between two hand-backs of the allocator's free pages (shared/heap.py)
EVENTS_QUEUED = 1000  # events a slow client may fall behind by before it is cut off
WRITE_TIMEOUT = 5.0  # seconds one write to an events client may take (one that stops reading is cut off)
SHUTDOWN_TIMEOUT = 1.0  # seconds the clients' connections get to end when the service does
# Seconds the events streams get to send the service's last word before they are cut.  The wait ends as soon as each
# has; 0.3 s was not always enough on a loaded machine (a CI run), and the client then said only "not answering".
LAST_WORD = 1.5
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

    def __init__(self, service: Service, server: Watched, place: Place, *, ringer: Ringer | None = None, config_path: str | None = None, web_on_start: WebOptions | None = None) -> None:
        self.service = service
        self.ringer = ringer
        self.config_path = config_path  # None: the default config (what a plain ``status`` reads)
        self.server = server
        self.place = place
        self.started = time.time()
        self.stopping = asyncio.Event()
        self.why = ""  # why the service ended, for its log
        self.socket_inode: int | None = None  # the socket's, once it listens (only ours is removed)
        # Once the service decides to end, the process ends within this bound, whatever it waits on
        # (deadline.py): armed by ``serve``, the process's own entry, never in a process that only hosts one.
        self.deadline: Deadline | None = None
        self._streams = Fanout(EVENTS_QUEUED, "an events client")  # the rows' streams (status, a script)
        self._facade_streams = Fanout(EVENTS_QUEUED, "a facade client")  # the facade's (a terminal UI: facade_client.py)
        self.facade = FacadeStream(service)
        self._streaming: set[asyncio.Task[Any]] = set()  # the events handlers: ended with the service, whatever they wait on
        self._settled = asyncio.Event()
        self.answers = AnswerWait(service)  # the answers asked over the socket (``send``) and from the web page, each waiting for its final report
        # The phones that asked to be notified (Web Push), each wait the ringer rings pushed to them while the page is served.
        self.pusher = Pusher(store_path(place.name), key_path(), service.config.push, since_key=service.since_here, record=service.record)
        self.web = WebSite(WebPage(service, self.answers, self.facade.focus, self.facade.gone, self.pusher))  # the phone page: off until asked (/v1/web, [web])
        self.web.page.on_snoozes = self._snoozes_changed
        self.web_on_start = web_on_start
        if ringer is not None:
            ringer.page_link = self._page_link
            ringer.also = self._to_phones
        service.subscribe(self._event)
        service.on_answer_report(self._report)

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
            "web": self._web_card(),
        }

    def _page_link(self, address: str) -> str:
        return self.web.page.options.link(address) if self.web.running else ""

    def _to_phones(self, note: Notification) -> None:
        if self.web.running:
            self.web.page.push(note)

    def _web_card(self) -> dict[str, Any] | None:
        if not self.web.running:
            return None
        options = self.web.page.options
        return {"host": options.host, "port": options.port, "scheme": options.scheme, "read_only": options.read_only}

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._same_user], client_max_size=MAX_REQUEST)
        for call in OWN.values():  # the service's own calls: each answered by its method of the same name (or the facade's routes)
            if call.name not in SERVED_OWN:
                app.router.add_route(call.verb, call.path, getattr(self, f"_{call.name}"))
        app.router.add_get(CALLS["events"].path, self._events)  # the rows' stream, and the facade's (``form=facade``)
        FacadeRoutes(self.service, self.facade, self._settle, self._snoozes_changed, settled=self._first_look_whole, answers=self.answers).add(app)
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

    async def _settle(self, settle: float) -> None:
        """Wait up to ``settle`` seconds (at most SETTLE_MAX) for the first look to be whole."""
        if settle and not self._first_look_whole():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._settled.wait(), min(SETTLE_MAX, settle))

    def _first_look_whole(self) -> bool:
        whole = first_look_whole(self.service)
        if whole:
            self._settled.set()
        return whole

    async def _events(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        streams = self._facade_streams if request.query.get("form") == "facade" else self._streams
        queue = streams.follow()
        handler = asyncio.current_task()
        if handler is not None:
            self._streaming.add(handler)
        try:
            await asyncio.wait_for(response.write(b": headspace events\n\n"), WRITE_TIMEOUT)
            while True:  # until the queue's end (None): the service's end puts its last word, then the end
                item = await queue.get()
                if item is None:
                    break
                # A client that stops reading blocks the write: it is cut off, never waited on.
                await asyncio.wait_for(response.write(item), WRITE_TIMEOUT)
        except (ConnectionError, TimeoutError):
            log.info("an events client went away or stopped reading: cut off")
        finally:
            streams.leave(queue)
            client = request.query.get("client")
            if streams is self._facade_streams and client:
                self.facade.gone(client)  # its preview ends with it
            if handler is not None:
                self._streaming.discard(handler)
        return response

    @staticmethod
    async def _body(request: web.Request, name: str) -> dict[str, Any] | web.Response:
        """The JSON object ``OWN[name]`` takes, each declared field of its type; or the 400 that says what is wrong."""
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"error": "the request is not JSON"}, status=400)
        if not isinstance(body, dict):
            return web.json_response({"error": "the request is not a JSON object"}, status=400)
        try:
            OWN[name].take(body)
        except Asked as exc:
            return web.json_response({"error": str(exc)}, status=400)
        return body

    async def _rules(self, request: web.Request) -> web.Response:
        """``headspace rules pause|resume|revoke``: the same change the page makes, through the service's rules (its event log)."""
        body = await self._body(request, "rules")
        if isinstance(body, web.Response):
            return body
        taken = OWN["rules"].take(body)  # checked by _body: each field as it is declared
        try:
            said = self.service.rules_control(taken["action"], taken["rule"], taken["host"], via="headspace rules")
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=409)
        log.info("rules %s %s %s from the command line", taken["action"], taken["rule"] or "(all)", taken["host"] or "(all hosts)")
        return web.json_response({"said": said})

    async def _start_on_host(self, request: web.Request) -> web.Response:
        """``headspace new --host``: an agent started on a host this service watches, through its link (the service's one way to start it)."""
        body = await self._body(request, "start_on_host")
        if isinstance(body, web.Response):
            return body
        taken = OWN["start_on_host"].take(body)
        try:
            started = await self.service.start_on_host(taken["host"], taken["folder"], taken["args"], taken["session"])
        except ServiceError as exc:
            return web.json_response({"error": str(exc)}, status=409)
        log.info("started %s in %s on %s from the command line", started.pane_id, started.cwd, taken["host"])
        return web.json_response({"pane": started.pane_id, "target": started.target, "cwd": started.cwd})

    def _report(self, report: Report) -> None:
        if self._facade_streams:
            self._push(self._facade_streams, [self.facade.report(report)])

    async def _web(self, request: web.Request) -> web.Response:
        """Turn the web page on at an address (``headspace web``), off (``{"off": true}``), or say where it is (``{"keep": true}``); the answer carries its URL with the token."""
        body = await self._body(request, "web")
        if isinstance(body, web.Response):
            return body
        if body.get("off") is True:
            await self.web.stop()
            kept.forget(kept.kept_path(self.place.name))
            return web.json_response({"web": None})
        if body.get("keep") is True:  # the page as it is, if it is on: its address again
            running = self.web.running
            return web.json_response({"web": self._web_card(), "url": self.web.page.options.url() if running else None})
        options = web_options(body, self.web.page.options if self.web.running else None)
        if isinstance(options, str):
            return web.json_response({"error": options}, status=400)
        try:
            await self.web.start(options)
        except (OSError, ssl.SSLError) as exc:
            log.warning("the web page could not be served at %s:%d: %s", options.host, options.port, exc)
            return web.json_response({"error": f"cannot serve the page at {options.host}:{options.port}: {exc.strerror or exc}"}, status=409)
        write_card(self.place, self.card())
        self._keep_web(options)
        return web.json_response({"web": self._web_card(), "url": options.url()})

    def _keep_web(self, options: WebOptions) -> None:
        """The page that is on, kept for the next start of the service (web/kept.py): same address, same token."""
        settings = {"host": options.host, "port": options.port, "token": options.token, "read_only": options.read_only, "tls": list(options.tls) if options.tls else None}
        try:
            kept.keep(kept.kept_path(self.place.name), settings)
        except OSError as exc:
            log.warning("the web page's settings could not be kept (%s): after a restart it stays off until 'headspace web'", exc.strerror or exc)

    async def _web_again(self) -> None:
        """The page that was on when the service last ran, on again at the same address with the same token."""
        settings = kept.kept(kept.kept_path(self.place.name))
        if settings is None:
            return
        options = web_options(settings)
        if isinstance(options, str):
            log.warning("the web page's kept settings are not valid (%s); the page stays off", options)
            return
        try:
            await self.web.start(options)
        except (OSError, ssl.SSLError) as exc:
            log.warning("the web page could not be served again at %s:%d: %s; it stays off until 'headspace web'", options.host, options.port, exc)
            return
        log.info("the web page is back at %s://%s:%d (kept from the last run)", options.scheme, options.host, options.port)

    async def _stop(self, request: web.Request) -> web.Response:
        self.end("asked to stop (serve --stop)")
        return web.json_response({"stopping": True})

    # -- events to the streams ---------------------------------------------------------------
    def _snoozes_changed(self) -> None:
        """A snooze changed (a terminal client's or the page's): every front end hears it, so all show one set."""
        if self._facade_streams:
            self._push(self._facade_streams, self.facade.snoozes_if_changed())
        self.web.page.snoozes_changed()

    def _event(self, event: Event) -> None:
        if isinstance(event, ProblemChanged):
            self._first_look_whole()
        if self._facade_streams:
            self._push(self._facade_streams, self.facade.event(event))
        if not self._streams:
            return  # nobody follows: no row is built for every change
        item: dict[str, Any] | None = None
        if isinstance(event, AgentChanged):
            item = {"type": "agent", "row": agent_row(event.agent, time.time())}
        elif isinstance(event, AgentRemoved):
            address = PaneAddress.parse(event.pane_id)
            item = {"type": "removed", "host": address.host, "pane_id": address.pane}
        elif isinstance(event, ProblemChanged):
            item = {"type": "hosts", "hosts": [{"host": host, "problem": problem} for host, problem in self.service.hosts()]}
        elif isinstance(event, Notice):
            item = {"type": "notice", "text": event.text}
        if item is not None:
            self._push(self._streams, [item])

    @staticmethod
    def _push(streams: Fanout, items: list[dict[str, Any]]) -> None:
        """``items`` to every follower of ``streams``, each encoded once as the event it is."""
        streams.put(*(sse(item) for item in items))

    # -- life ----------------------------------------------------------------------------------
    def end(self, why: str) -> None:
        if not self.stopping.is_set():
            self.why = why
            self.stopping.set()
            log.info("service ending: %s", why)
            if self.deadline is not None:
                self.deadline.start(why)

    def _signalled(self, name: str) -> None:
        """SIGTERM, SIGINT or SIGHUP: the first ends the service; a second while it ends, the process at once."""
        if self.stopping.is_set() and self.deadline is not None:
            self.deadline.again(name)
        else:
            self.end(f"signal {name}")

    async def _watch_tmux(self, first_pid: int) -> None:
        """End the service when its tmux server is gone or replaced; a look that fails (no fork, say) is tried again, less often each time.

        The kernel says when the server's process ends (a pidfd read by the
        loop): nothing is asked of tmux while it runs.  A look every
        TMUX_CHECK seconds (a forked ``tmux display-message``, about a
        tenth of the idle service's cost) is what is left where no pidfd
        can be had (an old kernel, a pid not known).
        """
        if first_pid and await self._until_gone(first_pid):
            pid = await asyncio.to_thread(self.server.pid)  # gone, or replaced by a server of its own on the socket
            if pid is None:
                self.end(server_gone(self.server.where))
                return
            if pid and pid != first_pid:
                self.end(f"another tmux server ({self.server.where}, pid {pid}) took the socket")
                return
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
                self.end(server_gone(self.server.where))
            elif pid and first_pid and pid != first_pid:
                self.end(f"another tmux server ({self.server.where}, pid {pid}) took the socket")

    async def _until_gone(self, pid: int) -> bool:
        """Wait until process ``pid`` ends (True) or the service stops (False); False at once where the kernel gives no pidfd."""
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            return False
        ended = asyncio.Event()
        loop = asyncio.get_running_loop()
        try:
            loop.add_reader(fd, ended.set)
            stop = asyncio.ensure_future(self.stopping.wait())
            done = asyncio.ensure_future(ended.wait())
            try:
                await asyncio.wait([stop, done], return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
                done.cancel()
            return ended.is_set()
        finally:
            loop.remove_reader(fd)
            os.close(fd)

    async def _give_back_memory(self) -> None:
        """Once a minute, the allocator's free pages to the system (shared/heap.py), off the loop.

        The service runs for days: each popup's whole-state request, each
        burst of sessions made and killed, left RSS at its high-water mark
        (about 21 MB an hour under the storm, with the Python objects level).
        """
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), GIVE_BACK_EVERY)
            if not self.stopping.is_set() and not await asyncio.to_thread(heap.give_back):
                return  # no malloc_trim here (musl, macOS): nothing to do

    async def run(self) -> str:
        """Serve until the end; why it ended."""
        first_pid = await asyncio.to_thread(self.server.pid)
        if first_pid is None:
            return f"no tmux server runs ({self.server.where})"
        loop = asyncio.get_running_loop()
        # Signals reach the main thread only: a service hosted on a thread of another program's (a test's) is ended by ``end``.
        signals = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP) if threading.current_thread() is threading.main_thread() else ()
        for signum in signals:
            loop.add_signal_handler(signum, self._signalled, signal.Signals(signum).name)
        runner = web.AppRunner(self.app(), access_log=None, handle_signals=False, handler_cancellation=True, shutdown_timeout=SHUTDOWN_TIMEOUT)
        await runner.setup()
        running = asyncio.create_task(self.service.run())
        watch = asyncio.create_task(self._watch_tmux(first_pid))
        ringing = asyncio.create_task(self.ringer.run()) if self.ringer is not None else None
        trimming = asyncio.create_task(self._give_back_memory())
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.place.socket)  # a stale socket: the lock is ours, so nobody listens there
            site = web.UnixSite(runner, str(self.place.socket))
            await site.start()
            os.chmod(self.place.socket, 0o600)
            self.socket_inode = os.lstat(self.place.socket).st_ino
            if self.web_on_start is not None:
                try:
                    await self.web.start(self.web_on_start)
                except (OSError, ssl.SSLError) as exc:
                    log.warning("the web page ([web] in the config) could not be served at %s:%d: %s", self.web_on_start.host, self.web_on_start.port, exc)
            else:
                await self._web_again()
            write_card(self.place, self.card())
            log.info("service %s serving %s at %s", __version__, self.server.where, self.place.socket)
            asked = asyncio.ensure_future(self.stopping.wait())
            done, _ = await asyncio.wait({running, asked, watch}, return_when=asyncio.FIRST_COMPLETED)
            asked.cancel()
            for part, name in ((running, "the service"), (watch, "the watch on tmux")):
                if part in done and not part.cancelled() and part.exception() is not None:
                    self.why = f"{name} failed: {part.exception()}"
                    log.error("%s failed", name, exc_info=part.exception())
        except Exception as exc:
            # Said here, before the shutdown: a shutdown that runs out its deadline ends the process before this propagates.
            self.why = self.why or f"failed: {type(exc).__name__}: {exc}"
            log.exception("the service failed")
            raise
        finally:
            self.end(self.why or "ended")
            self._facade_streams.end(sse({"kind": "ending", "why": self.why}))  # the clients hear why (a tmux server gone, a stop), not only that the line went
            self._streams.end()
            if self._streaming:
                await asyncio.wait(list(self._streaming), timeout=LAST_WORD)
            for handler in list(self._streaming):
                handler.cancel()  # one blocked on a client that stopped reading ends now, not at the runner's timeout
            watch.cancel()
            running.cancel()
            trimming.cancel()
            if ringing is not None:
                ringing.cancel()
            await asyncio.gather(watch, running, trimming, *([ringing] if ringing else []), return_exceptions=True)
            await self.web.stop()
            await self.pusher.close()
            await self.service.stop()
            await runner.cleanup()
            remove_files(self.place, self.socket_inode)
            for signum in signals:
                loop.remove_signal_handler(signum)
        log.info("service ended: %s", self.why)
        if self.deadline is not None:
            self.deadline.done()
        return self.why


def serve(
    service: Service,
    server: Watched,
    place: Place,
    make_ringer: Callable[[Service], Ringer] | None = None,
    *,
    config_path: str | None = None,
    web_on_start: WebOptions | None = None,
) -> str:
    """Hold the server's lock and serve until the end (resident_place.Taken when another service holds it); why it ended.

    ``make_ringer``: the service's ringer (ringer.py), made on the service's loop.
    """
    make_folder(place)
    lock = take_lock(place)

    async def main() -> str:
        ringer = make_ringer(service) if make_ringer else None
        resident = Resident(service, server, place, ringer=ringer, config_path=config_path, web_on_start=web_on_start)
        resident.deadline = Deadline(lambda: remove_files(place, resident.socket_inode), describe=_tasks_of(asyncio.get_running_loop()))
        return await resident.run()

    try:
        return asyncio.run(main())
    finally:
        os.close(lock)  # the kernel lets go of the flock with it


def _tasks_of(loop: asyncio.AbstractEventLoop) -> Callable[[], str]:
    """What each of ``loop``'s tasks waits on (its innermost frames), for a shutdown that ran out its deadline."""

    def describe() -> str:
        lines = []
        for task in list(asyncio.all_tasks(loop)):
            chain: list[str] = []
            step: Any = task.get_coro()
            while step is not None and len(chain) < 20:  # the awaits, outermost first (a task's own stack stops at its coroutine)
                frame = getattr(step, "cr_frame", None) or getattr(step, "gi_frame", None)
                if frame is not None:
                    chain.append(f"{frame.f_code.co_name} ({os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno})")
                step = getattr(step, "cr_await", None) or getattr(step, "gi_yieldfrom", None)
            lines.append(f"  task {task.get_name()}: {' -> '.join(chain[-4:]) or 'not started'}\n")
        return "".join(lines)

    return describe
