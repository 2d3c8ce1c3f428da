"""The wire between a front end and the service, declared once: each facade call, its route, its request and its reply.

``CALLS`` is the one table.  The service's routes (facade_routes.py) are
built from it (each call's handler is the ``FacadeRoutes`` method of its
name, handed its fields already checked and decoded), and so are the
client's requests (facade_client.py ``ServiceClient._call``, through either
transport: HTTP over the Unix socket, or the service in the same process).
A route string, a field's name or its check is written here and nowhere
else; tests/unit/test_wire_calls.py fails when a facade method has no call,
or a call no handler or no client method.

A field's value travels as JSON: the facade's data (``Agent``, ``Intent``,
``Observation``...) as service/wire.py writes it, checked on arrival to be
of the declared class; plain values (a pane's address, a time, a line
count) checked as what they are.  A GET's fields travel in its query
string, so its kinds read a string as well as a number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..model import PANE_ADDRESS, Agent, Observation
from ..service.facade import Intent, KeyStroke, PendingCall
from ..service.wire import WireError, decode, encode

HISTORY_MAX = 100_000  # lines of history one request may ask for
MAX_DAYS = 366  # days of spending one request may ask for
HERE = ("TMUX", "TMUX_PANE", "HEADSPACE_CLIENT")  # what of a client's environment says where the user sits


class Asked(Exception):
    """A request that is not what the route takes: HTTP 400 with this line."""


@dataclass(frozen=True)
class Kind:
    """What one field holds: how a client writes it (``put``) and how the service reads and checks it (``take``, Asked when wrong)."""

    name: str
    take: Callable[[Any], Any]
    put: Callable[[Any], Any] = lambda value: value


def _facade(cls: type | tuple[type, ...], what: str, check: Callable[[Any], bool] = lambda value: True) -> Kind:
    def take(value: Any) -> Any:
        try:
            decoded = decode(value)
        except WireError as exc:
            raise Asked(f"{exc}") from None
        if not isinstance(decoded, cls) or not check(decoded):
            raise Asked(f"not {what}")
        return decoded

    return Kind(what, take, encode)


def _pane(value: Any) -> str:
    if not isinstance(value, str) or not PANE_ADDRESS.fullmatch(value):
        raise Asked("a pane id such as %3 (or %3@host)")
    return value


def _time(value: Any) -> float:
    try:
        number = float(value) if isinstance(value, (int, float, str)) and not isinstance(value, bool) else math.nan
    except ValueError:
        number = math.nan
    if math.isnan(number):  # infinity is a time: a snooze until its wait changes (UNTIL_IT_CHANGES)
        raise Asked("a time")
    return number


def _lines(value: Any) -> int:
    text = str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if not text.isdigit() or int(text) > HISTORY_MAX:
        raise Asked(f"a number up to {HISTORY_MAX}")
    return int(text)


def _days(value: Any) -> int:
    text = str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if not text.isdigit() or int(text) > MAX_DAYS:
        raise Asked(f"a number of days up to {MAX_DAYS}")
    return int(text)


def _text(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 4096:
        raise Asked("a string")
    return value


def _scope(value: Any) -> str:
    if value not in ("turn", "start"):
        raise Asked("turn or start")
    return str(value)


def _folder(value: Any) -> str:
    if not isinstance(value, str) or not value.startswith("/") or len(value) > 4096:
        raise Asked("an absolute path")
    return value


def _client(value: Any) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= 64:
        raise Asked("who asks (a short string)")
    return value


def _here(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise Asked("the client's TMUX, TMUX_PANE and HEADSPACE_CLIENT")
    return {key: str(value[key])[:4096] for key in HERE if isinstance(value.get(key), str)}


def _pairs(value: Any) -> bool:
    return all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], Agent) and isinstance(p[1], PendingCall) for p in value)


AGENT = _facade(Agent, "an Agent")
INTENT = _facade(Intent, "an Intent")
SEEN = _facade((Observation, type(None)), "an Observation or null")
NEAR = _facade((Agent, type(None)), "an Agent or null")
PAIRS = _facade(list, "(agent, request) pairs", _pairs)
KEY = _facade(KeyStroke, "a KeyStroke")
PANE = Kind("pane", _pane)
PANE_OR_NONE = Kind("pane or null", lambda value: None if value is None else _pane(value))
TIME = Kind("time", _time)
SETTLE_FOR = Kind("seconds, or none", lambda value: 0.0 if value is None else _time(value))  # /v1/state's settle: optional, as it always was
LINES = Kind("lines", _lines)
DAYS = Kind("days", _days)  # how many days back the spending view goes (0: today's total only)
TEXT = Kind("text", _text)
FOLDER = Kind("folder", _folder)
SCOPE = Kind("scope", _scope)  # what a diff is against: the turn's baseline, or the agent's start
CLIENT = Kind("client", _client)  # filled in by the client: its id
HERE_KIND = Kind("here", _here)  # filled in by the client: its environment's TMUX, TMUX_PANE, HEADSPACE_CLIENT

ASK, SLOW, SETTLE = "ask", "slow", "settle"  # timeout classes: answered from memory; runs tmux or git; waits for the first look first


@dataclass(frozen=True)
class Call:
    """One facade call on the wire.

    ``method``: GET (fields in the query), POST (fields in a JSON body),
    ``WS`` (a WebSocket opened by a GET) or ``STREAM`` (Server-Sent Events
    from a GET).  ``reply``: each field of the answer and whether it is the
    facade's data (decoded by wire.py) or plain JSON.  ``blocking``: its
    handler runs tmux or git, so a server runs it off its loop.
    """

    name: str
    method: str
    path: str
    fields: tuple[tuple[str, Kind], ...] = ()
    reply: tuple[tuple[str, bool], ...] = ()  # (field, is the facade's data)
    timeout: str = ASK
    blocking: bool = False
    query: tuple[tuple[str, str], ...] = ()  # fixed query parameters (the stream's form)

    @property
    def verb(self) -> str:
        """The HTTP method its route answers."""
        return "GET" if self.method in ("GET", "WS", "STREAM") else self.method

    def put(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The fields as JSON, from the caller's values (every declared field, none other)."""
        unknown = set(args) - {name for name, _ in self.fields}
        if unknown:
            raise TypeError(f"{self.name}: no field {sorted(unknown)[0]!r}")
        return {name: kind.put(args[name]) for name, kind in self.fields if name in args}

    def take(self, sent: Mapping[str, Any]) -> dict[str, Any]:
        """The fields as the handler takes them, each checked (Asked, naming the field, when one is wrong or missing)."""
        taken = {}
        for name, kind in self.fields:
            try:
                taken[name] = kind.take(sent.get(name))
            except Asked as exc:
                raise Asked(f"{name}: {exc}") from None
        return taken

    def answer(self, reply: Mapping[str, Any]) -> dict[str, Any]:
        """The reply as the client takes it: the facade's data decoded (WireError when it is not), plain fields as they came."""
        return {name: decode(reply.get(name)) if facade else reply.get(name) for name, facade in self.reply}


