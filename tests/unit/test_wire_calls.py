"""The wire is declared once (api/: calls.py, own_calls.py, page_calls.py), and the facade, the routes and every client follow it.

* every member of the ``Facade`` Protocol is served by a declared call, or
  listed as the client's own (``LOCAL``) with why;
* every declared call has its handler in ``FacadeRoutes`` (taking exactly
  the declared fields) and a route of its method at its path in the
  service's app, and no facade route is left undeclared;
* every call the client makes, made through a recording transport, is
  written as the call declares it, and served by the real routes (over
  aiohttp, as the service serves them) with a 200: client and server agree
  on the method, the path and every field;
* every route the service serves (its Unix socket's and the phone page's)
  is in one of the declarations, and every request the page's script and
  the command line make is declared.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

import headspace_tui
from headspace_tui.api.call import Asked, url_path
from headspace_tui.api.calls import CALLS, KEPT, LOCAL, SERVED_BY, Call
from headspace_tui.api.errors import Lost, ServiceError
from headspace_tui.api.facade import Facade, Intent, IntentKind, Jump, PaneScreen, ProblemChanged
from headspace_tui.api.own_calls import OWN
from headspace_tui.api.page_calls import ASSETS, PAGE
from headspace_tui.changes.model import Diff
from headspace_tui.hooks.calls import PendingCall
from headspace_tui.model import Agent, AgentState, Observation, Prompt
from headspace_tui.notifications.snooze import Snooze, key_of
from headspace_tui.resident.facade_client import ServiceClient
from headspace_tui.resident.facade_routes import FacadeRoutes, FacadeStream
from headspace_tui.resident.server import Resident, Watched
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.watching.lifecycle import Started
from headspace_tui.shared.config import Config
from headspace_tui.shared.resident_place import Place
from headspace_tui.tmux.server import TmuxServer

AGENT = Agent(pane_id="%1", target="s:0.0", session="s", key="k1", observation=Observation(AgentState.PERMISSION, Prompt("permission", "Bash", "ls")))
CALL = PendingCall(7, "%1", 1234, "session", "Bash", {"command": "ls"})
# The server's own routes, not the facade's (the command line's, the card, the web page's switch).


def _facade_members() -> set[str]:
    members = set(Facade.__annotations__)
    members |= {name for name, value in vars(Facade).items() if not name.startswith("_") and (callable(value) or isinstance(value, property))}
    return members


def test_every_facade_member_is_served_by_a_declared_call_or_said_to_be_the_clients_own():
    members = _facade_members()
    assert members, "the Facade Protocol has no members: this test reads the wrong thing"
    unserved = sorted(members - set(SERVED_BY) - set(LOCAL))
    assert not unserved, f"facade members with no declared call (resident/calls.py CALLS, SERVED_BY) and not listed as local (LOCAL, with why): {unserved}"
    assert not (set(SERVED_BY) | set(LOCAL)) - members, "calls.py names members the Facade does not have"
    assert not set(SERVED_BY) & set(LOCAL)
    assert all(why.strip() for why in LOCAL.values())
    assert set(SERVED_BY.values()) <= set(CALLS)


def test_every_call_is_a_method_of_the_client_or_its_stream():
    client_methods = {name for name in dir(ServiceClient) if not name.startswith("_")}
    assert set(SERVED_BY) <= client_methods, sorted(set(SERVED_BY) - client_methods)
    assert set(CALLS) == set(SERVED_BY.values()) | {"state", "events"}, "a call the client never makes, or one no facade member says it serves"


def test_a_client_method_is_made_from_its_declaration_unless_the_client_keeps_a_copy_for_it():
    """Adding a call writes no client method: each facade method served by a call is made from it (``asking``), or written by hand with why (``KEPT``)."""
    assert set(KEPT) <= set(SERVED_BY) and all(why.strip() for why in KEPT.values())
    made = sorted(set(SERVED_BY) - set(KEPT))
    assert len(made) >= 8, made
    for member in made:
        method = getattr(ServiceClient, member)
        assert getattr(method, "asks", None) is CALLS[SERVED_BY[member]], f"{member} is not made from its declaration"
        assert inspect.iscoroutinefunction(method) == inspect.iscoroutinefunction(getattr(Facade, member)), f"{member}: async as the Protocol says"
        assert inspect.signature(method) == inspect.signature(getattr(Facade, member))
    for member in KEPT:
        method = vars(ServiceClient).get(member)
        assert method is not None and not hasattr(method, "asks"), f"{member} is listed as written by hand, and is not"


def test_a_made_method_takes_the_protocols_arguments_and_only_those():
    """A call whose fields are not the Protocol's arguments is refused when the method is made, not when a user first asks it."""
    from headspace_tui.resident.facade_client import asking

    with pytest.raises(TypeError, match="why"):
        asking("why", CALLS["timeline"])
    client, _ = _client(FacadeRoutes(Stub(), FacadeStream(Stub()), None, lambda: None))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        client.why(AGENT)  # one argument short: refused before anything is sent
    assert client.why(agent=AGENT, now=1.0) == (None, None)


