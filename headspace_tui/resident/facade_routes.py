"""The facade's calls as HTTP routes: what the terminal UI asks the resident service (client: facade_client.py).

Every facade method a front end calls is a route here, its arguments and
answer the facade's own data as JSON (service/wire.py), so that a client
holds the same ``Agent``, ``Report`` and ``Explanation`` values an
in-process front end does, and every answer goes through the service's one
answerer, policy and guard.  Questions that take an agent are POSTs (the
agent the user saw travels in the body); none of them changes anything
unless its name says so (answers, snoozes, focus, starting and stopping).

The routes (all JSON; a ``ServiceError`` of the facade is HTTP 409 with its
line in ``error``, shown to the user as an in-process one is):

* ``GET /v1/state[?settle=S]``: every agent, the hosts' problem, the snoozes
  and the answers on their way: what a client draws its first frame from.
* ``GET /v1/events?form=facade``: the stream a client keeps current by (see
  ``FacadeStream``): the facade's events, the previewed pane's screen, the
  answers' reports (each with the client that asked), the snoozes.
* ``POST /v1/focus``, ``GET /v1/screen``, ``GET /v1/history``: the preview
  (each client its own pane: the newest focus is read at the preview's
  pace, every client's pane has its captures told, and a client's ends
  with its stream).
* ``POST /v1/why``, ``POST /v1/timeline``, ``GET /v1/waited-today``, ``GET /v1/pending``.
* ``POST /v1/answers``, ``POST /v1/batch``, ``POST /v1/batch/approve``.
* ``POST /v1/snoozes``, ``POST /v1/snoozes/delete``.
* ``GET /v1/input`` (a WebSocket): input mode's session to one pane.
* ``POST /v1/jump``, ``POST /v1/agents/start|stop|restart|close``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import WSMsgType, web

from ..model import Agent, Observation
from ..service.facade import Intent, KeyStroke, PaneCaptured, PendingCall, Report, Service, ServiceError
from ..service.wire import WireError, decode, encode

log = logging.getLogger(__name__)

HISTORY_MAX = 100_000  # lines of history one request may ask for
MAX_KEY_MESSAGE = 16 * 1024  # bytes of one input mode message (a paste is cut into messages by the client)
HERE = ("TMUX", "TMUX_PANE", "HEADSPACE_CLIENT")  # what of a client's environment says where the user sits
PANE = re.compile(r"%\d{1,9}(@[A-Za-z0-9._-]{1,64})?")


class Asked(Exception):
    """A request that is not what the route takes: HTTP 400 with this line."""


def _pane(value: object) -> str:
    if not isinstance(value, str) or not PANE.fullmatch(value):
        raise Asked("pane: a pane id such as %3 (or %3@host)")
    return value


def _of(value: object, cls: type, what: str) -> Any:
    try:
        decoded = decode(value)
    except WireError as exc:
        raise Asked(f"{what}: {exc}") from None
    if not isinstance(decoded, cls):
        raise Asked(f"{what}: not a {cls.__name__}")
    return decoded


def _client(value: object) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= 64:
        raise Asked("client: who asks (a short string)")
    return value


def _here(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        raise Asked("here: the client's TMUX, TMUX_PANE and HEADSPACE_CLIENT")
    return {key: str(value[key])[:4096] for key in HERE if isinstance(value.get(key), str)}


def _own(service: Service, agent: Agent) -> Agent | None:
    """The service's own ``Agent`` in that pane (the one its store holds), when it is the same agent.

    An in-process front end hands the answerer the store's very object, and
    the answerer's guard ("waiting to see what the last key did") knows an
    observation by its identity: a copy decoded from a client must not pass
    where the original would be held.
    """
    own = service.agent(agent.pane_id)
    return own if own is not None and own.key == agent.key else None


class FacadeStream:
    """What one client's stream carries, built once per change for every such client (``Resident`` holds the queues)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.asked_by: dict[str, str] = {}  # pane -> the client whose answer to it is on its way
        self.focuses: dict[str, str | None] = {}  # client -> the pane it previews (the newest last)
        self._snoozes: dict[str, Any] = {}

    def focus(self, client: str, pane: str | None) -> None:
        """``client`` previews ``pane``: read at the preview's pace (the newest focus wins), and its captures told."""
        self.focuses.pop(client, None)
        self.focuses[client] = pane
        self._apply()

    def gone(self, client: str) -> None:
        """A client's stream ended: its preview ends with it (a closed popup leaves no pane read at the preview's pace)."""
        if self.focuses.pop(client, None) is not None:
            self._apply()
        for pane in [p for p, c in self.asked_by.items() if c == client]:
            del self.asked_by[pane]

    def _apply(self) -> None:
        panes = [pane for pane in self.focuses.values() if pane is not None]
        self.service.focus(panes[-1] if panes else None)
        self.service.show(frozenset(panes))

    def event(self, event: Any) -> list[dict[str, Any]]:
        """The items one facade event makes: the event itself, a screen for a capture, the snoozes when they changed."""
        items: list[dict[str, Any]] = self.snoozes_if_changed()  # first: a snooze the event ended is gone when its row is drawn
        if isinstance(event, PaneCaptured) and (screen := self.service.screen(event.pane_id)) is not None:
            items.append({"kind": "screen", "pane": event.pane_id, "ansi": screen.ansi, "width": screen.width, "height": screen.height})
        try:
            items.append({"kind": "event", "event": encode(event)})
        except WireError:
            pass  # an event a client does not follow (an answer's audit record): the journal's, not the screen's
        return items

    def snoozes_if_changed(self) -> list[dict[str, Any]]:
        now = self.service.snoozes()
        if now == self._snoozes:
            return []
        self._snoozes = now
        return [{"kind": "snoozes", "snoozes": encode(now)}]

    def report(self, report: Report) -> dict[str, Any]:
        by = self.asked_by.get(report.pane_id, "")
        if report.final:
            self.asked_by.pop(report.pane_id, None)
        return {"kind": "report", "by": by, "report": encode(report)}