def _calls(*calls: Call) -> dict[str, Call]:
    return {call.name: call for call in calls}


CALLS: dict[str, Call] = _calls(
    # What a client draws its first frame from, and keeps current by.
    Call("state", "GET", "/v1/state", (("settle", SETTLE_FOR),), (("agents", True), ("problem", True), ("snoozes", True), ("pending", False), ("focused", False)), SETTLE),
    Call("events", "STREAM", "/v1/events", (("client", CLIENT),), query=(("form", "facade"),)),
    # The preview.
    Call("focus", "POST", "/v1/focus", (("pane", PANE_OR_NONE), ("client", CLIENT))),
    Call("screen", "GET", "/v1/screen", (("pane", PANE),), (("screen", False), ("width", False))),
    Call("history", "GET", "/v1/history", (("pane", PANE), ("lines", LINES)), (("ansi", False),), SLOW),
    # What a client asks of an agent.
    Call("why", "POST", "/v1/why", (("agent", AGENT), ("now", TIME)), (("why", True),)),
    Call("changes", "GET", "/v1/changes", (("pane", PANE), ("scope", SCOPE)), (("diff", False),), SLOW),
    Call("timeline", "POST", "/v1/timeline", (("agent", AGENT),), (("events", True),)),
    Call("waited_today", "GET", "/v1/waited-today", (("now", TIME),), (("seconds", False),)),
    Call("spent", "GET", "/v1/spent", (("now", TIME), ("days", DAYS)), (("today", True), ("days", True))),
    Call("pending", "GET", "/v1/pending", (), (("panes", False),)),
    Call("rings_elsewhere", "GET", "/v1/rings-elsewhere", (), (("rings", False),)),
    # Answers.
    Call("answer", "POST", "/v1/answers", (("agent", AGENT), ("intent", INTENT), ("seen", SEEN), ("client", CLIENT)), (("refusal", False),)),
    Call("batch", "POST", "/v1/batch", (("agent", AGENT),), (("pairs", True), ("reason", False))),
    Call("approve_batch", "POST", "/v1/batch/approve", (("pairs", PAIRS), ("client", CLIENT)), (("line", False),), SLOW),
    # Snoozes.
    Call("snooze", "POST", "/v1/snoozes", (("agent", AGENT), ("until", TIME)), (("snooze", True),)),
    Call("unsnooze", "POST", "/v1/snoozes/delete", (("agent", AGENT),), (("was", False),)),
    Call("snoozes_ended", "POST", "/v1/snoozes/ended", (("now", TIME),), (("keys", False),)),
    # Input mode: a WebSocket, ``{"key": KEY}`` messages (input in facade_routes.py says the rest).
    Call("input", "WS", "/v1/input", (("pane", PANE), ("family", TEXT))),
    # Jump, start, stop.
    Call("jump", "POST", "/v1/jump", (("agent", AGENT), ("here", HERE_KIND)), (("end", False), ("exit_with", False), ("notice", False)), SLOW, blocking=True),
    Call("start_agent", "POST", "/v1/agents/start", (("folder", FOLDER), ("branch", TEXT), ("near", NEAR), ("here", HERE_KIND)), (("pane", False),), SLOW, blocking=True),
    Call("stop_agent", "POST", "/v1/agents/stop", (("agent", AGENT),), (("closed", False),), SLOW),
    Call("restart_agent", "POST", "/v1/agents/restart", (("agent", AGENT),), (("pane", False),), SLOW),
    Call("close_pane", "POST", "/v1/agents/close", (("agent", AGENT),), (), SLOW, blocking=True),
)

