"""A scripted stand-in for the Anthropic Messages API, for tests.

The real Claude Code binary talks to it over loopback
(``ANTHROPIC_BASE_URL=http://127.0.0.1:PORT``).  A test chooses a *script*: a
list of steps, one per turn of Claude's main loop.  Each ``POST /v1/messages``
that carries tools (Claude's agent loop) takes the next step; requests without
tools (side calls such as title generation) get a short text and take none.
When the script runs out, every further turn is answered with ``"Done."``.

Every request is recorded, so a test can assert what Claude sent back: the
``tool_result`` of an approved command, the answer picked in a question, the
text of a nudge.

Only the standard library is used, so the server runs in a thread of the test
process and in the recorder alike.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .scripted_http import JSONHandler, ScriptedHTTP

DEFAULT_REPLY = "Done."


@dataclass(frozen=True)
class Step:
    """One scripted answer to one main-loop request.

    kind is ``text``, ``tool``, ``fail`` or ``stall``.  ``delay`` holds the
    response back before the first byte (Claude shows its spinner);
    ``seconds`` spreads a text over that long (Claude shows the text streaming
    in).  A ``fail`` step answers with HTTP ``status``; a ``stall`` step
    accepts the request and sends nothing for ``delay`` seconds.  For both,
    ``times`` says how many requests in a row get that answer (``None``: all
    of them, so Claude keeps retrying).  A ``deferred`` tool is loaded
    through ``ToolSearch`` first when the request does not offer it (newer
    versions defer WebFetch, ExitPlanMode, ...; older ones offer them all).
    """

    kind: str
    text: str = ""
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    delay: float = 0.0
    seconds: float = 0.0
    status: int = 0
    times: int | None = 1
    decide: Callable[[Request], Step] | None = None
    deferred: bool = False
    when: str = ""  # answer every request whose last user message contains this, outside the script's order
    verdict: dict[str, Any] | None = None  # auto mode's server review of this step's tool call (None: not flagged)
    usage: dict[str, int] | None = None  # the reply's token counts as the API reports them (None: 100 in, 20 out)
    also: tuple[Step, ...] = ()  # more tool calls in the same response (parallel calls), each with its own verdict

    @property
    def repeats(self) -> bool:
        return self.kind in ("fail", "stall")


def text(body: str, *, delay: float = 0.0, seconds: float = 0.0, usage: dict[str, int] | None = None) -> Step:
    """Reply with assistant text; ``seconds`` > 0 streams it slowly; ``usage`` the counts the API reports for it (``tokens``)."""
    return Step("text", text=body, delay=delay, seconds=seconds, usage=usage)


def tokens(sent: int, out: int, cache_read: int = 0, cache_write: int = 0) -> dict[str, int]:
    """A reply's usage as the Messages API words it: ``sent`` uncached input tokens, ``out`` output tokens."""
    return {"input_tokens": sent, "output_tokens": out, "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write}


def tool(name: str, tool_input: dict[str, Any], *, preface: str = "", deferred: bool = False, usage: dict[str, int] | None = None) -> Step:
    """Call a tool; ``preface`` is optional text before the tool_use block.

    ``deferred``: when Claude does not offer the tool in this request, load
    it with ``ToolSearch`` first (the step stays until it is offered).
    """
    return Step("tool", text=preface, tool_name=name, tool_input=tool_input, deferred=deferred, usage=usage)


def fail(status: int, *, times: int | None = 1, message: str = "") -> Step:
    """Answer with an HTTP error (429, 500, 529, ...) ``times`` times in a row; ``message`` is the error's words (Claude shows them)."""
    return Step("fail", status=status, times=times, text=message)


def when(needle: str, step: Step) -> Step:
    """Answer every request (main or side) whose last user message contains ``needle`` with ``step``.

    For requests whose place in the conversation a test cannot predict, such
    as the compaction call (its instructions say "Compact Instructions" in
    every version recorded), or a subagent's own loop (its first user message
    is the prompt the main loop gave it).  A ``tool`` step answers only
    requests that offer tools (a side call cannot take a tool_use).
    """
    return dataclasses.replace(step, when=needle)


def flagged(step: Step, explanation: str) -> Step:
    """``step``'s tool call, flagged by auto mode's server review (Claude does not run it and says why)."""
    return dataclasses.replace(step, verdict={"type": "evaluated", "outcome": "flagged", "explanation": explanation})


def unavailable(step: Step, reason: str = "timeout") -> Step:
    """``step``'s tool call, which the review could not judge (``timeout``, ``error``, ``refused``, ...): Claude retries the check."""
    return dataclasses.replace(step, verdict={"type": "unavailable", "reason": reason})


NOT_FLAGGED = {"type": "evaluated", "outcome": "not_flagged"}


def parallel(first: Step, *more: Step) -> Step:
    """Several tool calls in one response, each with its own verdict (auto mode blocking two at once)."""
    return dataclasses.replace(first, also=tuple(more))


def stall(*, seconds: float = 600.0, times: int | None = None) -> Step:
    """Accept the request and send nothing for ``seconds`` (``times`` requests in a row)."""
    return Step("stall", delay=seconds, times=times)


def dynamic(decide: Callable[[Request], Step]) -> Step:
    """A step chosen from the request itself (for values Claude makes up, like a plan file path)."""
    return Step("dynamic", decide=decide)


SKIP = Step("skip")  # what a dynamic step decides when it has nothing to do: play the next step


def write_plan(plan: str) -> Step:
    """In plan mode, write ``plan`` to the plan file Claude named in its system prompt.

    Versions without plan files (2.0.x, early 2.1.x) name none: then the step
    is skipped and the plan travels as ExitPlanMode's ``plan`` argument.
    """

    def decide(req: Request) -> Step:
        match = re.search(r"create your plan at (\S+\.md)", json.dumps(req.body))
        return SKIP if match is None else write(match.group(1), plan)

    return dynamic(decide)


def bash(command: str, description: str = "Run a command") -> Step:
    return tool("Bash", {"command": command, "description": description})


def write(path: str, content: str) -> Step:
    return tool("Write", {"file_path": path, "content": content})


def edit(path: str, old: str, new: str) -> Step:
    return tool("Edit", {"file_path": path, "old_string": old, "new_string": new})


def select_tool(name: str) -> Step:
    """Load a deferred tool (WebFetch, ExitPlanMode, ...) through ToolSearch."""
    return tool("ToolSearch", {"query": f"select:{name}", "max_results": 1})


def web_fetch(url: str, prompt: str = "Summarise the page") -> list[Step]:
    return [tool("WebFetch", {"url": url, "prompt": prompt}, deferred=True)]


def web_search(query: str) -> list[Step]:
    return [tool("WebSearch", {"query": query}, deferred=True)]


def agent(description: str, prompt: str, subagent_type: str = "general-purpose") -> Step:
    """Start a subagent (the ``Agent`` tool, called ``Task`` before 2.1); its own requests carry ``prompt``."""
    return tool("Agent", {"description": description, "prompt": prompt, "subagent_type": subagent_type})


def exit_plan_mode(plan: str | None = None) -> list[Step]:
    """Ask to leave plan mode; ``plan`` is the argument older versions take (newer ones read the plan file)."""
    return [tool("ExitPlanMode", {"plan": plan} if plan is not None else {}, deferred=True)]


def question(
    text_: str,
    options: Iterable[str | tuple[str, str] | tuple[str, str, str]],
    *,
    header: str = "Choice",
    multi_select: bool = False,
) -> dict[str, Any]:
    """One entry of AskUserQuestion's ``questions`` list.

    An option is a label, ``(label, description)``, or ``(label,
    description, preview)``: ``preview`` is the markdown 2.1.x draws in a
    side panel beside the options when that option is focused.
    """
    opts = []
    for opt in options:
        if isinstance(opt, str):
            opt = (opt, f"Pick {opt}")
        entry = {"label": opt[0], "description": opt[1]}
        if len(opt) > 2:
            entry["preview"] = opt[2]
        opts.append(entry)
    return {"question": text_, "header": header, "options": opts, "multiSelect": multi_select}


def ask(*questions: dict[str, Any]) -> Step:
    return tool("AskUserQuestion", {"questions": list(questions)}, deferred=True)


# --------------------------------------------------------------------------
# What Claude sent


@dataclass
class Request:
    """One request as Claude sent it."""

    path: str
    body: dict[str, Any]
    at: float

    @property
    def tool_names(self) -> set[str]:
        return {t.get("name", "") for t in self.body.get("tools") or () if isinstance(t, dict)}

    @property
    def is_main(self) -> bool:
        return self.path.startswith("/v1/messages") and "count_tokens" not in self.path and bool(self.body.get("tools"))

    def last_user_message(self) -> dict[str, Any] | None:
        """The last ``user`` message (the very last one may be a ``system`` one)."""
        for msg in reversed(self.body.get("messages", [])):
            if msg.get("role") == "user":
                return msg
        return None

    def user_blocks(self) -> list[dict[str, Any]]:
        msg = self.last_user_message()
        if msg is None:
            return []
        content = msg.get("content")
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        return list(content or [])

    def tool_results(self) -> list[dict[str, Any]]:
        return [b for b in self.user_blocks() if b.get("type") == "tool_result"]

    def user_text(self) -> str:
        """All plain text of the last user message, joined (system reminders included)."""
        return "\n".join(b.get("text", "") for b in self.user_blocks() if b.get("type") == "text")


def block_text(block: dict[str, Any]) -> str:
    """The text of a tool_result block, whether its content is a string or blocks."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


# --------------------------------------------------------------------------
# The server


class FakeAnthropicAPI(ScriptedHTTP[Request, Step]):
    """A loopback HTTP server that plays a script; use as a context manager."""

    thread_name = "fake-anthropic-api"

    def __init__(self, script: Iterable[Step | list[Step]] = (), *, host: str = "127.0.0.1", review: str = "answer") -> None:
        self._matchers: list[Step] = []
        self.review = review
        super().__init__(script, host=host)

    # -- script -----------------------------------------------------------
    def set_script(self, script: Iterable[Step | list[Step]]) -> None:
        """Replace the steps still to be played (lists are flattened)."""
        steps: list[Step] = []
        for item in script:
            steps.extend(item if isinstance(item, list) else [item])
        with self._lock:
            self._steps = [s for s in steps if not s.when]
            self._matchers = [s for s in steps if s.when]
            self._played = 0

    def extend(self, *steps: Step | list[Step]) -> None:
        with self._lock:
            for item in steps:
                self._steps.extend(item if isinstance(item, list) else [item])

    def _matching(self, req: Request) -> Step | None:
        with self._lock:
            matchers = list(self._matchers)
        if not matchers:
            return None
        last = json.dumps(req.last_user_message() or {})
        return next((m for m in matchers if m.when in last and (m.kind != "tool" or req.is_main)), None)

    def _default_step(self) -> Step:
        return text(DEFAULT_REPLY)

    def _next_step(self, req: Request | None = None) -> Step:
        with self._lock:
            step = self._steps[0] if self._steps else None
            if step is not None and step.deferred and req is not None:
                offered = req.tool_names
                if step.tool_name not in offered and "ToolSearch" in offered:
                    return select_tool(step.tool_name)  # the step stays for the next turn
            return super()._next_step()

    # -- recorded requests --------------------------------------------------
    @property
    def main_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.is_main]

    def _waits_on(self, request: Request) -> bool:
        return request.is_main

    def _seen(self) -> str:
        return "last user blocks seen: " + repr([r.user_blocks()[-1:] for r in self.requests if r.is_main])

    def _record(self, path: str, body: dict[str, Any]) -> Request:
        return self._keep(Request(path=path, body=body, at=time.time()))

    # -- HTTP -------------------------------------------------------------
    def _handler_class(self):
        api = self

        class Handler(JSONHandler):
            def do_GET(self) -> None:
                self._json(200, {})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad json"}})
                    return
                req = api._record(self.path, body)
                if "count_tokens" in self.path:
                    self._json(200, {"input_tokens": 100})
                    return
                step = api._matching(req) or (api._next_step(req) if req.is_main else text("Headspace test session"))
                while step.decide is not None:
                    step = step.decide(req)
                    if step is SKIP:
                        step = api._next_step(req)
                try:
                    api._answer(self, body, step)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # Claude went away mid-stream (the test ended it)

        return Handler

    def _answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], step: Step) -> None:
        if step.kind == "stall":
            time.sleep(step.delay)  # Claude gives up on us first (its timeout), or the test ends
            handler.close_connection = True
            return
        if step.kind == "fail":
            kinds = {401: "authentication_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}
            error_type = kinds.get(step.status, "api_error")
            handler._json(  # type: ignore[attr-defined]
                step.status,
                {"type": "error", "error": {"type": error_type, "message": step.text or error_type.replace("_", " ")}},
                {"retry-after": "1"} if step.status == 429 else None,
            )
            return
        if step.delay:
            time.sleep(step.delay)
        blocks: list[dict[str, Any]] = []
        if step.text:
            blocks.append({"type": "text", "text": step.text})
        verdicts: dict[str, Any] = {}
        if step.kind == "tool":
            for call in (step, *step.also):
                ident = f"toolu_{next(self._ids):06d}"
                verdicts[ident] = call.verdict or NOT_FLAGGED
                blocks.append({"type": "tool_use", "id": ident, "name": call.tool_name, "input": call.tool_input})
        stop_reason = "tool_use" if step.kind == "tool" else "end_turn"
        usage = step.usage or {"input_tokens": 100, "output_tokens": 20}
        message_id = f"msg_{next(self._ids):06d}"
        model = body.get("model", "claude-test")
        if not body.get("stream"):
            handler._json(  # type: ignore[attr-defined]
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.send_header("connection", "close")
        handler.end_headers()
        handler.close_connection = True
        out = handler.wfile

        def event(kind: str, data: dict[str, Any]) -> None:
            out.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
            out.flush()

        event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**usage, "output_tokens": 1},  # the stream's start: the prompt's counts, one token out
                },
            },
        )
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                event("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
                for piece, pause in _chunks(block["text"], step.seconds):
                    event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})
                    if pause:
                        time.sleep(pause)
            else:
                event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}},
                )
                event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
                )
            event("content_block_stop", {"type": "content_block_stop", "index": index})
        delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": None}
        results = self._safeguard_results(body, step, blocks, verdicts)
        if results is not None:
            delta["safeguard_results"] = results
        event("message_delta", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}})
        event("message_stop", {"type": "message_stop"})

    def _safeguard_results(self, body: dict[str, Any], step: Step, blocks: list[dict[str, Any]], verdicts: dict[str, Any] | None = None) -> list[dict[str, Any]] | None:
        """The review of this response's tool calls, when Claude asked for one (auto mode) and this API gives it.

        ``review``: ``answer`` (the API's own reviewer: each call's scripted
        verdict, not flagged by default), ``unsupported`` (the API says it has
        no reviewer) or ``none`` (a gateway that drops the field: Claude stops
        at "Auto mode can't check actions in this session").
        """
        if self.review == "none" or not any(isinstance(s, dict) and s.get("type") == "dangerous_tool_use" for s in body.get("safeguards") or ()):
            return None
        if self.review == "unsupported":
            return [{"type": "dangerous_tool_use", "status": {"type": "unsupported"}}]
        uses = {b["id"]: (verdicts or {}).get(b["id"]) or step.verdict or NOT_FLAGGED for b in blocks if b["type"] == "tool_use"}
        return [{"type": "dangerous_tool_use", "status": {"type": "available", "tool_uses": uses}}]


def _chunks(body: str, seconds: float) -> list[tuple[str, float]]:
    """Split a text into word-sized deltas paced to last about ``seconds``."""
    if seconds <= 0:
        return [(body, 0.0)]
    words = body.split(" ")
    pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
    pause = seconds / max(len(pieces), 1)
    return [(p, pause) for p in pieces]