class FacadeRoutes:
    """The routes above, for one service; ``changed`` is called after anything that may have changed the snoozes."""

    def __init__(self, service: Service, stream: FacadeStream, settle: Callable[[float], Awaitable[None]], changed: Callable[[], None]) -> None:
        self.service = service
        self.stream = stream
        self.settle = settle
        self.changed = changed

    def add(self, app: web.Application) -> None:
        get, post = app.router.add_get, app.router.add_post
        get("/v1/state", self._wrap(self.state))
        post("/v1/focus", self._wrap(self.focus))
        get("/v1/screen", self._wrap(self.screen))
        get("/v1/history", self._wrap(self.history))
        post("/v1/why", self._wrap(self.why))
        post("/v1/timeline", self._wrap(self.timeline))
        get("/v1/waited-today", self._wrap(self.waited_today))
        get("/v1/pending", self._wrap(self.pending))
        post("/v1/answers", self._wrap(self.answer))
        post("/v1/batch", self._wrap(self.batch))
        post("/v1/batch/approve", self._wrap(self.approve_batch))
        post("/v1/snoozes", self._wrap(self.snooze))
        post("/v1/snoozes/delete", self._wrap(self.unsnooze))
        post("/v1/jump", self._wrap(self.jump))
        post("/v1/agents/start", self._wrap(self.start_agent))
        post("/v1/agents/stop", self._wrap(self.stop_agent))
        post("/v1/agents/restart", self._wrap(self.restart_agent))
        post("/v1/agents/close", self._wrap(self.close_pane))
        get("/v1/input", self.input)

    @staticmethod
    def _wrap(route: Callable[[web.Request, dict[str, Any]], Awaitable[Any]]) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            body: dict[str, Any] = {}
            if request.method == "POST":
                try:
                    body = await request.json()
                except ValueError:
                    return web.json_response({"error": "the request is not JSON"}, status=400)
                if not isinstance(body, dict):
                    return web.json_response({"error": "the request is not a JSON object"}, status=400)
            try:
                return web.json_response(await route(request, body))
            except Asked as exc:
                return web.json_response({"error": str(exc)}, status=400)
            except ServiceError as exc:
                return web.json_response({"error": str(exc)}, status=409)
            except Exception as exc:  # the service goes on; the client gets one line, the log the traceback
                log.exception("%s %s failed", request.method, request.path)
                return web.json_response({"error": f"the service failed on it ({type(exc).__name__}); see its log"}, status=500)

        return handler

    # -- what a client shows ---------------------------------------------------------------
    async def state(self, request: web.Request, body: dict[str, Any]) -> Any:
        try:
            settle = max(0.0, float(request.query.get("settle", "0")))
        except ValueError:
            raise Asked("settle: a number of seconds") from None
        if settle:
            await self.settle(settle)
        return {
            "agents": encode(self.service.agents()),
            "problem": encode(self.service.problem_now()),
            "snoozes": encode(self.service.snoozes()),
            "pending": self.service.answers_pending(),
            "focused": self.service.focused,
        }

    async def focus(self, request: web.Request, body: dict[str, Any]) -> Any:
        pane = body.get("pane")
        self.stream.focus(_client(body.get("client")), None if pane is None else _pane(pane))
        return {}

    async def screen(self, request: web.Request, body: dict[str, Any]) -> Any:
        pane = _pane(request.query.get("pane"))
        screen = self.service.screen(pane)
        shown = None if screen is None else {"ansi": screen.ansi, "width": screen.width, "height": screen.height}
        return {"screen": shown, "width": self.service.width(pane)}

    async def history(self, request: web.Request, body: dict[str, Any]) -> Any:
        pane = _pane(request.query.get("pane"))
        lines = request.query.get("lines", "")
        if not lines.isdigit() or int(lines) > HISTORY_MAX:
            raise Asked(f"lines: a number up to {HISTORY_MAX}")
        return {"ansi": await self.service.history(pane, int(lines))}

    async def why(self, request: web.Request, body: dict[str, Any]) -> Any:
        agent = _of(body.get("agent"), Agent, "agent")
        now = body.get("now")
        if not isinstance(now, (int, float)):
            raise Asked("now: a time")
        return {"why": encode(self.service.why(_own(self.service, agent) or agent, float(now)))}

    async def timeline(self, request: web.Request, body: dict[str, Any]) -> Any:
        agent = _of(body.get("agent"), Agent, "agent")
        return {"events": encode(self.service.timeline(_own(self.service, agent) or agent))}

    async def waited_today(self, request: web.Request, body: dict[str, Any]) -> Any:
        agents = {agent.pane_id: agent for agent in self.service.agents()}
        return {"seconds": self.service.waited_today(agents, time.time())}

    async def pending(self, request: web.Request, body: dict[str, Any]) -> Any:
        return {"panes": self.service.answers_pending()}

    # -- answering -------------------------------------------------------------------------
    async def answer(self, request: web.Request, body: dict[str, Any]) -> Any:
        asked = _of(body.get("agent"), Agent, "agent")
        intent = _of(body.get("intent"), Intent, "intent")
        seen = body.get("seen")
        observation = None if seen is None else _of(seen, Observation, "seen")
        client = _client(body.get("client"))
        agent = _own(self.service, asked)
        if agent is None:
            return {"refusal": "that agent is no longer there"}
        # The client answers what it drew: that appearance of the prompt, and no later one with the same words.
        stale = self.service.stale(agent, (observation or asked.observation).request)
        if stale:
            return {"refusal": stale}
        if observation is not None and observation == agent.observation:
            observation = agent.observation  # the very one on display, as an in-process front end hands it
        before = self.stream.asked_by.get(agent.pane_id)
        self.stream.asked_by[agent.pane_id] = client  # its reports go to this client (the first may come before ``answer`` returns)
        refusal = self.service.answer(agent, intent, observation)
        if refusal:  # nothing went: the reports still on their way are the earlier asker's
            if before is None:
                self.stream.asked_by.pop(agent.pane_id, None)
            else:
                self.stream.asked_by[agent.pane_id] = before
        log.info("answer %s to %s from a client: %s", intent.kind.value, agent.pane_id, refusal or "on its way")
        return {"refusal": refusal}

    async def batch(self, request: web.Request, body: dict[str, Any]) -> Any:
        asked = _of(body.get("agent"), Agent, "agent")
        agent = _own(self.service, asked)
        if agent is None:
            return {"pairs": [], "reason": "that agent is no longer there"}
        pairs, reason = self.service.batch(agent)
        return {"pairs": encode(pairs), "reason": reason}

    async def approve_batch(self, request: web.Request, body: dict[str, Any]) -> Any:
        pairs = _of(body.get("pairs"), list, "pairs")
        if not all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], Agent) and isinstance(p[1], PendingCall) for p in pairs):
            raise Asked("pairs: (agent, request) pairs")
        client = _client(body.get("client"))
        own = [  # one gone since, or asking anew since the list was drawn, is left out
            (agent, call)
            for asked, call in pairs
            if (agent := _own(self.service, asked)) is not None and not self.service.stale(agent, asked.observation.request)
        ]
        for agent, _ in own:
            self.stream.asked_by.setdefault(agent.pane_id, client)
        return {"line": self.service.approve_batch(own)}

    # -- snoozes ---------------------------------------------------------------------------
    async def snooze(self, request: web.Request, body: dict[str, Any]) -> Any:
        until = body.get("until")
        if not isinstance(until, (int, float)):
            raise Asked("until: a time")
        asked = _of(body.get("agent"), Agent, "agent")
        snooze = self.service.snooze(_own(self.service, asked) or asked, float(until))
        self.changed()
        return {"snooze": encode(snooze)}

    async def unsnooze(self, request: web.Request, body: dict[str, Any]) -> Any:
        asked = _of(body.get("agent"), Agent, "agent")
        was = self.service.unsnooze(_own(self.service, asked) or asked)
        self.changed()
        return {"was": was}

    def _agent(self, body: dict[str, Any]) -> Agent:
        """The service's own agent for the one asked about; ServiceError when it is gone."""
        asked = _of(body.get("agent"), Agent, "agent")
        agent = _own(self.service, asked)
        if agent is None:
            raise ServiceError(f"{asked.target}: that agent is no longer there")
        return agent

    # -- jump, start, stop -------------------------------------------------------------------
    async def jump(self, request: web.Request, body: dict[str, Any]) -> Any:
        agent, here = _of(body.get("agent"), Agent, "agent"), _here(body.get("here"))
        jump = await asyncio.to_thread(self.service.jump, agent, here)
        return {"end": jump.end, "exit_with": jump.exit_with, "notice": jump.notice}

    async def start_agent(self, request: web.Request, body: dict[str, Any]) -> Any:
        folder, branch, near = body.get("folder"), body.get("branch", ""), body.get("near")
        if not isinstance(folder, str) or not folder.startswith("/") or not isinstance(branch, str):
            raise Asked("folder: an absolute path; branch: a name or nothing")
        near_agent = None if near is None else _of(near, Agent, "near")
        return {"pane": await asyncio.to_thread(self.service.start_agent, folder, branch, near_agent, _here(body.get("here")))}

    async def stop_agent(self, request: web.Request, body: dict[str, Any]) -> Any:
        return {"closed": await self.service.stop_agent(self._agent(body))}

    async def restart_agent(self, request: web.Request, body: dict[str, Any]) -> Any:
        return {"pane": await self.service.restart_agent(self._agent(body))}

    async def close_pane(self, request: web.Request, body: dict[str, Any]) -> Any:
        await asyncio.to_thread(self.service.close_pane, self._agent(body))
        return {}

    # -- input mode ----------------------------------------------------------------------------
    async def input(self, request: web.Request) -> web.StreamResponse:
        """Input mode over a WebSocket: ``{"key": KeyStroke}``, ``{"wait": n}`` (answered ``{"sent": n}`` once typed), ``{"close": true}``.

        The service sends ``{"opened": true}`` or ``{"problem": line}`` first,
        then ``{"report": line, "ended": bool}`` for a key that could not go.
        """
        try:
            pane, family = _pane(request.query.get("pane")), request.query.get("family", "")
        except Asked as exc:
            return web.json_response({"error": str(exc)}, status=400)
        ws = web.WebSocketResponse(max_msg_size=MAX_KEY_MESSAGE, heartbeat=None)
        await ws.prepare(request)
        said: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        session, problem = await self.service.open_input(pane, lambda line, ended: said.put_nowait({"report": line, "ended": ended}), family)
        if session is None:
            await ws.send_json({"problem": problem})
            await ws.close()
            return ws
        await ws.send_json({"opened": True})

        async def tell() -> None:
            while True:
                await ws.send_json(await said.get())

        telling = asyncio.create_task(tell())
        try:
            async for message in ws:
                if message.type != WSMsgType.TEXT:
                    break
                try:
                    asked = json.loads(message.data)
                except ValueError:
                    break
                if not isinstance(asked, dict):
                    break
                if "key" in asked:
                    try:
                        session.send(_of(asked["key"], KeyStroke, "key"))
                    except (Asked, ValueError) as exc:
                        said.put_nowait({"report": f"{pane}: not sent ({exc})", "ended": False})
                elif "wait" in asked:
                    await session.wait_sent()
                    await ws.send_json({"sent": asked["wait"]})
                elif asked.get("close"):
                    break
        finally:
            session.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.wait_sent(), 5.0)  # the keys already typed still go
            telling.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await telling
            await ws.close()
        return ws