class Refusing:
    """A transport whose service refuses every call with one line (a 409), or never answers (``Lost``)."""

    prefix = "the headspace service: "

    def __init__(self, error: type[ServiceError]) -> None:
        self.error = error

    def ask(self, call: Call, sent: dict[str, Any], timeout: float) -> Any:
        raise self.error(f"no {call.name} today")


@pytest.mark.parametrize("error", [ServiceError, Lost])
def test_a_made_method_answers_as_declared_when_the_service_gives_nothing(error: type[ServiceError]):
    """A question the app asks as it draws has a declared answer for the service's silence; an action's failure reaches the caller as its one line."""
    client = ServiceClient(Place(Path("/nonexistent"), "k"), config=Config(), transport=Refusing(error))
    assert client.why(AGENT, 1.0) == (None, None)
    assert client.timeline(AGENT) == []
    assert client.spent(1.0, 7) is None
    assert client.batch(AGENT) == ([], "the headspace service: no batch today")
    assert asyncio.run(client.changes("%1", "turn")) == Diff(error="the headspace service: no changes today")
    for act in (lambda: client.jump(AGENT), lambda: client.close_pane(AGENT), lambda: asyncio.run(client.stop_agent(AGENT)), lambda: asyncio.run(client.history("%1", 5))):
        with pytest.raises(ServiceError, match="^the headspace service: no "):
            act()


@pytest.mark.parametrize("call", [c for c in CALLS.values() if c.method != "STREAM"], ids=lambda c: c.name)
def test_every_call_has_its_handler_taking_the_declared_fields(call: Call):
    handler = getattr(FacadeRoutes, call.name, None)
    assert handler is not None and callable(handler), f"no handler FacadeRoutes.{call.name}"
    if call.method == "WS":
        return  # a WebSocket's handler takes the request; its fields are read through the declaration (CALLS["input"].take)
    parameters = [name for name in inspect.signature(handler).parameters if name != "self"]
    assert parameters == [name for name, _ in call.fields], f"{call.name}: the handler takes {parameters}, the declaration says {[n for n, _ in call.fields]}"


def _service() -> Service:
    return Service.build(TmuxServer(socket_name="headspace-wire-calls-unused"), live=False, journal=Journal(None), hooks=False)


def test_the_services_router_is_the_declaration(tmp_path: Path):
    """Each declared call at its method and path in the app the service serves, and every route of the facade declared."""
    resident = Resident(_service(), Watched("k", "tmux", lambda: None), Place(tmp_path, "k"))
    served = {(route.method, route.resource.canonical) for route in resident.app().router.routes() if route.method != "HEAD" and route.resource is not None}
    declared = {(call.verb, call.path) for call in [*CALLS.values(), *OWN.values()]}
    assert declared - served == set(), f"declared calls with no route: {sorted(declared - served)}"
    assert served - declared == set(), f"routes declared in neither api/calls.py nor api/own_calls.py: {sorted(served - declared)}"


