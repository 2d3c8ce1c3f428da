"""How a client's calls (calls.py) reach the service: over its Unix socket, or to the service in the same process.

``ServiceClient`` (facade_client.py) writes each call's fields as JSON and
hands them to its transport with the call; the transport hands back the
service's JSON reply.  Either way the fields and the reply are the same
JSON, so a front end in the service's own process holds copies, exactly as
a remote one does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..api.call import Asked, Call, url_path
from ..api.calls import CALLS, KEY
from ..api.errors import Lost, Refused, ServiceError
from ..api.facade import KeyStroke, Typing
from ..shared.resident_place import Place
from . import client

if TYPE_CHECKING:
    from ..service.facade import Service  # the in-process transport is handed one; a client of the resident service never loads it
    from .facade_routes import FacadeRoutes, FacadeStream  # imported when one is made: aiohttp costs a popup (a client over HTTP) 0.2 s of start-up


log = logging.getLogger(__name__)


class Transport(Protocol):
    prefix: str  # what a refusal is said with ("the headspace service: ", or nothing in the service's own process)

    def ask(self, call: Call, sent: Mapping[str, Any], timeout: float) -> Any:
        """``call`` with its fields as JSON: the service's JSON reply; a ``ServiceError`` (``Lost``, ``Refused``) when none came or it refused."""
        ...


class HttpTransport:
    """The resident service at ``place``, one HTTP request over its Unix socket per call."""

    prefix = "the headspace service: "  # a refusal, as the user reads it: said by the service

    def __init__(self, place: Place) -> None:
        self.place = place

    def ask(self, call: Call, sent: Mapping[str, Any], timeout: float) -> Any:
        body = dict(sent) if call.verb == "POST" else None
        return client.request(self.place, call.verb, url_path(call, sent), body=body, timeout=timeout)


