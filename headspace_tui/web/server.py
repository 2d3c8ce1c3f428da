"""The web page's server: the resident service's agents, live, for a browser (a phone first), answering through the facade.

Why aiohttp: the resident service already serves its Unix socket with it
(resident/server.py), so the page is one more site of the same loop, with
the service's own objects: one monitor for the terminal, the popup and the
phone, and no second stack to keep.  Server-Sent Events carry the changes
(a browser reconnects them by itself); answers are JSON POSTs.

The routes, each declared in api/page_calls.py with its fields (every one needs
the token; guard.py says how it is checked):

* ``GET /``: the page (``/?token=…`` sets the cookie and redirects to ``/``);
* ``GET /assets/{app.js,app.css,icon.svg}``: its script, style and icon, shipped in the wheel;
* ``GET /manifest.webmanifest`` and ``GET /sw.js``: what makes the page an app
  on the home screen, and its service worker (the page's own files offline,
  the pushes; assets/sw.js says what it keeps: never an agent);
* ``GET /api/agents``: every agent as the page lists it (views.py), the hosts'
  problems, and whether the page may answer;
* ``GET /api/screen?pane=%3@box``: that agent's screen as coloured runs;
* ``GET /api/events?client=ID``: Server-Sent Events (``hello`` with the
  service's epoch first, then ``agent``, ``removed``, ``hosts``, ``pushed``
  (a push's result is in), and ``screen`` for the pane that client looks at); each change carries ``rev``, and so do
  the replies above, so a page keeps the newer of a reply and an event;
* ``GET /api/ruled``: what the rules answered for you in the last day,
  each with its rule's state (answering, paused, revoked, gone);
* ``POST /api/rules``: ``{"action": "pause"|"resume"|"revoke", "rule", "host"}``;
* ``GET /api/push?endpoint=…``, ``POST /api/push/subscribe`` and
  ``POST /api/push/unsubscribe``: Web Push (push.py): whether this browser
  is subscribed, the last pushes' results, a subscription kept or dropped;
* ``POST /api/focus``: ``{"client": ID, "pane": "%3"|null}``: the pane this
  page looks at (read at the preview's pace, its screens pushed);
* ``POST /api/answer``: ``{"pane", "intent", "option", "text", "expect"}``:
  one answer through the facade's answerer, policy and guard, only if the
  prompt on display is still the appearance ``expect`` names (the row's
  ``request``: the same words asked again are another request); the audit
  says "via web" and the client's address.  Its reply says whether it was
  delivered and whether the agent is left to the others (``move_on``: the
  page then opens the next agent that waits, as the terminal's inbox does).

The page reaches the service only through its declared calls (``Served``:
the facade and what the service's own servers ask, api/facade.py) and
AnswerWait, as the terminal UI does; its routes are built from
their declarations, which check each field before a handler sees it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any
from urllib.parse import quote

from aiohttp import web

from ..api.call import Asked, Call
from ..api.facade import Intent, IntentKind, Served
from ..api.page_calls import PAGE
from ..api.rows import host_problems
from ..events import AgentChanged, AgentRemoved, Event, PaneCaptured, ProblemChanged
from ..model import Agent, PaneAddress
from ..notifications.decide import Notification
from ..notifications.snooze import UNTIL_IT_CHANGES, snooze_words
from ..service.answer_wait import AnswerWait, answer_request
from ..shared.fanout import Fanout, sse
from .guard import COOKIE, RateLimit, forwarded_for, given_token, new_token, same_origin, seen_as, token_matches
from .push import Pusher, Subscriber, message, whole
from .views import agent_view, quick, screen_view

log = logging.getLogger(__name__)

MAX_REQUEST = 16 * 1024  # bytes: no request of the page's is bigger
SIGN_IN = "/signin"  # where the sign-in page's form posts the address or token (the guard's, as ``/?token=`` is)
EVENTS_QUEUED = 500  # changes a page may fall behind by before it is cut off (it reconnects and reloads)
RULED_SPAN = 86400.0  # seconds: the rules' answers the page lists (the last day)
AWAY_SPAN = 7 * 86400.0  # seconds: how far back "while you were away" looks at most
WRITE_TIMEOUT = 5.0  # seconds one write to a page may take
KEEPALIVE = 15.0  # seconds between two comments on a quiet stream (a proxy or a phone's network drops a silent one)
SCREEN_PACE = 0.1  # seconds between two screens pushed to one page (a flood of output is not a flood of JSON)
CONTENT_TYPES = {"app.js": "text/javascript", "app.css": "text/css", "icon.svg": "image/svg+xml"}  # the page's own files (api/page_calls.py ASSETS)
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; manifest-src 'self'; worker-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # the first URL carries the token
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class WebOptions:
    """How the page is served: where, with which token, answering or not, over TLS or not."""

    host: str = "127.0.0.1"
    port: int = 8765
    token: str = ""
    read_only: bool = False
    tls: tuple[str, str] | None = None  # (certificate file, key file)

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    def link(self, agent: str) -> str:
        """The page of ``agent``, without the token (a notification's link: the phone that opened the page once has the cookie)."""
        where = socket.gethostname() if self.host in ("0.0.0.0", "::") else self.host
        if ":" in where:
            where = f"[{where}]"
        return f"{self.scheme}://{where}:{self.port}/#agent={quote(agent, safe='@')}"

    def url(self, host: str | None = None, agent: str = "") -> str:
        """The page's address with its token (what ``headspace web`` prints); ``agent``: opened at that agent."""
        where = host or self.host
        if ":" in where and not where.startswith("["):
            where = f"[{where}]"
        fragment = f"#agent={quote(agent, safe='@')}" if agent else ""
        return f"{self.scheme}://{where}:{self.port}/?token={self.token}{fragment}"


class WebPage:
    """The page's routes and its streams, for one service; made once, served by ``WebSite`` while the web is on."""

    def __init__(self, service: Served, answers: AnswerWait, focus: Callable[[str, str | None], None], gone: Callable[[str], None], pusher: Pusher | None = None) -> None:
        self.service = service
        self.pusher = pusher  # Web Push to the phones that asked (push.py); None: not offered
        if pusher is not None:
            pusher.told = self._push_result_in
            pusher.still = self._still
        self.answers = answers
        self.focus = focus  # the service's focus arbitration, shared with the terminal clients (FacadeStream.focus)
        self.gone = gone
        self.options = WebOptions()
        self.limits = RateLimit()
        self._streams = Fanout(EVENTS_QUEUED, "a page")  # each page's stream (events, each encoded once), named by its client id
        self._looking: dict[str, str] = {}  # client -> the pane it looks at
        self._pushed: dict[str, float] = {}  # client -> when its last screen was pushed
        self._later: dict[str, asyncio.TimerHandle] = {}  # client -> its screen held back by the pace, due then
        self._snoozes_told: dict[str, str] = {}  # pane -> the snooze the pages were last told ("" for none)
        # What a page is told is stamped with the count of changes sent before it (``rev``): a reply read
        # before a change, which reaches the page after that change's event, is older and is not drawn.
        # ``epoch`` names this count (a restarted service counts again from 0).
        self.epoch = secrets.token_hex(6)
        self._rev = 0
        self.on_snoozes: Callable[[], None] = self.snoozes_changed  # a snooze changed here: every front end hears it (the service sets it)
        service.subscribe(self._event)

    # -- the application ------------------------------------------------------------------
    def app(self) -> web.Application:
        """The page's routes, each built from its declaration (api/page_calls.py) and answered by the method of its name."""
        app = web.Application(middlewares=[self._guard], client_max_size=MAX_REQUEST)
        for call in PAGE.values():
            app.router.add_route(call.verb, call.path, self._route(call))
        return app

    def _route(self, call: Call) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        """``call``'s route: its fields (a GET's query and path, a POST's JSON body) checked as declared, then its handler."""
        handler = getattr(self, f"_{call.name}")

        async def route(request: web.Request) -> web.StreamResponse:
            if call.writes and self.options.read_only:
                return web.json_response({"error": "this page is read-only (headspace web --read-only): nothing sent or changed"}, status=403)
            sent: dict[str, Any] = dict(request.match_info)
            sent.update(request.query if call.verb == "GET" else (await _json(request) or {}))
            try:
                taken = call.take(sent)
            except Asked as exc:
                return web.json_response({"error": str(exc)}, status=400)
            response: web.StreamResponse = await handler(request, **taken)
            return response

        return route

    def _view(self, agent: Agent, now: float | None = None) -> dict[str, Any]:
        """The agent as the page shows it, with its snooze (the one set every front end shares), stamped with ``rev``."""
        view = agent_view(agent, now, self.service.snooze_of(agent))
        view["rev"] = self._rev
        self._snoozes_told[agent.pane_id] = view["snoozed"]
        return view

    def _sent(self) -> int:
        """One more change goes to the pages: its ``rev`` (a reply read after it carries this one or a later)."""
        self._rev += 1
        return self._rev

    def snoozes_changed(self) -> None:
        """A snooze was put on or taken back (by any front end): the pages redraw each agent whose snooze changed."""
        if not self._streams:
            return
        for agent in self.service.agents():
            if PaneAddress.parse(agent.pane_id).placeholder:
                continue
            if self._snoozes_told.get(agent.pane_id, "") != snooze_words(agent, self.service.snooze_of(agent)):
                self._sent()
                self._streams.put(sse({"type": "agent", "agent": self._view(agent)}))

    async def _snooze(self, request: web.Request, pane: str, minutes: int | None, wake: bool) -> web.Response:
        """``{"pane", "minutes"}``: put the agent's wait off for that long (0: till it changes), or ``{"pane", "wake": true}``."""
        if not wake and minutes is None:
            return web.json_response({"error": 'a snooze is {"pane", "minutes": 0 to 1440 (0: till it changes)} or {"pane", "wake": true}'}, status=400)
        agent = self.service.agent(pane)
        if agent is None:
            return web.json_response({"error": f"{pane}: no agent is watched there"}, status=404)
        if wake:
            self.service.unsnooze(agent)
        elif self.service.snooze(agent, time.time() + minutes * 60 if minutes else UNTIL_IT_CHANGES) is None:
            return web.json_response({"error": f"{agent.target} waits for nothing: there is nothing to snooze", "state": agent.state.value}, status=409)
        log.info("web %s of %s from %s", "wake" if wake else "snooze", pane, self._peer(request))
        self.on_snoozes()
        return web.json_response({"agent": self._view(agent)})

    # -- the rules: what they answered for you, and a way out ------------------------------
    async def _ruled(self, request: web.Request) -> web.Response:
        """The rules' answers of the last day (newest first), each with its rule's state now."""
        answers = self.service.ruled(time.time() - RULED_SPAN)
        return web.json_response({"answers": answers, "read_only": self.options.read_only})

    async def _away(self, request: web.Request, since: float) -> web.Response:
        """What each agent did since ``since`` (when this phone last looked), at most AWAY_SPAN back (the service reads its journal off the loop)."""
        since = max(since, time.time() - AWAY_SPAN)
        return web.json_response({"since": since, "agents": await self.service.away(since)})

    async def _rules(self, request: web.Request, action: str, rule: str, host: str) -> web.Response:
        """``{"action": "pause"|"resume"|"revoke", "rule": ID or "", "host": NAME or ""}``: what the service said."""
        try:
            said = self.service.rules_control(action, rule, host)
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=409)
        log.info("web rules %s %s %s from %s", action, rule or "(all)", host or "(all hosts)", self._peer(request))
        return web.json_response({"said": said})

    @staticmethod
    def _peer(request: web.Request) -> str:
        """Who asks, for the rate limits and the log: the client's address, or through a proxy on this machine the one it forwards for.

        Behind ``tailscale serve`` or a reverse proxy every request comes from
        127.0.0.1: counted as one, ten wrong tokens from anyone would turn
        the owner away too.
        """
        return forwarded_for(request.remote, dict(request.headers)) or request.remote or "?"

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        peer = self._peer(request)
        if self.limits.turned_away(peer) or not self.limits.allow(peer):
            return _plain("too many requests", 429)
        token = self.options.token
        given = request.cookies.get(COOKIE)
        first = request.path == "/" and request.method == "GET" and "token" in request.query
        signing_in = request.path == SIGN_IN and request.method == "POST"  # the sign-in form: the token in the body, kept out of logs of the address
        if first or signing_in:
            sent = request.query.get("token") if first else (await request.post()).get("token")
            if not token_matches(given_token(sent if isinstance(sent, str) else None), token):
                self.limits.wrong_token(peer)
                log.warning("web: a wrong token from %s", peer)
                return _plain("headspace: this link's token is not the page's (run 'headspace web' again for the current one)", 403)
            moved = web.Response(status=303, headers={"Location": "/"})  # the token leaves the address bar (and the history); the fragment stays
            scheme, _ = seen_as(self.options.scheme, request.host, request.remote, dict(request.headers))
            moved.set_cookie(COOKIE, token, httponly=True, samesite="Strict", secure=scheme == "https", path="/")
            _secure(moved)
            return moved
        if not token_matches(given, token):
            # A cookie from before a restart with a new token is not a guess (the page asks again every few seconds):
            # only a token given in the address counts towards turning an address away.
            if request.path == "/" and request.method == "GET":
                # The page itself: a form to paste the printed address into (an app on the home screen may not share the
                # browser's cookies). It posts to SIGN_IN, which the guard takes as ``/?token=…`` (a guess counts as one there too).
                signin = web.Response(body=_asset_bytes("signin.html"), status=401, content_type="text/html", charset="utf-8")
                signin.headers["Content-Security-Policy"] = "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
                _secure(signin)
                return signin
            return _plain("headspace: open the address 'headspace web' printed (it carries the page's token)", 401)
        scheme, host = seen_as(self.options.scheme, request.host, request.remote, dict(request.headers))  # the browser's, through a proxy on this machine
        if request.method != "GET" and not same_origin(request.headers.get("Origin"), host, scheme):
            log.warning("web: a %s from %s without this page's Origin", request.method, peer)
            return _plain("a change must come from the page itself (its Origin)", 403)
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            response = _plain(exc.reason, exc.status)
        _secure(response)
        return response

    # -- the page and its assets ----------------------------------------------------------
    async def _page(self, request: web.Request) -> web.StreamResponse:
        return web.Response(body=_asset_bytes("index.html"), content_type="text/html", charset="utf-8")

    async def _asset(self, request: web.Request, name: str) -> web.StreamResponse:
        return web.Response(body=_asset_bytes(name), content_type=CONTENT_TYPES[name], charset=None if name.endswith(".svg") else "utf-8")

    async def _manifest(self, request: web.Request) -> web.StreamResponse:
        return web.Response(body=_asset_bytes("manifest.webmanifest"), content_type="application/manifest+json", charset="utf-8")

    async def _worker(self, request: web.Request) -> web.StreamResponse:
        return web.Response(body=_asset_bytes("sw.js"), content_type="text/javascript", charset="utf-8")

    # -- Web Push: this browser's subscription, and the pushes ---------------------------
    async def _push(self, request: web.Request, endpoint: str | None) -> web.Response:
        """Whether this page can have pushes (TLS, a key), whether ``endpoint`` (this browser's subscription) is kept, and the last results."""
        if self.pusher is None:
            return web.json_response({"key": "", "problem": "this service does not send pushes", "subscribed": False, "phones": 0, "results": []})
        return web.json_response(self.pusher.state(endpoint or ""))

    async def _subscribe(self, request: web.Request, endpoint: str, p256dh: str, auth: str, browser: str | None) -> web.Response:
        if self.pusher is None:
            return web.json_response({"error": "this service does not send pushes"}, status=409)
        why = self.pusher.subscribe(Subscriber(endpoint, p256dh, auth), browser or "")
        if why:
            log.warning("web push: a subscription from %s refused: %s", self._peer(request), why)
            return web.json_response({"error": why}, status=400)
        log.info("web push: this phone (%s) will be notified", self._peer(request))
        return web.json_response(self.pusher.state(endpoint))

    async def _unsubscribe(self, request: web.Request, endpoint: str) -> web.Response:
        if self.pusher is None:
            return web.json_response({"error": "this service does not send pushes"}, status=409)
        dropped = self.pusher.unsubscribe(endpoint)
        return web.json_response({**self.pusher.state(endpoint), "dropped": dropped})

    def _push_result_in(self) -> None:
        """A push's result is in: the pages that list the pushes read them again."""
        if self._streams:
            self._streams.put(sse({"type": "pushed"}))

    def push(self, note: Notification) -> None:
        """A wait the ringer rang, to the phones that asked (while the page is served): its words, its card, and for a plain permission Approve and Deny.

        Approve and Deny come only with the request the words were read from
        (the alert's), while the agent still shows it, and only where the
        notification shows the whole call (its tool and exact command, as
        the list does): a call cut to fit is opened on the card instead.
        """
        if self.pusher is None or not self.pusher.subscriptions:
            return
        alert = note.alerts[0] if note.alerts else None
        address = alert.address if alert is not None else ""
        agent = self.service.agent(address) if address else None
        body, request = note.body, ""
        if agent is not None and alert is not None and len(note.alerts) == 1 and not alert.blocked and alert.request and agent.observation.request == alert.request:
            view = agent_view(agent, None, self.service.snooze_of(agent))
            call = f"{view['tool']}: {view['detail']}" if view.get("detail") else str(view.get("tool") or "")
            if quick(view) and not self.options.read_only and self.pusher.config.answers and whole(call):
                body, request = call, alert.request
        self.pusher.push(message(note.title, body, address, request=request, answers=bool(request)), wait=alert.request if alert is not None else "")

    def _still(self, pane: str, request: str) -> bool:
        """Whether the agent at ``pane`` still waits on ``request`` (a push held back while a key was just pressed goes only then)."""
        agent = self.service.agent(pane) if pane else None
        return agent is not None and agent.state.needs_you and self.service.snooze_of(agent) is None and (not request or agent.observation.request == request)

    # -- what the page reads ----------------------------------------------------------------
    async def _agents(self, request: web.Request) -> web.Response:
        now = time.time()
        agents = [self._view(agent, now) for agent in self.service.agents() if not PaneAddress.parse(agent.pane_id).placeholder]
        return web.json_response({"epoch": self.epoch, "rev": self._rev, "agents": agents, "problems": host_problems(self.service.hosts()), "read_only": self.options.read_only})

    async def _screen(self, request: web.Request, pane: str) -> web.Response:
        agent = self.service.agent(pane)
        if agent is None:
            return web.json_response({"error": f"{pane}: no agent is watched there"}, status=404)
        screen = self.service.screen(pane)
        return web.json_response({"epoch": self.epoch, "rev": self._rev, "pane": pane, "agent": self._view(agent), "screen": screen_view(screen) if screen else None})

    async def _changes(self, request: web.Request, pane: str, scope: str) -> web.Response:
        """What the agent changed this turn (``scope=turn``) or since its start (``scope=start``): the diff as data (docs/changes.md)."""
        if self.service.agent(pane) is None:
            return web.json_response({"error": f"{pane}: no agent is watched there"}, status=404)
        diff = await self.service.changes(pane, scope)
        return web.json_response({"pane": pane, "scope": scope, "diff": diff.to_dict()})

    async def _events(self, request: web.Request, client: str) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **SECURITY_HEADERS})
        await response.prepare(request)
        queue = self._streams.follow(client)
        try:
            # First, which service this is: a page that knew another forgets all it was told.
            hello = sse({"type": "hello", "epoch": self.epoch})
            await asyncio.wait_for(response.write(b"retry: 1000\n: headspace\n\n" + hello), WRITE_TIMEOUT)
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), KEEPALIVE)
                except TimeoutError:
                    await asyncio.wait_for(response.write(b": still here\n\n"), WRITE_TIMEOUT)
                    continue
                if item is None:
                    break
                await asyncio.wait_for(response.write(item), WRITE_TIMEOUT)
        except (ConnectionError, TimeoutError):
            log.info("web: a page went away or stopped reading")
        finally:
            self._streams.leave(queue)
            if not self._streams.follows(client):
                self._looking.pop(client, None)
                self._pushed.pop(client, None)
                later = self._later.pop(client, None)
                if later is not None:
                    later.cancel()
                self.gone(f"web-{client}")
        return response

    async def _focus(self, request: web.Request, client: str, pane: str | None) -> web.Response:
        if pane is None:
            self._looking.pop(client, None)
        else:
            self._looking[client] = pane
        self.focus(f"web-{client}", pane)
        return web.json_response({"focused": pane})

    # -- answering ----------------------------------------------------------------------------
    async def _answer(self, request: web.Request, pane: str, intent: str, option: str | None, text: str | None, expect: str | None) -> web.Response:
        body = {"pane": pane, "intent": intent, "option": option, "text": text, "expect": expect}
        asked = _answer_request({key: value for key, value in body.items() if value is not None}, f"web {self._peer(request)}")
        if isinstance(asked, str):
            return web.json_response({"error": asked}, status=400)
        address, asked_intent, shown = asked
        if asked_intent.kind is IntentKind.NUDGE and not asked_intent.text.strip():
            asked_intent = replace(asked_intent, text=self.service.config.nudge_text)  # the nudge is the configured text, as the terminal's key sends
        reply = await self.answers.answer(address, asked_intent, shown)
        log.info("web answer %s to %s from %s: %s %s", asked_intent.kind.value, address, self._peer(request), reply.status, reply.detail)
        if reply.status != 200:
            return web.json_response({"error": reply.detail, "state": reply.state}, status=reply.status)
        return web.json_response({"target": reply.target, "delivered": reply.delivered, "detail": reply.detail, "move_on": reply.move_on})

    # -- the streams --------------------------------------------------------------------------
    def _event(self, event: Event) -> None:
        if not self._streams:
            return
        if isinstance(event, PaneCaptured):
            self._screen_pushed(event.pane_id)
            return
        item: dict[str, Any] | None = None
        if isinstance(event, AgentChanged):
            if PaneAddress.parse(event.agent.pane_id).placeholder:
                return
            self._sent()
            item = {"type": "agent", "agent": self._view(event.agent)}
        elif isinstance(event, AgentRemoved):
            self._snoozes_told.pop(event.pane_id, None)
            item = {"type": "removed", "pane": event.pane_id, "rev": self._sent()}
        elif isinstance(event, ProblemChanged):
            item = {"type": "hosts", "problems": host_problems(self.service.hosts())}
        if item is not None:
            self._streams.put(sse(item))

    def _screen_pushed(self, pane: str) -> None:
        """A pane was read again: its screen goes to the pages that look at it, at most every SCREEN_PACE seconds each.

        A screen that comes sooner is sent once the pace allows (the last one
        of a burst is never lost: a page must not keep showing a screen that
        is no longer there).
        """
        now = time.monotonic()
        item: bytes | None = None
        for queue, client in self._streams.items():
            if self._looking.get(client) != pane:
                continue
            wait = SCREEN_PACE - (now - self._pushed.get(client, 0.0))
            if wait > 0:
                if client not in self._later:
                    self._later[client] = asyncio.get_running_loop().call_later(wait, self._push_later, client, pane)
                continue
            if item is None:
                screen = self.service.screen(pane)
                if screen is None:
                    return
                item = sse({"type": "screen", "pane": pane, "rev": self._sent(), "screen": screen_view(screen)})
            self._pushed[client] = now
            self._streams.put_to(queue, item)

    def _push_later(self, client: str, pane: str) -> None:
        self._later.pop(client, None)
        if self._looking.get(client) == pane:
            self._screen_pushed(pane)

    def close_streams(self) -> None:
        """End every page's stream (the web is turned off, or the service ends)."""
        self._streams.end()


