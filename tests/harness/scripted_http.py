"""The plumbing every scripted model API of the tests shares; each keeps its own wire format.

Claude Code (``fake_api``, the Messages API), Codex CLI (``codex_api``, the
Responses API), Gemini CLI (``gemini_api``, the Gemini streaming API) and
opencode (``opencode_api``, OpenAI's chat completions) are each pointed at a
loopback HTTP server that plays a script of steps.  What is the same for
all of them is here, once: the threaded loopback server and its
start/close/context manager, the lock, the steps still to play
(``set_script``/``extend``), the recorded requests and ``wait_for`` one, and
a request handler that answers JSON and keeps test output clean.

What a step means, how repeats are counted, which requests are the agent
loop's and what is streamed back stay in each API's own module.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar

R = TypeVar("R")  # an API's recorded request
S = TypeVar("S")  # an API's script step


class RequestTimeout(TimeoutError, AssertionError):
    """No recorded request matched in time (an AssertionError too, so a test reads it as a failed check)."""


class JSONHandler(BaseHTTPRequestHandler):
    """The base of every scripted API's request handler: HTTP/1.1, quiet, answers JSON with ``_json``."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


class ScriptedHTTP(Generic[R, S]):
    """A loopback HTTP server (a thread) that plays a script and records what it was sent; use as a context manager.

    A subclass gives ``_handler_class`` (its wire format), and may narrow
    which requests ``wait_for`` looks at (``_waits_on``) and what its
    timeout says was seen (``_seen``).
    """

    thread_name = "scripted-api"
    url_path = ""  # appended to http://host:port (e.g. "/v1")

    def __init__(self, script: Iterable[Any] = (), *, host: str = "127.0.0.1") -> None:
        # Re-entrant: a wait_for predicate may read the recorded requests under the lock.
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._steps: list[S] = []
        self._played = 0  # how many requests the repeating step at the head of the script has answered
        self.requests: list[R] = []
        self._ids = itertools.count(1)
        self.set_script(script)
        self._server = ThreadingHTTPServer((host, 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name=self.thread_name, daemon=True)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    # -- lifecycle --------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.url_path}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- script -----------------------------------------------------------
    def set_script(self, script: Iterable[Any]) -> None:
        """Replace the steps still to be played."""
        with self._lock:
            self._steps = list(script)
            self._played = 0

    def _default_step(self) -> S:
        """What answers once the script has run out (each API's plain "Done.")."""
        raise NotImplementedError

    def _next_step(self) -> S:
        """The step that answers the next agent-loop request.

        A repeating step (``step.repeats``: a failure or a stall) answers
        ``step.times`` requests in a row (None: for ever) before the script
        moves on; any other step answers one.
        """
        with self._lock:
            if not self._steps:
                return self._default_step()
            step = self._steps[0]
            if step.repeats:  # type: ignore[attr-defined]
                self._played += 1
                times = step.times  # type: ignore[attr-defined]
                if times is not None and self._played >= times:
                    self._steps.pop(0)
                    self._played = 0
                return step
            return self._steps.pop(0)

    def extend(self, *steps: S) -> None:
        with self._lock:
            self._steps.extend(steps)

    @property
    def pending_steps(self) -> int:
        with self._lock:
            return len(self._steps)

    # -- recorded requests --------------------------------------------------
    def _keep(self, request: R) -> R:
        """Record a request and wake whoever waits for one."""
        with self._changed:
            self.requests.append(request)
            self._changed.notify_all()
        return request

    def _waits_on(self, request: R) -> bool:
        """Which recorded requests ``wait_for`` looks at (all, unless a subclass narrows it to the agent loop's)."""
        return True

    def _seen(self) -> str:
        """What a ``wait_for`` timeout reports was seen instead."""
        return "paths seen: " + repr([getattr(r, "path", r) for r in self.requests if self._waits_on(r)])

    def seen(self, predicate: Callable[[R], bool]) -> bool:
        """A recorded request satisfies ``predicate`` now (no wait): a condition for a test's own polling loop."""
        with self._changed:
            return any(self._waits_on(request) and predicate(request) for request in self.requests)

    def wait_for(self, predicate: Callable[[R], bool], timeout: float = 30.0) -> R:
        """Block until a recorded request satisfies ``predicate``; return it (RequestTimeout if none in ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for request in self.requests:
                    if self._waits_on(request) and predicate(request):
                        return request
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RequestTimeout(f"no matching request within {timeout}s; {self._seen()}")
                self._changed.wait(left)
