"""The wire between a front end and the service, declared once: each facade call, its route, its request and its reply.

``CALLS`` is the facade's table (the service's own calls, which the
command line asks, are in own_calls.py; the shape of both, and the plain
kinds of field, in call.py).  The service's routes (facade_routes.py) are
built from it (each call's handler is the ``FacadeRoutes`` method of its
name, handed its fields already checked and decoded), and so are the
client's requests (facade_client.py ``ServiceClient._call``, through either
transport: HTTP over the Unix socket, or the service in the same process)
and the client's methods (``asking`` there), but for those that keep the
client's copy (``KEPT``).
A route string, a field's name or its check is written in these
declarations and nowhere else; tests/unit/test_wire_calls.py fails when a facade method has no call,
or a call no handler or no client method.

A field's value travels as JSON: the facade's data (``Agent``, ``Intent``,
``Observation``...) as codec.py writes it, checked on arrival to be
of the declared class; plain values (a pane's address, a time, a line
count) checked as what they are.  A GET's fields travel in its query
string, so its kinds read a string as well as a number.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..changes.model import failed
from ..model import Agent, Observation
from .call import (
    CLIENT,
    DAYS,
    FOLDER,
    HERE_KIND,
    LIFECYCLE,
    LINES,
    PANE,
    PANE_OR_NONE,
    SCOPE,
    SESSION_NAME,
    SETTLE,
    SETTLE_FOR,
    SLOW,
    TEXT,
    TIME,
    WORDS,
    Asked,
    Call,
    Kind,
)
from .codec import WireError, decode, encode
from .facade import Intent, KeyStroke, PendingCall


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


def _pairs(value: Any) -> bool:
    return all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], Agent) and isinstance(p[1], PendingCall) for p in value)


AGENT = _facade(Agent, "an Agent")
INTENT = _facade(Intent, "an Intent")
SEEN = _facade((Observation, type(None)), "an Observation or null")
NEAR = _facade((Agent, type(None)), "an Agent or null")
PAIRS = _facade(list, "(agent, request) pairs", _pairs)
KEY = _facade(KeyStroke, "a KeyStroke")


def _calls(*calls: Call) -> dict[str, Call]:
    return {call.name: call for call in calls}


CALLS: dict[str, Call] = _calls(
    # What a client draws its first frame from, and keeps current by.
    Call("state", "GET", "/v1/state", (("settle", SETTLE_FOR),), (("agents", True), ("problem", True), ("snoozes", True), ("pending", False), ("focused", False)), SETTLE),
    Call("events", "STREAM", "/v1/events", (("client", CLIENT),), query=(("form", "facade"),)),
    # The preview.
    Call("focus", "POST", "/v1/focus", (("pane", PANE_OR_NONE), ("client", CLIENT))),
    Call("here", "POST", "/v1/here"),  # a key at a terminal client: the phone is not pushed meanwhile
    Call("screen", "GET", "/v1/screen", (("pane", PANE),), (("screen", False), ("width", False))),
    Call("history", "GET", "/v1/history", (("pane", PANE), ("lines", LINES)), (("ansi", False),), SLOW),
    # What a client asks of an agent.
    Call("why", "POST", "/v1/why", (("agent", AGENT), ("now", TIME)), (("why", True),), otherwise=lambda line: (None, None)),
    Call("changes", "GET", "/v1/changes", (("pane", PANE), ("scope", SCOPE)), (("diff", True),), SLOW, otherwise=failed),
    Call("timeline", "POST", "/v1/timeline", (("agent", AGENT),), (("events", True),), blocking=True, otherwise=lambda line: []),  # reads the event log: off the loop
    Call("waited_today", "GET", "/v1/waited-today", (("now", TIME),), (("seconds", False),)),
    Call("away", "GET", "/v1/away", (("since", TIME),), (("agents", False),), SLOW, otherwise=lambda line: []),  # reads the event log, off the loop
    Call("spent", "GET", "/v1/spent", (("now", TIME), ("days", DAYS)), (("spent", True),), blocking=True, otherwise=lambda line: None),  # reads the event log: off the loop
    Call("pending", "GET", "/v1/pending", (), (("panes", False),)),
    # Answers.
    Call("answer", "POST", "/v1/answers", (("agent", AGENT), ("intent", INTENT), ("seen", SEEN), ("client", CLIENT)), (("refusal", False),)),
    Call("batch", "POST", "/v1/batch", (("agent", AGENT),), (("batch", True),), otherwise=lambda line: ([], line)),
    Call("approve_batch", "POST", "/v1/batch/approve", (("pairs", PAIRS), ("client", CLIENT)), (("line", False),), SLOW),
    # Snoozes.
    Call("snooze", "POST", "/v1/snoozes", (("agent", AGENT), ("until", TIME)), (("snooze", True),)),
    Call("unsnooze", "POST", "/v1/snoozes/delete", (("agent", AGENT),), (("was", False),)),
    Call("snoozes_ended", "POST", "/v1/snoozes/ended", (("now", TIME),), (("keys", False),)),
    # Input mode: a WebSocket, ``{"key": KEY}`` messages (input in facade_routes.py says the rest).
    Call("input", "WS", "/v1/input", (("pane", PANE), ("family", TEXT))),
    # Jump, start, stop.
    Call("jump", "POST", "/v1/jump", (("agent", AGENT), ("here", HERE_KIND)), (("jump", True),), SLOW, blocking=True),
    Call(
        "start_agent",
        "POST",
        "/v1/agents/start",
        (("folder", FOLDER), ("branch", TEXT), ("near", NEAR), ("here", HERE_KIND), ("args", WORDS), ("session", SESSION_NAME)),
        (("pane", False), ("target", False), ("cwd", False), ("worktree", False)),
        SLOW,
        blocking=True,
    ),
    Call("stop_agent", "POST", "/v1/agents/stop", (("agent", AGENT),), (("closed", False),), LIFECYCLE),
    Call("restart_agent", "POST", "/v1/agents/restart", (("agent", AGENT),), (("pane", False),), LIFECYCLE),
    Call("close_pane", "POST", "/v1/agents/close", (("agent", AGENT),), (), SLOW, blocking=True),
)

# The ``Facade`` methods and attributes a client serves from what it keeps, not by a call of their own, and why.
# tests/unit/test_wire_calls.py fails on a facade member that is neither here nor served by a call in ``SERVED_BY``.
LOCAL: dict[str, str] = {
    "config": "the client's own settings, handed to it",
    "clock": "the client's own clock (the service's, in its process)",
    "live": "handed to the client",
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

# The facade methods served by a call whose client method is written by hand (facade_client.py), and why: each
# keeps or changes the client's copy.  Every other one is made from its call's declaration (``asking`` there).
KEPT: dict[str, str] = {
    "here": "said beside the loop, at most once every few seconds (every key calls it)",
    "focus": "says the newest focus off the loop, then asks the pane's screen for the copy",
    "screen": "the copy of the previewed pane's screen, asked when focused and kept by the stream",
    "width": "the previewed pane's from the copy; asked only for another pane",
    "waited_today": "keeps the last answer for when the service does not give one",
    "answer": "keeps the answers on their way, whose reports the stream brings",
    "answer_pending": "asked once for every agent of a frame (``pending``), kept a moment",
    "approve_batch": "keeps the answers on their way, whose reports the stream brings",
    "snooze": "changes the copy of the snoozes at once",
    "unsnooze": "changes the copy of the snoozes at once",
    "snoozes_ended": "answers from the copy at once and tells the service beside the loop",
    "open_input": "a WebSocket, not a request",
    "start_agent": "the folder the user means, read from the client's own working folder",
}

# Which call serves each other facade method (a method may be served by a call of another name).
SERVED_BY: dict[str, str] = {
    "away": "away",
    "focus": "focus",
    "here": "here",
    "screen": "screen",
    "width": "screen",
    "history": "history",
    "changes": "changes",
    "why": "why",
    "timeline": "timeline",
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