class WebSite:
    """The page served on a TCP address, started and stopped with the web (the service keeps running)."""

    def __init__(self, page: WebPage) -> None:
        self.page = page
        self._runner: web.AppRunner | None = None

    @property
    def running(self) -> bool:
        return self._runner is not None

    async def start(self, options: WebOptions) -> None:
        """Serve the page at ``options``' address (stopping a site that served elsewhere first); OSError when the address cannot be had."""
        await self.stop()
        context = None
        if options.tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*options.tls)
        self.page.options = options
        runner = web.AppRunner(self.page.app(), access_log=None, handle_signals=False, handler_cancellation=True, shutdown_timeout=1.0)
        await runner.setup()
        try:
            await web.TCPSite(runner, options.host, options.port, ssl_context=context, reuse_address=True).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        if self.page.pusher is not None and self.page.pusher.token != options.token:
            self.page.pusher.bind(options.token)  # served: the phones subscribed under this token (another token's are dropped)
        log.info("web page served at %s://%s:%d%s", options.scheme, options.host, options.port, " (read-only)" if options.read_only else "")

    async def stop(self) -> None:
        if self._runner is not None:
            self.page.close_streams()
            runner, self._runner = self._runner, None
            await runner.cleanup()


def _asset_bytes(name: str) -> bytes:
    return resources.files("headspace_tui.web").joinpath("assets", name).read_bytes()