def _page_app():
    from headspace_tui.service.answer_wait import AnswerWait
    from headspace_tui.web.server import WebPage

    service = _service()
    return WebPage(service, AnswerWait(service), lambda client, pane: None, lambda client: None).app()


def test_the_pages_router_is_its_declaration():
    """Every route the phone page's server serves is declared in api/page_calls.py, at its method, and every declared one is served."""
    served = {(route.method, route.resource.canonical) for route in _page_app().router.routes() if route.method != "HEAD" and route.resource is not None}
    declared = {(call.verb, call.path) for call in PAGE.values()}
    assert len(declared) == len(PAGE) > 5
    assert declared - served == set(), f"declared page calls with no route: {sorted(declared - served)}"
    assert served - declared == set(), f"page routes not declared in api/page_calls.py: {sorted(served - declared)}"


@pytest.mark.parametrize("call", list(PAGE.values()), ids=lambda c: c.name)
def test_every_page_call_has_its_handler_taking_the_declared_fields(call: Call):
    from headspace_tui.web.server import WebPage

    handler = getattr(WebPage, f"_{call.name}", None)
    assert handler is not None and callable(handler), f"no handler WebPage._{call.name}"
    parameters = [name for name in inspect.signature(handler).parameters if name not in ("self", "request")]
    assert parameters == [name for name, _ in call.fields], f"{call.name}: the handler takes {parameters}, the declaration says {[n for n, _ in call.fields]}"


def _script_requests() -> list[tuple[str, str, set[str]]]:
    """The requests the page's script and page make: (method, path, query fields), read from the files the wheel ships."""
    import re

    assets = Path(headspace_tui.__file__).parent / "web" / "assets"
    script, page = (assets / "app.js").read_text(), (assets / "index.html").read_text()
    asked = []
    requests = (
        ("GET", r"fetch\(\s*[`\"']([^`\"']+)"),
        ("POST", r"post\(\s*[`\"']([^`\"']+)"),
        ("GET", r"new EventSource\(\s*[`\"']([^`\"']+)"),
        ("GET", r"serviceWorker\.register\(\s*[`\"']([^`\"']+)"),  # the worker's script: the browser fetches it
    )
    for verb, pattern in requests:
        for address in re.findall(pattern, script):
            path, _, query = address.partition("?")
            asked.append((verb, path, set(re.findall(r"(?:^|&)([A-Za-z_]+)=", query))))
    for address in re.findall(r"(?:src|href)=\"(/[^\"]*)\"", page):
        asked.append(("GET", address, set()))
    return asked


def test_every_request_the_page_makes_is_declared_with_its_fields():
    """The page's script asks only declared calls, at their method, with declared query fields; and every page call is asked by it."""
    asked = _script_requests()
    assert len(asked) >= 10, f"the page's requests were not found (the reading of app.js is wrong): {asked}"
    by_path = {call.path: call for call in PAGE.values()}
    assets = PAGE["asset"]
    for verb, path, fields in asked:
        call = by_path.get(path) or (assets if path.removeprefix("/assets/") in ASSETS else None)
        assert call is not None, f"the page asks {verb} {path}, which api/page_calls.py does not declare"
        assert call.verb == verb, f"{path}: asked as {verb}, declared {call.verb}"
        assert fields <= {name for name, _ in call.fields}, f"{path}: asks {sorted(fields)}, declared {[n for n, _ in call.fields]}"
    used = {by_path.get(path, assets).name for _, path, _ in asked}
    assert set(PAGE) - used - {"page"} == set(), f"declared page calls the page never asks: {sorted(set(PAGE) - used - {'page'})}"


