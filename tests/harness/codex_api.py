"""A scripted stand-in for the OpenAI Responses API, for Codex CLI tests.

Codex is pointed at it as a custom model provider (``model_providers.NAME``
with ``base_url = "http://127.0.0.1:PORT/v1"`` and ``wire_api =
"responses"``, see ``codex_agent.py``).  What Codex sends, measured on
0.169.0 and 0.144.0 by logging every request:

* ``POST /v1/responses`` with ``"stream": true``, ``Accept:
  text/event-stream`` and ``Authorization: Bearer $<env_key>``.  The turn's
  request carries ``tools`` (``exec_command``, ``write_stdin``,
  ``request_user_input``, the agent tools, ...); a side request for the
  thread's title carries none and a ``text.format`` JSON schema
  (``{"title": ...}``).  Tool results come back as ``function_call_output``
  items in ``input``.
* It reads the SSE events ``response.created``,
  ``response.output_item.added``, ``response.output_text.delta``,
  ``response.output_item.done`` (a ``message`` or a ``function_call``) and
  ``response.completed`` (with ``usage``).
* An HTTP 5xx (or 429) is retried (``request_max_retries``, set low in the
  provider so a test does not wait long); a 4xx other than 429 is not: Codex
  shows the error and ends the turn.

A script is a list of steps, one per turn request (side requests take none);
when it runs out every turn is answered ``"Done."``.  Every request is
recorded, so a test can assert that an approved command's output arrived.
Standard library only: it runs in a thread of the test process and in the
recorder alike.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .scripted_http import JSONHandler, ScriptedHTTP

DEFAULT_REPLY = "Done."
USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 15,
}


@dataclass(frozen=True)
class Step:
    """One scripted answer to one turn request.

    kind ``text`` (``seconds`` spreads it over that long; ``delay`` holds
    the first byte back), ``call`` (a function call: ``name`` and
    ``arguments``), ``fail`` (HTTP ``status`` with ``message``, ``times``
    requests in a row, ``None``: all of them) or ``stall`` (accept, then
    send nothing for ``delay`` seconds).
    """

    kind: str
    text: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    delay: float = 0.0
    seconds: float = 0.0
    status: int = 0
    message: str = ""
    times: int | None = 1
    usage: dict[str, Any] | None = None  # the reply's ``usage`` (None: USAGE)

    @property
    def repeats(self) -> bool:
        return self.kind in ("fail", "stall")


def text(body: str, *, delay: float = 0.0, seconds: float = 0.0, usage: dict[str, Any] | None = None) -> Step:
    return Step("text", text=body, delay=delay, seconds=seconds, usage=usage)


def usage(prompt: int, output: int, *, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    """A Responses API ``usage``: ``prompt`` tokens in (``cached`` of them from the cache), ``output`` out (``reasoning`` of them thinking)."""
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": prompt + output,
    }


def command(cmd: str, *, justification: str = "", escalated: bool = True) -> Step:
    """Run ``cmd`` through ``exec_command``; ``escalated`` asks to leave the sandbox (so Codex asks you first)."""
    arguments: dict[str, Any] = {"cmd": cmd}
    if escalated:
        arguments["sandbox_permissions"] = "require_escalated"
        arguments["justification"] = justification or f"Do you want me to run `{cmd}`?"
    return Step("call", name="exec_command", arguments=arguments)


def fail(status: int, message: str = "The scripted API failed this request.", *, times: int | None = 1) -> Step:
    return Step("fail", status=status, message=message, times=times)


def stall(*, seconds: float = 600.0, times: int | None = None) -> Step:
    return Step("stall", delay=seconds, times=times)


@dataclass
class Request:
    """One request as Codex sent it."""

    path: str
    body: dict[str, Any]
    at: float

    @property
    def is_turn(self) -> bool:
        """The agent loop's request (it offers tools); a title request offers none."""
        return self.path.endswith("/responses") and bool(self.body.get("tools"))

    def items(self) -> list[dict[str, Any]]:
        found = self.body.get("input")
        return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []

    def tool_outputs(self) -> list[dict[str, Any]]:
        """The ``function_call_output`` items after the last user message (this turn's tool results)."""
        outputs: list[dict[str, Any]] = []
        for item in self.items():
            if item.get("type") == "message" and item.get("role") == "user":
                outputs = []
            elif item.get("type") == "function_call_output":
                outputs.append(item)
        return outputs

    def user_text(self) -> str:
        """The text of the last user message."""
        for item in reversed(self.items()):
            if item.get("type") == "message" and item.get("role") == "user":
                content = item.get("content")
                if isinstance(content, str):
                    return content
                return "\n".join(str(c.get("text", "")) for c in content or () if isinstance(c, dict))
        return ""


class FakeResponsesAPI(ScriptedHTTP[Request, Step]):
    """A loopback HTTP server that plays a script; use as a context manager."""

    thread_name = "fake-responses-api"
    url_path = "/v1"

    def _default_step(self) -> Step:
        return text(DEFAULT_REPLY)

    @property
    def turn_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.is_turn]

    def _waits_on(self, request: Request) -> bool:
        return request.is_turn

    def _seen(self) -> str:
        return "last items seen: " + repr([r.items()[-1:] for r in self.requests if r.is_turn])

    def _record(self, path: str, body: dict[str, Any]) -> Request:
        return self._keep(Request(path=path, body=body, at=time.time()))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(JSONHandler):
            def do_GET(self) -> None:  # /v1/models: nothing to offer
                self._json(200, {"object": "list", "data": []})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._json(400, {"error": {"message": "bad json", "type": "invalid_request_error"}})
                    return
                req = api._record(self.path, body if isinstance(body, dict) else {})
                if not req.is_turn:
                    self._stream(Step("text", text=json.dumps({"title": "Scripted task"})))
                    return
                step = api._next_step()
                if step.kind == "fail":
                    self._json(step.status, {"error": {"message": step.message, "type": "server_error" if step.status >= 500 else "invalid_request_error", "code": None}})
                    return
                if step.kind == "stall":
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    time.sleep(step.delay)
                    self.close_connection = True
                    return
                self._stream(step)

            def _event(self, event: dict[str, Any]) -> None:
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()

            def _stream(self, step: Step) -> None:
                n = next(api._ids)
                if step.delay:
                    time.sleep(step.delay)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                rid = f"resp_{n}"
                self._event({"type": "response.created", "response": {"id": rid, "status": "in_progress", "output": []}})
                if step.kind == "call":
                    item: dict[str, Any] = {
                        "id": f"fc_{n}",
                        "type": "function_call",
                        "status": "completed",
                        "name": step.name,
                        "arguments": json.dumps(step.arguments),
                        "call_id": f"call_{n}",
                    }
                    self._event({"type": "response.output_item.added", "output_index": 0, "item": item})
                else:
                    item = {"id": f"msg_{n}", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
                    self._event({"type": "response.output_item.added", "output_index": 0, "item": item})
                    words = step.text.split(" ")
                    pause = step.seconds / max(1, len(words))
                    for i, word in enumerate(words):
                        delta = word if i == len(words) - 1 else word + " "
                        self._event({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": delta})
                        if pause:
                            time.sleep(pause)
                    item = {**item, "status": "completed", "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
                self._event({"type": "response.output_item.done", "output_index": 0, "item": item})
                self._event({"type": "response.completed", "response": {"id": rid, "status": "completed", "output": [item], "usage": step.usage or USAGE}})
                self.close_connection = True

        return Handler
