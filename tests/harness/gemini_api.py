"""A scripted stand-in for the Gemini API (``generativelanguage``), for tests.

Gemini CLI talks to it over loopback when started with
``GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT`` and an API key (measured on
0.53.0 and 0.61.0: every model call goes there, nothing else is asked).
The calls it makes:

- ``POST /v1beta/models/<m>:streamGenerateContent?alt=sse``: the agent loop.
  Each request with ``tools`` in its body takes the next scripted step; the
  answer is server-sent events, one ``data: {"candidates": [...]}`` per chunk,
  the last with ``finishReason``.
- ``POST /v1beta/models/<m>:generateContent``: side calls (the model router,
  the "next speaker" check, loop detection): answered with a short JSON text
  that reads as "the user speaks next", taking no step.
- ``POST .../countTokens``: a count.

A step is a plain reply (optionally streamed slowly: the agent shows its
working line), a ``functionCall`` (``run_shell_command`` for a command that
writes, which the agent asks approval for), an HTTP error ``times`` times in
a row (the agent retries 429/5xx, gives up on a 400 at once), or a stall.
Every request is recorded, so a test can assert the ``functionResponse`` of
an approved command reached the API.

Standard library only: it runs in a thread of the test or the recorder.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .scripted_http import JSONHandler, ScriptedHTTP

DEFAULT_REPLY = "Done."


@dataclass(frozen=True)
class Step:
    """One scripted answer to one agent-loop request.

    ``kind``: ``text``, ``call`` (a functionCall), ``fail`` (HTTP ``status``,
    ``times`` requests in a row; None: for ever) or ``stall`` (accept, send
    nothing for ``delay`` s).  ``seconds`` spreads a text over that long.
    """

    kind: str
    text: str = ""
    name: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    delay: float = 0.0
    seconds: float = 0.0
    status: int = 0
    message: str = ""
    times: int | None = 1
    usage: dict[str, Any] | None = None  # the reply's ``usageMetadata`` (None: 100 in, 10 out)

    @property
    def repeats(self) -> bool:
        return self.kind in ("fail", "stall")


def text(body: str, *, delay: float = 0.0, seconds: float = 0.0, usage: dict[str, Any] | None = None) -> Step:
    return Step("text", text=body, delay=delay, seconds=seconds, usage=usage)


def usage(prompt: int, output: int, *, cached: int = 0, thoughts: int = 0, tool: int = 0) -> dict[str, Any]:
    """A ``usageMetadata``: ``prompt`` tokens in (``cached`` of them from the cache), ``output`` out, ``thoughts`` thinking."""
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "cachedContentTokenCount": cached,
        "thoughtsTokenCount": thoughts,
        "toolUsePromptTokenCount": tool,
        "totalTokenCount": prompt + output + thoughts + tool,
    }


def call(name: str, args: dict[str, Any], *, preface: str = "") -> Step:
    return Step("call", text=preface, name=name, args=args)


def shell(command: str, description: str = "Run a command") -> Step:
    """The agent's shell tool (``run_shell_command``): asks approval in the default mode."""
    return call("run_shell_command", {"command": command, "description": description})


def write_file(path: str, content: str) -> Step:
    return call("write_file", {"file_path": path, "content": content})


def fail(status: int, message: str = "", *, times: int | None = 1) -> Step:
    return Step("fail", status=status, message=message, times=times)


def stall(seconds: float = 600.0) -> Step:
    return Step("stall", delay=seconds, times=None)


_STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