# The ``Facade`` methods and attributes a client serves from what it keeps, not by a call of their own, and why.
# tests/unit/test_wire_calls.py fails on a facade member that is neither here nor served by a call in ``SERVED_BY``.
LOCAL: dict[str, str] = {
    "config": "the client's own settings, handed to it",
    "clock": "the client's own clock (the service's, in its process)",
    "live": "handed to the client",
    "blocking": "the client's transport: whether a call waits on another process",
    "subscribe": "the events stream (``events``) tells the client's subscribers",
    "on_answer_report": "the events stream carries this client's answers' reports",
    "run": "follows the events stream (or runs the service in its process)",
    "stop": "ends the client's stream",
    "agents": "the client's copy, kept by ``state`` and the stream",
    "problem_now": "the client's copy, kept by ``state`` and the stream",
    "focused": "the pane this client last focused",
    "snooze_of": "the client's copy of the snoozes, kept by the stream",
    "snoozed": "the client's copy of the snoozes",
}

# Which call serves each other facade method (a method may be served by a call of another name).
SERVED_BY: dict[str, str] = {
    "focus": "focus",
    "screen": "screen",
    "width": "screen",
    "history": "history",
    "changes": "changes",
    "why": "why",
    "timeline": "timeline",
    "rings_elsewhere": "rings_elsewhere",
    "waited_today": "waited_today",
    "spent": "spent",
    "answer": "answer",
    "answer_pending": "pending",
    "batch": "batch",
    "approve_batch": "approve_batch",
    "snooze": "snooze",
    "unsnooze": "unsnooze",
    "snoozes_ended": "snoozes_ended",
    "open_input": "input",
    "jump": "jump",
    "start_agent": "start_agent",
    "stop_agent": "stop_agent",
    "restart_agent": "restart_agent",
    "close_pane": "close_pane",
}
