"""Asking the running service, from the command line: HTTP/1.1 over its Unix socket, with the standard library.

The service speaks HTTP (aiohttp, server.py); a one-shot command needs only
a request and its JSON answer, so it uses ``http.client`` on a Unix socket
and does not pay for importing an async HTTP stack.  Every failure is a
``ServiceError`` in one line: the caller then reads for itself.

Before a socket is trusted, its folder must be private (place.make_folder's
rules, checked here without creating anything) and the socket this user's.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import stat
import time
from typing import Any

from .. import __version__
from ..api import timeouts
from ..api.call import url_path
from ..api.errors import Lost, NotServing, Refused, ServiceError
from ..api.own_calls import OWN
from ..api.row_keys import well_formed
from ..shared.resident_place import Place, is_held, place_of
from ..shared.safe_files import is_private_dir

MAX_ANSWER = 8 << 20  # bytes: a hundred agents' rows are a few hundred KB


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def _check(place: Place) -> None:
    for folder in (place.folder.parent, place.folder):
        problem = is_private_dir(folder)
        if problem:
            raise ServiceError(f"not asking the service: {problem}")
    try:
        info = os.lstat(place.socket)
    except OSError:
        raise ServiceError("no service runs") from None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        raise ServiceError(f"not asking the service: {place.socket} is not a socket of yours")


def request(place: Place, method: str, path: str, *, timeout: float = timeouts.REQUEST, body: Any = None) -> Any:
    """One request to the service at ``place``; its JSON answer, all of it within ``timeout``.

    ServiceError when it could not be asked, Lost when it was asked and did
    not answer, Refused when it answered with an error.
    """
    _check(place)
    deadline = time.monotonic() + timeout
    connection = _UnixConnection(str(place.socket), timeout)
    headers = {"Accept": "application/json", "X-Headspace-Version": __version__}
    data = json.dumps(body).encode() if body is not None else None
    if data is not None:
        headers["Content-Type"] = "application/json"
    try:
        connection.connect()
    except OSError as exc:
        connection.close()
        raise ServiceError(f"the service did not answer: {exc}") from None
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        chunks, size = [], 0
        while True:  # a service that answers a byte at a time still ends by the deadline
            left = deadline - time.monotonic()
            if left <= 0:
                raise ServiceError(f"the service did not answer within {timeout:g}s")
            if connection.sock is not None:
                connection.sock.settimeout(left)
            chunk = response.read1(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_ANSWER:
                raise ServiceError("the service's answer is too large")
            chunks.append(chunk)
    except ServiceError as exc:
        raise Lost(str(exc)) from None
    except (OSError, http.client.HTTPException) as exc:
        raise Lost(f"the service did not answer: {exc}") from None
    finally:
        connection.close()
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        raise Lost(f"the service's answer is not JSON (HTTP {response.status})") from None
    if response.status != 200:
        error = answer.get("error") if isinstance(answer, dict) else None
        raise Refused(str(error) if isinstance(error, str) and error else f"HTTP {response.status}")
    return answer


def ask(place: Place, name: str, fields: dict[str, Any] | None = None, *, timeout: float = timeouts.REQUEST) -> Any:
    """The service's own call ``name`` (own_calls.py) with ``fields``: a GET's in its query, a POST's as its body; its JSON answer."""
    call = OWN[name]
    sent = call.put(fields or {})
    path = url_path(call, sent)
    return request(place, call.verb, path, timeout=timeout, body=sent if call.verb == "POST" else None)


def hello(place: Place) -> dict[str, Any]:
    """The service's card (version, pid, server, watched hosts); ServiceError when none answers."""
    if not is_held(place):
        raise NotServing("no service runs")
    card = ask(place, "hello")
    if not isinstance(card, dict):
        raise ServiceError("the service's hello is not a card")
    return card


def same_version(place: Place) -> dict[str, Any]:
    """``hello``, from a service of this version; an older one is stopped (an upgrade never leaves an old one answering).

    A newer one is left running (an older copy of headspace must not end
    it): this command then reads for itself.
    """
    card = hello(place)
    version = card.get("version")
    if version != __version__:
        if older(version, __version__):
            stop(place)
            raise NotServing(f"the service ran version {version}, older than this {__version__}: stopped it")
        raise NotServing(f"the service runs version {version}, this is {__version__}")
    return card


