"""A scripted stand-in for an OpenAI-compatible chat-completions API, for opencode.

opencode reaches it through a provider in its config that uses
``@ai-sdk/openai-compatible`` with ``options.baseURL`` at
``http://127.0.0.1:PORT/v1`` (``opencode_agent.write_config``).  It speaks
``POST /v1/chat/completions`` with ``stream: true`` and reads Server-Sent
Events: ``data: {chunk}`` lines whose ``choices[0].delta`` carries ``content``
or ``tool_calls``, a last chunk with ``finish_reason``, then ``data: [DONE]``.

A test chooses a *script*, one step per turn of opencode's agent loop (a
request that offers tools).  Requests without tools (opencode's title
generation) get a short title and take no step.  When the script runs out,
every further turn is answered ``"Done."``.  Every request is recorded, so a
test can assert what opencode sent back (the ``tool`` message of an approved
command).

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
MODEL = "scripted-model"


@dataclass(frozen=True)
class Step:
    """One scripted answer to one agent-loop request.

    kind: ``text``, ``tool``, ``fail`` (HTTP ``status`` for ``times``
    requests in a row, ``None``: all), ``stall`` (accept, send nothing for
    ``delay`` s).  ``delay`` holds back the first byte; ``seconds`` spreads
    a text over that long (a slow stream: opencode shows its turn running).
    """

    kind: str
    text: str = ""
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    delay: float = 0.0
    seconds: float = 0.0
    status: int = 0
    times: int | None = 1
    usage: dict[str, Any] | None = None  # the reply's ``usage`` (None: 10 in, 5 out)

    @property
    def repeats(self) -> bool:
        return self.kind in ("fail", "stall")


def text(body: str, *, delay: float = 0.0, seconds: float = 0.0, usage: dict[str, Any] | None = None) -> Step:
    return Step("text", text=body, delay=delay, seconds=seconds, usage=usage)


def usage(prompt: int, completion: int, *, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    """An OpenAI-style ``usage``: ``prompt`` tokens in (``cached`` of them from the cache), ``completion`` out (``reasoning`` of them thinking)."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def tool(name: str, tool_input: dict[str, Any], *, preface: str = "") -> Step:
    return Step("tool", text=preface, tool_name=name, tool_input=tool_input)


def bash(command: str, description: str = "Create the marker file") -> Step:
    """opencode's shell tool is ``bash`` with ``command`` and ``description``."""
    return tool("bash", {"command": command, "description": description})


def fail(status: int, *, times: int | None = 1, message: str = "") -> Step:
    """An HTTP error.  opencode retries a 429 or 5xx, and any error whose body
    says "server_error", "rate limit", "overloaded"...; it gives up on a 4xx
    whose body says none of that (the default message here for a 4xx)."""
    default = "scripted server error" if status >= 500 or status == 429 else "The scripted model rejected the request"
    return Step("fail", text=message or default, status=status, times=times)


def stall(*, seconds: float = 600.0, times: int | None = None) -> Step:
    return Step("stall", delay=seconds, times=times)


@dataclass
class Request:
    path: str
    body: dict[str, Any]

    @property
    def is_main(self) -> bool:
        return bool(self.body.get("tools"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        found = self.body.get("messages")
        return found if isinstance(found, list) else []

    def tool_results(self) -> list[str]:
        """The contents of the ``tool`` messages: what opencode sent back from a tool."""
        out = []
        for message in self.messages:
            if message.get("role") == "tool":
                content = message.get("content")
                out.append(content if isinstance(content, str) else json.dumps(content))
        return out


class OpenAICompatibleAPI(ScriptedHTTP[Request, Step]):
    """The scripted server; ``with OpenAICompatibleAPI([...]) as api: api.url``."""

    thread_name = "fake-openai-compatible-api"
    url_path = "/v1"

    def _default_step(self) -> Step:
        return text(DEFAULT_REPLY)

    @property
    def main_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.is_main]

    def _record(self, path: str, body: dict[str, Any]) -> Request:
        return self._keep(Request(path, body))

    def _handler_class(self):
        api = self

        class Handler(JSONHandler):
            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "headspace"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                request = api._record(self.path, body if isinstance(body, dict) else {})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                step = api._next_step() if request.is_main else text("Scripted session")
                try:
                    api._answer(self, request, step)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler

    def _answer(self, handler: BaseHTTPRequestHandler, request: Request, step: Step) -> None:
        if step.kind == "stall":
            time.sleep(step.delay)
            return
        if step.kind == "fail":
            kind = "server_error" if step.status >= 500 else "invalid_request_error"
            handler._json(step.status, {"error": {"message": step.text, "type": kind, "code": step.status}})  # type: ignore[attr-defined]
            return
        if step.delay:
            time.sleep(step.delay)
        ident = f"chatcmpl-{next(self._ids)}"
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> bytes:
            payload: dict[str, Any] = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            if usage is not None:
                payload["usage"] = usage
            return b"data: " + json.dumps(payload).encode() + b"\n\n"

        if not request.body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": step.text}
            if step.kind == "tool":
                message["tool_calls"] = [_call(ident, step)]
            handler._json(
                200,
                {  # type: ignore[attr-defined]
                    "id": ident,
                    "object": "chat.completion",
                    "created": created,
                    "model": MODEL,
                    "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if step.kind == "tool" else "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                },
            )
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        out = handler.wfile
        out.write(chunk({"role": "assistant", "content": ""}))
        out.flush()
        pieces = _pieces(step.text, step.seconds)
        for piece, pause in pieces:
            out.write(chunk({"content": piece}))
            out.flush()
            if pause:
                time.sleep(pause)
        if step.kind == "tool":
            out.write(chunk({"tool_calls": [{"index": 0, **_call(ident, step)}]}))
        usage = step.usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        out.write(chunk({}, "tool_calls" if step.kind == "tool" else "stop", usage))
        out.write(b"data: [DONE]\n\n")
        out.flush()
        handler.close_connection = True


def _call(ident: str, step: Step) -> dict[str, Any]:
    return {"id": f"call_{ident}", "type": "function", "function": {"name": step.tool_name, "arguments": json.dumps(step.tool_input)}}


def _pieces(body: str, seconds: float) -> list[tuple[str, float]]:
    """``body`` in word-sized pieces, spread over ``seconds`` (one piece when 0)."""
    if not body:
        return []
    if seconds <= 0:
        return [(body, 0.0)]
    words = body.split(" ")
    pause = seconds / max(len(words), 1)
    return [(word + (" " if n < len(words) - 1 else ""), pause) for n, word in enumerate(words)]
