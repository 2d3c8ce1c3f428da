"""The facade's calls as HTTP routes: what the terminal UI asks the resident service (client: facade_client.py).

Every facade method a front end calls is a route here, its arguments and
answer the facade's own data as JSON (api/codec.py), so that a client
holds the same ``Agent``, ``Report`` and ``Explanation`` values an
in-process front end does, and every answer goes through the service's one
answerer, policy and guard.  Questions that take an agent are POSTs (the
agent the user saw travels in the body); none of them changes anything
unless its name says so (answers, snoozes, focus, starting and stopping).

The routes are calls.py's ``CALLS``, each served by the method of its
name (all JSON; a ``ServiceError`` of the facade is HTTP 409 with its line
in ``error``, shown to the user as an in-process one is; a field that is
not what the call declares is HTTP 400).  ``state`` is what a client draws
its first frame from; the events stream (server.py, ``FacadeStream`` here)
keeps it current: the facade's events, the previewed pane's screen, the
answers' reports (each with the client that asked), the snoozes.  Each
client previews its own pane (``focus``: the newest is read at the
preview's pace, every client's pane has its captures told, and a client's
ends with its stream).  ``input`` is a WebSocket: input mode's session.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..api.calls import CALLS, KEY, Asked, Call
from ..api.codec import WireError, encode
from ..api.facade import Intent, PaneCaptured, PendingCall, Report, ServiceError
from ..api.own_calls import OWN
from ..api.rows import agent_row, host_problems
from ..model import Agent, Observation
from ..notifications.snooze import snooze_words
from ..service.answer_wait import AnswerWait, answer_request
from ..service.facade import Service

if TYPE_CHECKING:
    from aiohttp import web  # imported where routes are served over HTTP: a look in the command's process (status) never loads it

log = logging.getLogger(__name__)

MAX_KEY_MESSAGE = 16 * 1024  # bytes of one input mode message (a paste is cut into messages by the client)


# The service's own calls (own_calls.py) these routes answer: the same reply over HTTP and from a service in
# the asker's own process (``headspace status`` with no service runs one for its look: transport.py ``InProcess``).
SERVED_OWN = ("rows", "answer_and_report")
SETTLE_MAX = 30.0  # seconds a request may wait for the first look
FIRST_LOOK_POLL = 0.05  # seconds between looks at whether a service in this process has finished its first look


def first_look_whole(service: Service) -> bool:
    """Whether every host has been looked at once (none still says "starting")."""
    return all(problem != "starting" for _, problem in service.hosts())


async def settle_here(service: Service, seconds: float) -> None:
    """Wait up to ``seconds`` (at most SETTLE_MAX) for the first look of a service in this very process (the resident one is told by its events)."""
    deadline = asyncio.get_running_loop().time() + min(SETTLE_MAX, seconds)
    while not first_look_whole(service) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(FIRST_LOOK_POLL)


def send_asked(**fields: Any) -> tuple[str, Intent, str | None]:
    """``answer_and_report``'s fields, as its declared kinds took them, as (pane, intent, expected request): Asked, in one line, when they are not one answer."""
    asked = answer_request({**fields, "option": fields.get("option") or "", "text": fields.get("text") or ""}, pane_key="pane_id")
    if isinstance(asked, str):
        raise Asked(asked)
    return asked


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
    """The routes above, for one service; ``changed`` is called after anything that may have changed the snoozes.

    Each call of ``CALLS`` (calls.py) is served by the method of its name,
    handed the call's fields checked and decoded; it answers a dict of the
    call's reply (or an awaitable of one).  ``settle``: waits for the first
    look (None: a service in the asker's own process, which draws its first
    frame at once).
    """

    def __init__(
        self,
        service: Service,
        stream: FacadeStream,
        settle: Callable[[float], Awaitable[None]] | None,
        changed: Callable[[], None],
        *,
        settled: Callable[[], bool] = lambda: False,
        answers: AnswerWait | None = None,
    ) -> None:
        self.service = service
        self._answers = answers  # the answers asked by pane (``send``), each waiting for its final report: the resident's, shared with its page
        self.stream = stream
        self.settle = settle
        self.settled = settled
        self.changed = changed

    def add(self, app: web.Application) -> None:
        """Every call's route (the events stream is the server's own: server.py serves it at its declared path), and the own calls served here."""
        for call in (*CALLS.values(), *(OWN[name] for name in SERVED_OWN)):
            if call.method == "WS":
                app.router.add_get(call.path, getattr(self, call.name))
            elif call.method != "STREAM":
                app.router.add_route(call.verb, call.path, self._route(call))

    def _route(self, call: Call) -> Callable[[web.Request], Awaitable[web.Response]]:
        from aiohttp import web  # the HTTP server's: a look in the command's process (status) serves calls without it

        async def handler(request: web.Request) -> web.Response:
            sent: Any = dict(request.query)
            if call.verb == "POST":
                try:
                    sent = await request.json()
                except ValueError:
                    return web.json_response({"error": "the request is not JSON"}, status=400)
                if not isinstance(sent, dict):
                    return web.json_response({"error": "the request is not a JSON object"}, status=400)
            try:
                return web.json_response(await self.serve(call, sent))
            except Asked as exc:
                return web.json_response({"error": str(exc)}, status=400)
            except ServiceError as exc:
                return web.json_response({"error": str(exc)}, status=409)
            except Exception as exc:  # the service goes on; the client gets one line, the log the traceback
                log.exception("%s %s failed", request.method, request.path)
                return web.json_response({"error": f"the service failed on it ({type(exc).__name__}); see its log"}, status=500)

        return handler

    async def serve(self, call: Call, sent: dict[str, Any]) -> Any:
        """``call`` with the fields ``sent``, on the service's loop: what runs tmux or git, off it."""
        if call.blocking:
            return await asyncio.to_thread(self.answer_now, call, sent)
        reply = self.answer_now(call, sent)
        return await reply if inspect.isawaitable(reply) else reply

    def answer_now(self, call: Call, sent: dict[str, Any]) -> Any:
        """``call``'s handler on the fields ``sent`` (Asked when one is wrong): its reply, or an awaitable of it for one that waits."""
        return getattr(self, call.name)(**call.take(sent))

    # -- what a client shows ---------------------------------------------------------------
    def state(self, settle: float) -> Any:
        if settle > 0 and self.settle is not None and not self.settled():
            return self._state_settled(settle)
        return self._state()

    async def _state_settled(self, settle: float) -> Any:
        assert self.settle is not None
        await self.settle(settle)
        return self._state()

    def _state(self) -> dict[str, Any]:
        return {
            "agents": encode(self.service.agents()),
            "problem": encode(self.service.problem_now()),
            "snoozes": encode(self.service.snoozes()),
            "pending": self.service.answers_pending(),
            "focused": self.service.focused,
        }

    def rows(self, settle: float) -> Any:
        """Every agent as ``status`` prints it (api/rows.py) and one line per host with a problem, once the first look is whole (or ``settle`` s passed)."""
        if settle > 0 and self.settle is not None and not self.settled():
            return self._rows_settled(settle)
        return self._rows()

    async def _rows_settled(self, settle: float) -> Any:
        assert self.settle is not None
        await self.settle(settle)
        return self._rows()

    def _rows(self) -> dict[str, Any]:
        now = time.time()
        # A host never reached is its problem line, not a row: the table's placeholder (``AgentStore.offline``) has no pane to print.
        agents = [agent_row(agent, now, snooze_words(agent, self.service.snooze_of(agent))) for agent in self.service.agents() if not agent.placeholder]
        return {"agents": agents, "problems": host_problems(self.service.hosts())}

    def focus(self, pane: str | None, client: str) -> Any:
        self.stream.focus(client, pane)
        return {}

    def here(self) -> Any:
        self.service.here()
        return {}

    def screen(self, pane: str) -> Any:
        screen = self.service.screen(pane)
        shown = None if screen is None else {"ansi": screen.ansi, "width": screen.width, "height": screen.height}
        return {"screen": shown, "width": self.service.width(pane)}

    async def history(self, pane: str, lines: int) -> Any:
        return {"ansi": await self.service.history(pane, lines)}

    async def changes(self, pane: str, scope: str) -> Any:
        return {"diff": encode(await self.service.changes(pane, scope))}

    def why(self, agent: Agent, now: float) -> Any:
        return {"why": encode(self.service.why(self.service.now(agent) or agent, now))}

    def timeline(self, agent: Agent) -> Any:
        return {"events": encode(self.service.timeline(self.service.now(agent) or agent))}

    def waited_today(self, now: float) -> Any:
        agents = {agent.pane_id: agent for agent in self.service.agents()}
        return {"seconds": self.service.waited_today(agents, now)}

    async def away(self, since: float) -> Any:
        return {"agents": await self.service.away(since)}

    def spent(self, now: float, days: int) -> Any:
        return {"spent": encode(self.service.spent(now, days))}

    def pending(self) -> Any:
        return {"panes": self.service.answers_pending()}

    # -- answering -------------------------------------------------------------------------
    def answer(self, agent: Agent, intent: Intent, seen: Observation | None, client: str) -> Any:
        asked, observation = agent, seen
        own = self.service.now(asked)
        if own is None:
            return {"refusal": "that agent is no longer there"}
        # The client answers what it drew: that appearance of the prompt, and no later one with the same words.
        stale = self.service.stale(own, (observation or asked.observation).request)
        if stale:
            return {"refusal": stale}
        before = self.stream.asked_by.get(own.pane_id)
        self.stream.asked_by[own.pane_id] = client  # its reports go to this client (the first may come before ``answer`` returns)
        refusal = self.service.answer(own, intent, observation)
        if refusal:  # nothing went: the reports still on their way are the earlier asker's
            if before is None:
                self.stream.asked_by.pop(own.pane_id, None)
            else:
                self.stream.asked_by[own.pane_id] = before
        log.info("answer %s to %s from a client: %s", intent.kind.value, own.pane_id, refusal or "on its way")
        return {"refusal": refusal}

    def batch(self, agent: Agent) -> Any:
        own = self.service.now(agent)
        return {"batch": encode(([], "that agent is no longer there") if own is None else self.service.batch(own))}

    def approve_batch(self, pairs: list[tuple[Agent, PendingCall]], client: str) -> Any:
        own = [  # one gone since, or asking anew since the list was drawn, is left out
            (agent, call) for asked, call in pairs if (agent := self.service.now(asked)) is not None and not self.service.stale(agent, asked.observation.request)
        ]
        for agent, _ in own:
            self.stream.asked_by.setdefault(agent.pane_id, client)
        return {"line": self.service.approve_batch(own)}

    async def answer_and_report(self, pane_id: str, intent: str, option: str | None, text: str | None, expect: str | None) -> Any:
        """``send``'s answer to a pane of any watched host, once the first look is whole, and its final report (a refusal: ServiceError, its line)."""
        pane, kind, expected = send_asked(pane_id=pane_id, intent=intent, option=option, text=text, expect=expect)
        if self.settle is not None:
            await self.settle(SETTLE_MAX)  # a service started for this answer knows its panes first
        if self._answers is None:  # made when first asked: a front end in the service's process never asks it
            self._answers = AnswerWait(self.service)
        reply = await self._answers.answer(pane, kind, expected)
        if reply.status != 200:
            raise ServiceError(reply.detail)
        log.info("answer %s to %s (%s): %s", kind.kind.value, pane, reply.target, reply.detail)
        return {"target": reply.target, "delivered": reply.delivered, "detail": reply.detail}

    # -- snoozes ---------------------------------------------------------------------------
    def snooze(self, agent: Agent, until: float) -> Any:
        snooze = self.service.snooze(self.service.now(agent) or agent, until)
        self.changed()
        return {"snooze": encode(snooze)}

    def unsnooze(self, agent: Agent) -> Any:
        was = self.service.unsnooze(self.service.now(agent) or agent)
        self.changed()
        return {"was": was}

    def snoozes_ended(self, now: float) -> Any:
        """The snoozes that ran out by ``now`` (the asker's clock) end in the service, for every front end: their keys."""
        keys = self.service.snoozes_ended(now)
        if keys:
            self.changed()
        return {"keys": keys}

    def _agent(self, asked: Agent) -> Agent:
        """The service's own agent for the one asked about; ServiceError when it is gone."""
        agent = self.service.now(asked)
        if agent is None:
            raise ServiceError(f"{asked.target}: that agent is no longer there")
        return agent

    # -- jump, start, stop -------------------------------------------------------------------
    def jump(self, agent: Agent, here: dict[str, str]) -> Any:
        return {"jump": encode(self.service.jump(agent, here))}

    def start_agent(self, folder: str, branch: str, near: Agent | None, here: dict[str, str], args: tuple[str, ...], session: str) -> Any:
        started = self.service.start_agent(folder, branch, near, here, args, session)
        return {"pane": started.pane_id, "target": started.target, "cwd": started.cwd, "worktree": started.worktree}

    async def stop_agent(self, agent: Agent) -> Any:
        return {"closed": await self.service.stop_agent(self._agent(agent))}

    async def restart_agent(self, agent: Agent) -> Any:
        return {"pane": await self.service.restart_agent(self._agent(agent))}

    def close_pane(self, agent: Agent) -> Any:
        self.service.close_pane(agent)  # which checks, by the agent's key, that its pane still runs that very agent
        return {}

    # -- input mode ----------------------------------------------------------------------------
    async def input(self, request: web.Request) -> web.StreamResponse:
        """Input mode over a WebSocket: ``{"key": KeyStroke}``, ``{"wait": n}`` (answered ``{"sent": n}`` once typed), ``{"close": true}``.

        The service sends ``{"opened": true}`` or ``{"problem": line}`` first,
        then ``{"report": line, "ended": bool}`` for a key that could not go.
        """
        from aiohttp import WSMsgType, web

        try:
            opening = CALLS["input"].take(dict(request.query))
        except Asked as exc:
            return web.json_response({"error": str(exc)}, status=400)
        ws = web.WebSocketResponse(max_msg_size=MAX_KEY_MESSAGE, heartbeat=None)
        await ws.prepare(request)
        said: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        pane = opening["pane"]
        session, problem = await self.service.open_input(pane, lambda line, ended: said.put_nowait({"report": line, "ended": ended}), opening["family"])
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
                        session.send(KEY.take(asked["key"]))
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