class InProcess:
    """The service in this very process, behind the same calls: ``--no-service``, demos, tests.

    Each call goes to the same route handlers the resident service serves
    (facade_routes.py ``serve``), its fields and its reply through JSON both
    ways, and the service's events, reports and snoozes reach the client as
    the same stream items (``FacadeStream``), as JSON: the front end holds
    copies, exactly as a client of a resident service does.

    A front end asks from a thread (app/screens/asking.py), as it asks a
    resident service: the call is served on the service's loop, and one
    that runs tmux or git (``Call.blocking``) in a thread beside it, exactly
    as the HTTP server serves it, so a slow tmux never holds the app's keys.
    Asked before the service's loop runs (building the first frame, tests
    without a loop) it is answered at once.  On the loop itself only a
    question answered from memory is: one that would wait there is refused,
    since it would hold every front end's keys.
    """

    prefix = ""  # a refusal is the service's own line, as the user reads it from an in-process service

    def __init__(self, service: Service, *, looking: bool = False) -> None:
        """``looking``: a one-shot look's (``headspace status``): no ringer, and ``rows`` waits for its first look as a resident service's does."""
        from .facade_routes import FacadeRoutes, FacadeStream, first_look_whole, settle_here
        from .ringer import Ringer

        self.service = service
        # The service's ringer, as a resident service runs it; it leaves the ringing to a resident service of the same tmux server.
        self.ringer = None if looking else Ringer(service, service.config, service.socket_file(), clock=service.clock, env=dict(os.environ), elsewhere=service.rings_elsewhere)
        self.stream: FacadeStream = FacadeStream(service)
        settle = (lambda seconds: settle_here(service, seconds)) if looking else None  # a front end's first frame is drawn at once
        self.routes: FacadeRoutes = FacadeRoutes(service, self.stream, settle, self._snoozes_changed, settled=lambda: first_look_whole(service))
        self._take: Callable[[bytes], None] = lambda data: None
        self._loop: asyncio.AbstractEventLoop | None = None
        service.subscribe(lambda event: self._tell(self.stream.event(event)))
        service.on_answer_report(lambda report: self._tell([self.stream.report(report)]))

    def follow(self, take: Callable[[bytes], None]) -> None:
        """Hand every stream item, as the line the events stream would carry, to ``take`` (the client's)."""
        self._take = take

    def _tell(self, items: list[dict[str, Any]]) -> None:
        for item in items:
            self._take(json.dumps(item).encode())

    def _snoozes_changed(self) -> None:
        self._tell(self.stream.snoozes_if_changed())

    def ask(self, call: Call, sent: Mapping[str, Any], timeout: float) -> Any:
        fields = json.loads(json.dumps(sent))
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None:
            self._loop = running  # the service's loop: the app's (asked there before the service runs: its first frame)
        loop = self._loop
        try:
            if loop is not None and running is None and loop.is_running():  # a thread: served on the service's loop, as over HTTP
                reply = asyncio.run_coroutine_threadsafe(self.routes.serve(call, fields), loop).result(timeout)
            else:
                reply = self._at_once(call, fields, on_loop=running is not None)
        except (Asked, ServiceError) as exc:
            raise Refused(str(exc)) from None
        except concurrent.futures.TimeoutError:
            raise Lost(f"no answer within {timeout:g}s") from None
        except Exception as exc:  # as the HTTP server says it (facade_routes.py): one line for the user, the traceback to the log
            log.exception("%s failed", call.name)
            raise Refused(f"the service failed on it ({type(exc).__name__}); see its log") from None
        return json.loads(json.dumps(reply))

    async def asked(self, call: Call, fields: Mapping[str, Any], timeout: float) -> Any:
        """``call`` asked from a thread beside the service's running loop and served on it, as a client over HTTP asks (``errand``)."""
        return await asyncio.to_thread(self.ask, call, call.put(fields), timeout)

    def _at_once(self, call: Call, fields: dict[str, Any], *, on_loop: bool) -> Any:
        """``call`` answered here and now: before the service's loop runs, or on it for a question answered from memory."""
        if on_loop and call.blocking:
            raise ServiceError(f"{call.name} runs tmux: it is asked from a thread, never on the service's loop")
        reply = self.routes.answer_now(call, fields)
        if inspect.isawaitable(reply):
            close = getattr(reply, "close", None)
            if close is not None:
                close()
            raise ServiceError(f"{call.name} waits on the service's loop: it is asked from a thread")
        return reply

    async def run(self) -> None:
        """The service and its ringer, until cancelled (or the service ends)."""
        self._loop = asyncio.get_running_loop()
        ringing = asyncio.create_task(self.ringer.run()) if self.ringer is not None else None
        try:
            await self.service.run()
        finally:
            if ringing is not None:
                ringing.cancel()
                await asyncio.gather(ringing, return_exceptions=True)

    async def stop(self) -> None:
        await self.service.stop()

    async def open_input(self, pane_id: str, report: Callable[[str, bool], None], family: str) -> tuple[Typing | None, str]:
        """Input mode's session, its keys through JSON as the WebSocket carries them."""
        try:
            opening = CALLS["input"].take(json.loads(json.dumps(CALLS["input"].put({"pane": pane_id, "family": family}))))
        except Asked as exc:
            return None, str(exc)
        session, problem = await self.service.open_input(opening["pane"], report, opening["family"])
        return (KeysAsJson(session) if session is not None else None), problem


class KeysAsJson:
    """Input mode's session in this process, each key written and read as the WebSocket's message (calls.py ``KEY``)."""

    def __init__(self, session: Typing) -> None:
        self._session = session

    @property
    def pane_id(self) -> str:
        return self._session.pane_id

    def send(self, stroke: KeyStroke) -> None:
        try:
            key = KEY.take(json.loads(json.dumps(KEY.put(stroke))))
        except Asked as exc:
            raise ValueError(str(exc)) from None
        self._session.send(key)

    def close(self) -> None:
        self._session.close()

    async def wait_sent(self) -> None:
        await self._session.wait_sent()


@contextlib.asynccontextmanager
async def errand(service: Service) -> AsyncIterator[InProcess]:
    """``service`` run in this process for one errand of the command line, asked by the calls a resident service answers, then ended.

    For what no resident service can do: ``status`` where none watches
    that view, ``send --host`` to a host none watches.  Its transport is a
    look's (``looking``: no ringer, and ``rows`` and ``answer_and_report``
    wait for its first look); the service runs on this loop, and each call
    is asked from a thread and served on it (``asked``), as over HTTP.
    However the errand ends, the service is stopped before this returns.
    """
    transport = InProcess(service, looking=True)
    running = asyncio.create_task(transport.run(), name="the service for one errand")
    await asyncio.sleep(0)  # its loop is the service's from here: a call is served there, as over HTTP
    try:
        yield transport
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await transport.stop()