def _plain(text: str, status: int) -> web.Response:
    response = web.Response(text=text + "\n", status=status, content_type="text/plain")
    _secure(response)
    return response


def _secure(response: web.StreamResponse) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)


async def _json(request: web.Request) -> dict[str, Any] | None:
    if request.content_type != "application/json":
        return None
    try:
        body = await request.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _answer_request(body: dict[str, Any] | None, via: str) -> tuple[str, Intent, str] | str:
    """An answer's body as (pane, intent, the request the page showed), or what is wrong with it."""
    said = answer_request(body, pane_key="pane", expect_required=True, via=via)
    return said if isinstance(said, str) else (said[0], said[1], said[2] or "")


def web_options(body: object, current: WebOptions | None = None) -> WebOptions | str:
    """``POST /v1/web``'s body (``{"host", "port", "token", "read_only", "tls": [cert, key]}``) as options, or what is wrong with it.

    No token: the one the page has now (the pages open keep working), else a new one.
    """
    if not isinstance(body, dict):
        return "the web's settings are a JSON object"
    host, port, token = body.get("host", "127.0.0.1"), body.get("port", 8765), body.get("token") or ""
    read_only, tls = body.get("read_only", False), body.get("tls")
    if not isinstance(host, str) or not re.fullmatch(r"[0-9A-Za-z.:_-]{1,255}", host):
        return "host: an address to listen on, such as 127.0.0.1"
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        return "port: a port number"
    if not isinstance(token, str) or (token and not re.fullmatch(r"[A-Za-z0-9_-]{16,256}", token)):
        return "token: 16 or more letters, digits, - or _"
    if not isinstance(read_only, bool):
        return "read_only: true or false"
    if tls is not None and not (isinstance(tls, list) and len(tls) == 2 and all(isinstance(p, str) and p for p in tls)):
        return "tls: [certificate file, key file]"
    token = token or (current.token if current is not None and current.token else new_token())
    return WebOptions(host, port, token, read_only, (tls[0], tls[1]) if tls else None)
