"""One call on the wire between a client and the service: its route, its fields and how each is checked, its reply.

The shape of every declaration (``Call``, ``Kind``) and the plain kinds of
field, kept apart from the facade's data so that a client that asks only
plain rows (the command line: own_calls.py) loads none of the watcher.
The facade's calls are declared in calls.py, the service's own in
own_calls.py, the phone page's in page_calls.py; nothing else writes a route.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from ..model import PANE_ADDRESS

HISTORY_MAX = 100_000  # lines of history one request may ask for
MAX_DAYS = 366  # days of spending one request may ask for
MAX_WORDS = 256  # arguments one new agent may be started with
HERE = ("TMUX", "TMUX_PANE", "HEADSPACE_CLIENT")  # what of a client's environment says where the user sits
FILLED_IN = ("client", "here")  # fields the client fills in itself (its id, where the user sits): no facade method's argument


class Asked(Exception):
    """A request that is not what the route takes: HTTP 400 with this line."""


@dataclass(frozen=True)
class Kind:
    """What one field holds: how a client writes it (``put``) and how the service reads and checks it (``take``, Asked when wrong)."""

    name: str
    take: Callable[[Any], Any]
    put: Callable[[Any], Any] = lambda value: value


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


def _rules_action(value: Any) -> str:
    if value not in ("pause", "resume", "revoke"):
        raise Asked("pause, resume or revoke")
    return str(value)


def _short(limit: int) -> Kind:
    """Text of at most ``limit`` characters; absent is "" (a rule's id, a host's name: "" for every one)."""

    def take(value: Any) -> str:
        if value is None:
            return ""
        if not isinstance(value, str) or len(value) > limit:
            raise Asked(f"a string of at most {limit} characters")
        return value

    return Kind(f"text up to {limit}", take)


def _words(value: Any) -> tuple[str, ...]:
    """A program's own arguments, each a string, passed on verbatim (absent: none)."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_WORDS or not all(isinstance(word, str) and len(word) <= 4096 for word in value):
        raise Asked(f"a list of at most {MAX_WORDS} strings")
    return tuple(value)


def optional(kind: Kind) -> Kind:
    """``kind``, or null (absent)."""
    return Kind(f"{kind.name} or null", lambda value: None if value is None else kind.take(value))


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Asked("true or false")
    return value


PANE = Kind("pane", _pane)
PANE_OR_NONE = optional(PANE)
TIME = Kind("time", _time)
SETTLE_FOR = Kind("seconds, or none", lambda value: 0.0 if value is None else _time(value))  # /v1/state's settle: optional, as it always was
LINES = Kind("lines", _lines)
DAYS = Kind("days", _days)  # how many days back the spending view goes (0: today's total only)
TEXT = Kind("text", _text)
MAYBE_TEXT = optional(TEXT)
FLAG = optional(Kind("flag", _flag))  # true, false, or absent (None)
FOLDER = Kind("folder", _folder)
SCOPE = Kind("scope", _scope)  # what a diff is against: the turn's baseline, or the agent's start
CLIENT = Kind("client", _client)  # filled in by the client: its id
RULES_ACTION = Kind("rules action", _rules_action)  # what a rules change does (the page's and the command line's)
RULE_ID = _short(64)  # one rule's id, "" for every rule
HOST_NAME = _short(255)  # one host's name, "" for every host
WORDS = Kind("arguments", _words, lambda value: list(value))  # claude's own arguments for a new agent (``headspace new -- ...``), verbatim
SESSION_NAME = _short(256)  # a tmux session to start in, "" to let the service choose as the table does
HERE_KIND = Kind("here", _here)  # filled in by the client: its environment's TMUX, TMUX_PANE, HEADSPACE_CLIENT

# Timeout classes: answered from memory; runs tmux or git; waits for the first look first; stops (or restarts) an agent.
ASK, SLOW, SETTLE, LIFECYCLE = "ask", "slow", "settle", "lifecycle"


@dataclass(frozen=True)
class Call:
    """One facade call on the wire.

    ``method``: GET (fields in the query), POST (fields in a JSON body),
    ``WS`` (a WebSocket opened by a GET) or ``STREAM`` (Server-Sent Events
    from a GET).  ``reply``: each field of the answer and whether it is the
    facade's data (decoded by codec.py) or plain JSON.  ``blocking``: its
    handler runs tmux or git or reads the event log, so a server runs it off its loop.

    A facade call's client method is made from it (facade_client.py
    ``asking``) unless the client keeps a copy for it: the facade method's
    arguments are its fields in order (those the client fills in,
    ``FILLED_IN``, left out), and it returns the reply's one field.
    ``otherwise``: what that method returns, from the service's line, when
    the service refused or did not answer (None: the ``ServiceError`` goes
    to the caller).
    """

    name: str
    method: str
    path: str
    fields: tuple[tuple[str, Kind], ...] = ()
    reply: tuple[tuple[str, bool], ...] = ()  # (field, is the facade's data)
    timeout: str = ASK
    blocking: bool = False
    query: tuple[tuple[str, str], ...] = ()  # fixed query parameters (the stream's form)
    writes: bool = False  # it changes something: a read-only client (the page's ``--read-only``) may not ask it
    otherwise: Callable[[str], Any] | None = None  # the client method's answer when the service gave none (from its line)

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
        from .codec import decode  # the facade's data: loaded by a client that reads it, not by one that asks plain rows

        return {name: decode(reply.get(name)) if facade else reply.get(name) for name, facade in self.reply}


def url_path(call: Call, sent: Mapping[str, Any]) -> str:
    """The path ``call`` asks, with its query (a GET's fields; a POST's go in its body).

    A float is written whole (``repr``): ``format(x, "g")`` keeps six digits, and a time (``waited_today``'s now)
    came out hours off.
    """
    query = list(call.query)
    if call.verb == "GET":
        query += [(name, value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)) for name, value in sent.items() if value is not None]
    return call.path + (f"?{urlencode(query)}" if query else "")