@dataclass
class Request:
    """One request as the scripted API received it."""

    path: str
    body: dict[str, Any]
    at: float = field(default_factory=time.monotonic)

    @property
    def is_loop(self) -> bool:
        """The agent loop's own call (streams, offers tools), not a side call."""
        return ":streamGenerateContent" in self.path and bool(self.body.get("tools"))

    @property
    def contents(self) -> list[dict[str, Any]]:
        contents = self.body.get("contents")
        return contents if isinstance(contents, list) else []

    def function_responses(self) -> list[dict[str, Any]]:
        """Every ``functionResponse`` part of the last user turn (a tool's result)."""
        for content in reversed(self.contents):
            if content.get("role") == "user":
                return [p["functionResponse"] for p in content.get("parts", []) if isinstance(p, dict) and "functionResponse" in p]
        return []

    def user_text(self) -> str:
        for content in reversed(self.contents):
            if content.get("role") == "user":
                return "".join(p.get("text", "") for p in content.get("parts", []) if isinstance(p, dict))
        return ""


class FakeGeminiAPI(ScriptedHTTP[Request, Step]):
    """The scripted API server (a thread); ``url`` is its base URL."""

    thread_name = "fake-gemini-api"

    def _default_step(self) -> Step:
        return text(DEFAULT_REPLY)

    @property
    def loop_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.is_loop]

    def _record(self, path: str, body: dict[str, Any]) -> Request:
        return self._keep(Request(path, body))

    def _handler_class(self):  # type: ignore[no-untyped-def]
        api = self

        class Handler(JSONHandler):
            def do_GET(self) -> None:
                api._record(self.path, {})
                self._json(200, {"models": [{"name": "models/gemini-2.5-pro"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                req = api._record(self.path, body if isinstance(body, dict) else {})
                if ":countTokens" in self.path:
                    self._json(200, {"totalTokens": 42})
                elif req.is_loop:
                    api._answer(self, api._next_step())
                elif ":streamGenerateContent" in self.path:
                    api._answer(self, text(DEFAULT_REPLY))
                else:  # a side call: the router, the next-speaker check
                    self._json(200, _candidate_payload([{"text": _side_answer(req)}], finish=True))

        return Handler

    def _answer(self, handler: BaseHTTPRequestHandler, step: Step) -> None:
        if step.kind == "stall":
            time.sleep(step.delay)
            return
        if step.kind == "fail":
            status = step.status
            payload = {"error": {"code": status, "message": step.message or f"scripted error {status}", "status": _STATUS_NAMES.get(status, "UNKNOWN")}}
            handler._json(status, payload)  # type: ignore[attr-defined]
            return
        if step.delay:
            time.sleep(step.delay)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()

        def event(parts: list[dict[str, Any]], finish: bool) -> None:
            handler.wfile.write(b"data: " + json.dumps(_candidate_payload(parts, finish=finish, usage=step.usage)).encode() + b"\r\n\r\n")
            handler.wfile.flush()

        try:
            if step.kind == "call":
                if step.text:
                    event([{"text": step.text}], False)
                event([{"functionCall": {"name": step.name, "args": step.args}}], True)
            else:
                pieces = _chunks(step.text, step.seconds)
                for i, (piece, pause) in enumerate(pieces):
                    event([{"text": piece}], i == len(pieces) - 1)
                    if pause:
                        time.sleep(pause)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the agent gave up on the stream (Esc): nothing to tell it
        handler.close_connection = True


def _candidate_payload(parts: list[dict[str, Any]], *, finish: bool, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    payload: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-2.5-pro"}
    if finish:
        payload["usageMetadata"] = usage or {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}
    return payload


def _side_answer(req: Request) -> str:
    """A side call's JSON answer: the next-speaker check hears "user", the router "flash"."""
    raw = json.dumps(req.body)
    if "next_speaker" in raw:
        return json.dumps({"reasoning": "The model asked or answered; the user speaks next.", "next_speaker": "user"})
    if "model_choice" in raw:
        return json.dumps({"reasoning": "simple", "model_choice": "flash"})
    return "{}"


def _chunks(body: str, seconds: float) -> list[tuple[str, float]]:
    """``body`` in word-sized pieces with the pause after each, spread over ``seconds``."""
    if seconds <= 0 or not body:
        return [(body, 0.0)]
    words = body.split(" ")
    pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
    pause = seconds / max(1, len(pieces))
    return [(p, pause) for p in pieces]