def test_a_page_field_is_checked_by_its_kind_before_its_handler():
    """A wrong field is a 400 that names it, from the declaration's kind (the page's routes check nothing by hand)."""
    with pytest.raises(Asked, match="^pane: "):
        PAGE["screen"].take({"pane": "%3; rm -rf /"})
    with pytest.raises(Asked, match="^minutes: "):
        PAGE["snooze"].take({"pane": "%3", "minutes": 24 * 60 + 1})
    with pytest.raises(Asked, match="^action: "):
        PAGE["rules"].take({"action": "delete"})
    assert PAGE["changes"].take({"pane": "%3@box"}) == {"pane": "%3@box", "scope": "turn"}
    assert [call.name for call in PAGE.values() if call.writes] == ["answer", "snooze", "rules"]


def test_no_module_writes_a_route_of_its_own():
    """Every request and route is read from the declarations: no other module of the package names a ``/v1/`` or ``/api/`` path in its code.

    Docstrings and comments may name one (they describe the wire); a string
    the code uses may not.
    """
    import ast

    package = Path(headspace_tui.__file__).parent
    declarations = {package / "api" / "calls.py", package / "api" / "own_calls.py", package / "api" / "page_calls.py"}
    found = []
    for path in sorted(package.rglob("*.py")):
        if path in declarations:
            continue
        tree = ast.parse(path.read_text(), str(path))
        scopes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        docstrings = {id(node.body[0].value) for node in ast.walk(tree) if isinstance(node, scopes) and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and ("/v1/" in node.value or "/api/" in node.value) and id(node) not in docstrings:
                found.append(f"{path.relative_to(package)}:{node.lineno}: {node.value[:60]!r}")
    assert not found, found


def test_each_own_call_is_asked_as_declared_and_its_fields_are_checked(tmp_path: Path):
    """The command line's requests are the declaration's: a field of the wrong type is refused with its name, by the route itself."""
    call = OWN["answer_and_report"]
    assert call.put({"pane_id": "%3", "intent": "approve", "expect": None}) == {"pane_id": "%3", "intent": "approve", "expect": None}
    with pytest.raises(TypeError):
        call.put({"pane": "%3"})
    with pytest.raises(Asked, match="^option: "):
        call.take({"pane_id": "%3", "intent": "approve", "option": 3})
    assert url_path(OWN["rows"], OWN["rows"].put({"settle": 10.0})) == "/v1/agents?settle=10.0"
    with pytest.raises(Asked, match="^port: "):
        OWN["web"].take({"host": "127.0.0.1", "port": "8080"})


class Stub:
    """A service that answers every call plainly: what the routes ask of the facade, with no tmux behind it."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)

    def agents(self):
        return [AGENT]

    def problem_now(self):
        return ProblemChanged("", ())

    def snoozes(self):
        return {}

    def answers_pending(self):
        return []

    focused = None

    def focus(self, pane):
        self.asked.append("focus")

    def here(self):
        self.asked.append("here")

    def show(self, panes):
        pass

    def screen(self, pane):
        return PaneScreen("x", 80, 24)

    def width(self, pane):
        return 80

    async def history(self, pane, lines):
        return "history"

    async def changes(self, pane, scope):
        return Diff(note=f"{pane} {scope}")

    def why(self, agent, now):
        return None, None

    def timeline(self, agent):
        return []

    def waited_today(self, agents, now):
        return 3.0

    async def away(self, since):
        return [{"address": "%1", "target": "w:0.0", "finished": 1, "since": since}]

    def spent(self, now, days):
        from headspace_tui.usage.model import Spent, SpentRow, Tokens

        return Spent(Tokens(1, 2, 3, 4), 0.25, 0), [SpentRow("2026-11-29", "w:0.0 (repo)", Spent(Tokens(1, 2, 3, 4), 0.25, 0))][:days]

    def now(self, agent):
        return AGENT if (agent.pane_id, agent.key) == (AGENT.pane_id, AGENT.key) else None

    def stale(self, agent, request):
        return ""

    def answer(self, agent, intent, seen=None):
        self.asked.append("answer")
        return ""

    def batch(self, agent):
        return [(AGENT, CALL)], ""

    def approve_batch(self, pairs):
        return "approved 1"

    def snooze(self, agent, until):
        return Snooze(until, AGENT.observation.request)

    def unsnooze(self, agent):
        return True

    def snoozes_ended(self, now):
        return ["k1"]

    def jump(self, agent, here):
        return Jump()

    def start_agent(self, folder, branch, near, here, args, session):
        return Started("%9", folder, bool(branch), target=f"{session or 'w'}:1.0")

    async def stop_agent(self, agent):
        return True

    async def restart_agent(self, agent):
        return "%9"

    def close_pane(self, agent):
        pass


class Recording:
    """A transport that writes down each request as HTTP would send it, and answers it through the real routes in this process."""

    prefix = "the headspace service: "

    def __init__(self, routes: FacadeRoutes) -> None:
        self.routes = routes
        self.sent: list[tuple[str, str, str, dict[str, Any] | None]] = []  # (call, method, path with its query, body)
        self.threads: list[tuple[str, int]] = []  # (call, the thread that asked it)

    def ask(self, call: Call, sent: dict[str, Any], timeout: float) -> Any:
        sent = json.loads(json.dumps(sent))
        self.sent.append((call.name, call.verb, url_path(call, sent), sent if call.verb == "POST" else None))
        self.threads.append((call.name, threading.get_ident()))
        reply = self.routes.answer_now(call, sent)
        if inspect.isawaitable(reply):  # asked off the loop (the client's async methods ask from a thread): the stub's coroutines need no loop of theirs
            reply = asyncio.run(reply)
        return json.loads(json.dumps(reply))


def _client(routes: FacadeRoutes) -> tuple[ServiceClient, Recording]:
    transport = Recording(routes)
    return ServiceClient(Place(Path("/nonexistent"), "k"), config=Config(), transport=transport), transport


def _every_call(client: ServiceClient) -> None:
    """Each facade method the client serves by a call, once (``open_input`` opens a WebSocket: test_the_services_router_is_the_declaration covers its route)."""
    client.connect(0.0)
    client.focus("%1")
    assert client.screen("%1") == PaneScreen("x", 80, 24)
    client.focus(None)
    assert client.width("%1") == 80
    assert asyncio.run(client.history("%1", 10)) == "history"
    assert asyncio.run(client.changes("%1", "turn")) == Diff(note="%1 turn")
    assert client.why(AGENT, 1.0) == (None, None)
    assert client.timeline(AGENT) == []
    client.here()  # a key: said to the service (no loop runs here, so at once)
    assert client.waited_today({}, 100.0) == 3.0
    assert asyncio.run(client.away(90.0)) == [{"address": "%1", "target": "w:0.0", "finished": 1, "since": 90.0}]
    today, rows = client.spent(100.0, 7)
    assert today.cost_usd == 0.25 and today.tokens.total == 10 and [r.agent for r in rows] == ["w:0.0 (repo)"]
    assert client.answer(AGENT, Intent(IntentKind.APPROVE)) == ""
    assert client.answer(AGENT, Intent(IntentKind.TEXT, text="yes"), AGENT.observation) == ""
    assert client.answer_pending(AGENT) is False
    assert client.batch(AGENT) == ([(AGENT, CALL)], "")
    assert client.approve_batch([(AGENT, CALL)]) == "approved 1"
    assert client.snooze(AGENT, 5.0) is not None
    assert client.snoozes_ended(10.0) == [key_of(AGENT)]  # ran out in the copy, and told to the service
    assert client.unsnooze(AGENT) is True
    assert client.jump(AGENT) == Jump()
    assert client.start_agent("/tmp", "", AGENT) == "%9"
    assert client.start("/tmp", "b", None, args=["--model", "a b"], session="s") == {"pane": "%9", "target": "s:1.0", "cwd": "/tmp", "worktree": True}
    assert asyncio.run(client.stop_agent(AGENT)) is True
    assert asyncio.run(client.restart_agent(AGENT)) == "%9"
    client.close_pane(AGENT)


def test_the_client_writes_each_call_as_declared_and_the_routes_take_it_as_written():
    stub = Stub()
    routes = FacadeRoutes(stub, FacadeStream(stub), None, lambda: None)  # type: ignore[arg-type]
    client, transport = _client(routes)
    _every_call(client)
    made = {name for name, *_ in transport.sent}
    assert made == set(CALLS) - {"events", "input"}, f"calls the client never made: {sorted(set(CALLS) - {'events', 'input'} - made)}"
    for name, method, path, body in transport.sent:
        call = CALLS[name]
        assert (method, path.partition("?")[0]) == (call.verb, call.path)
        fields = body if body is not None else dict(pair.split("=", 1) for pair in path.partition("?")[2].split("&") if pair)
        assert set(fields) == {field for field, _ in call.fields}, f"{name}: sent {sorted(fields)}, declared {[f for f, _ in call.fields]}"
    assert "answer" in stub.asked


def test_what_the_client_writes_the_service_serves_over_http():
    """Each request the client wrote, sent over HTTP to the routes as the service serves them: 200 every time."""
    stub = Stub()
    routes = FacadeRoutes(stub, FacadeStream(stub), None, lambda: None)  # type: ignore[arg-type]
    client, transport = _client(routes)
    _every_call(client)

    async def replay() -> list[tuple[str, int, str]]:
        app = web.Application()
        routes.add(app)
        async with TestClient(TestServer(app)) as http:
            said = []
            for name, method, path, body in transport.sent:
                response = await http.request(method, path, json=body) if body is not None else await http.request(method, path)
                said.append((name, response.status, await response.text()))
            return said

    for name, status, text in asyncio.run(replay()):
        assert status == 200, f"{name}: HTTP {status}: {text}"


def test_a_field_the_declaration_does_not_have_is_not_sent():
    with pytest.raises(TypeError):
        CALLS["why"].put({"agent": AGENT, "now": 1.0, "extra": 1})


def test_a_time_in_a_query_is_written_whole():
    """``waited_today``'s now went as ``1.7644e+09`` (six digits of ``format(x, "g")``): the service counted the day hours off."""
    from urllib.parse import parse_qs, urlsplit

    call = next(c for c in CALLS.values() if c.verb == "GET" and any(name == "now" for name, _ in c.fields))
    now = 1764400000.123
    query = parse_qs(urlsplit(url_path(call, {"now": now})).query)
    assert float(query["now"][0]) == now


def test_the_client_asks_nothing_on_the_loop_when_snoozes_run_out():
    """Asked once a second from the app's loop: asked there, it would hold the keys as long as the service (or its tmux) takes.

    The same in both modes: the answer comes from the copy at once, and the
    service is told from a thread beside the loop.
    """
    stub = Stub()
    transport = Recording(FacadeRoutes(stub, FacadeStream(stub), None, lambda: None))  # type: ignore[arg-type]
    client = ServiceClient(Place(Path("/nonexistent"), "k"), config=Config(), transport=transport)
    client._snoozes = {"k1": Snooze(5.0, (AgentState.PERMISSION, "a")), "k2": Snooze(50.0, (AgentState.PERMISSION, "b"))}

    async def on_the_loop() -> tuple[list[str], int]:
        loop_thread = threading.get_ident()
        ended = client.snoozes_ended(10.0)
        assert transport.threads == [], f"asked on the app's loop: {transport.threads}"
        await asyncio.gather(*client._asides)
        return ended, loop_thread

    ended, loop_thread = asyncio.run(on_the_loop())
    assert ended == ["k1"] and set(client._snoozes) == {"k2"}
    [(name, thread)] = transport.threads
    assert name == "snoozes_ended" and thread != loop_thread