def older(version: object, than: str) -> bool:
    """Whether ``version`` is an older release than ``than`` (by their leading numbers); unknown or unreadable: not older."""

    def numbers(text: str) -> tuple[int, ...]:
        parts = []
        for part in text.split(".")[:6]:
            digits = re.match(r"\d{1,9}", part)
            if digits is None:
                break
            parts.append(int(digits.group()))
            if digits.end() != len(part):
                break  # "1rc2", "1-old": the number, then nothing more
        return tuple(parts)

    if not isinstance(version, str) or not version:
        return False
    mine, theirs = numbers(than), numbers(version)
    return bool(mine and theirs) and theirs < mine


def asked_place(server_key: str, config: str | None = None) -> Place:
    """The place of the service of ``server_key`` when it may be asked: of this version (``same_version``) and reading ``config`` (a resolved path; None: the default one, as a plain command reads)."""
    place = place_of(server_key)
    card = same_version(place)
    if card.get("config") != config:
        raise NotServing(f"the service reads {_config_words(card.get('config'))}, not {_config_words(config)}")
    return place


def _config_words(config: object) -> str:
    return f"the config {config}" if config is not None else "the default config"


def ask_rows(server_key: str, config: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Every agent's row as the service of the tmux server ``server_key`` has them (api/rows.py), and one line per host with a problem.

    Only from a service of this version that reads ``config`` (a resolved
    path; None: the default one, what a plain ``status`` reads); a wrong
    answer is a ServiceError, never a crash.
    """
    place = asked_place(server_key, config)
    return rows_of(ask(place, "rows", {"settle": timeouts.SETTLE}, timeout=timeouts.SETTLE + timeouts.REQUEST))


def rows_of(answer: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows and the hosts' problems of a ``rows`` answer, whichever service gave it (resident, or a look in this process); ServiceError when it is not that."""
    rows, problems = (answer.get("agents"), answer.get("problems")) if isinstance(answer, dict) else (None, None)
    if not isinstance(rows, list) or not all(well_formed(row) for row in rows) or not isinstance(problems, list):
        raise ServiceError("the service's agents are not rows")
    return rows, [str(problem) for problem in problems]


def ask_rules(place: Place, action: str, rule: str = "", host: str = "") -> str:
    """Pause, resume or revoke rules through the service at ``place`` (what it said); Refused with its reason when it changed nothing."""
    answer = ask(place, "rules", {"action": action, "rule": rule, "host": host})
    said = answer.get("said") if isinstance(answer, dict) else None
    if not isinstance(said, str):
        raise ServiceError("the service's answer is not a line")
    return said


def ask_start_on_host(place: Place, host: str, folder: str, args: list[str], session: str) -> dict[str, str]:
    """``new --host``: start an agent on ``host`` through the service at ``place``, which watches it; where it runs (Refused: why not)."""
    answer = ask(place, "start_on_host", {"host": host, "folder": folder, "args": args, "session": session}, timeout=timeouts.LIFECYCLE + timeouts.REQUEST)
    if not (isinstance(answer, dict) and all(isinstance(answer.get(k), str) for k in ("pane", "target", "cwd"))):
        raise ServiceError("the service's answer is not where the agent runs")
    return {k: str(answer[k]) for k in ("pane", "target", "cwd")}


def stop(place: Place, *, wait: float = 10.0) -> bool:
    """Ask the service to end and wait until it has let go of its lock; True when none runs any more."""
    try:
        ask(place, "stop")
    except ServiceError:
        pass  # it may be going already: what counts is the lock
    deadline = time.monotonic() + wait
    while is_held(place):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def ask_answer(place: Place, pane_id: str, intent: str, *, option: str = "", text: str = "", expect: str | None = None) -> tuple[str, bool, str]:
    """Answer the agent in ``pane_id`` through the service at ``place`` (its one answerer and guard); (its target, delivered, what it says).

    Refused (the service's guard said no), Lost (asked, and no answer came
    back: the answer may have gone), ServiceError (it could not be asked).
    """
    body = {"pane_id": pane_id, "intent": intent, "option": option, "text": text, "expect": expect}
    return answer_of(ask(place, "answer_and_report", body, timeout=timeouts.ANSWER_ASKED))


def answer_of(answer: Any) -> tuple[str, bool, str]:
    """(target, delivered, what it says) of an ``answer_and_report`` answer, whichever service gave it; Lost when it is not a report (the answer may have gone)."""
    if not isinstance(answer, dict) or not isinstance(answer.get("delivered"), bool) or not all(isinstance(answer.get(k), str) for k in ("detail", "target")):
        raise Lost("the service's answer is not a report")
    return answer["target"], answer["delivered"], answer["detail"]
