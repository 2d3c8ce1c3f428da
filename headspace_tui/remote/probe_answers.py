"""The probe's end of the answer channel: a remote host's answer hooks, relayed over the probe's one pipe.

On a remote host the answer hook (``program.py answer N``) looks for
``answer.sock`` beside the spool there, exactly as here.  The probe opens that
socket with the very class headspace uses locally (``hooks/channel.py``'s
``AnswerChannel``: the private folder, the ``answer.lock`` flock, SO_PEERCRED,
the capped request, the read timeout), on an event loop of its own in a
thread, and relays:

* each request, as a push ``{"push": "answer", "call": N, "record": {...}}``
  (headspace's answer desk decides, as it does locally, whether it belongs to
  a pane it watches; when not, it lets it go at once with ``answer_release``);
* a hook that left by itself (its wait ran out), as ``{"push": "answer_gone",
  "call": N}``;
* ``answer_decide`` and ``answer_release`` back to the waiting hook.

Waiting hooks are let go without a decision (Claude's own dialog stays, and
answers) as soon as the link is gone: when stdin ends (``close``), and when
headspace has said nothing for ``SILENCE`` seconds while calls wait, which is
what a half-open link looks like from here (headspace sends ``answer_beat``
every couple of seconds while it holds calls; see remote/answers.py).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..hooks.calls import PendingCall
from ..hooks.channel import AnswerChannel, ChannelTaken, ChannelUnavailable, socket_path

SILENCE = 6.0  # seconds without a word from headspace after which waiting hooks are let go (the keepalive window)
LOOK = 0.5  # how often the silence is looked at while calls wait
OPS = ("answer_open", "answer_decide", "answer_release", "answer_beat", "answer_close")


def as_record(call: PendingCall) -> dict[str, Any]:
    """The call as the hook's record again: what ``PendingCall.from_payload`` reads on headspace's side."""
    return {
        "hook_event_name": "PermissionRequest",
        "tmux_pane": call.pane_id,
        "pid": call.pid,
        "session_id": call.session_id,
        "tool_name": call.tool_name,
        "tool_input": call.tool_input,
        "cwd": call.cwd,
        "arrived": call.arrived,
    }


class AnswerRelay:
    """The answer socket on this (remote) host, and its calls, for the probe's requests and pushes."""

    def __init__(self, send: Callable[[dict[str, Any]], None], silence: float = SILENCE) -> None:
        self._send = send
        self.silence = silence
        self._loop: asyncio.AbstractEventLoop | None = None
        self._start = threading.Lock()
        self._channel: AnswerChannel | None = None
        self._watch: asyncio.Future | None = None
        self._heard = time.monotonic()  # the last word from headspace (any request)
        self._arrived = 0.0  # when the newest call came

    def heard(self) -> None:
        """headspace said something (the probe's reader calls this for every request)."""
        self._heard = time.monotonic()

    # -- requests, from the probe's reader thread -----------------------------------------
    def handle(self, op: str, request: dict[str, Any]) -> Any:
        if op == "answer_open":
            return self._run(self._open(socket_path(Path(request["spool"]))))
        if op == "answer_decide":
            return self._run(self._reply(int(request["call"]), request.get("decision")))
        if op == "answer_release":
            return self._run(self._reply(int(request["call"]), None))
        if op == "answer_beat":  # the calls still waiting: headspace forgets any other (released here meanwhile)
            return self._run(self._waiting())
        if op == "answer_close":
            self.close()
            return True
        raise ValueError(f"unknown op {op!r}")

    def close(self) -> None:
        """Let every waiting hook go and stop listening (stdin ended, or headspace asked)."""
        if self._loop is not None:
            self._run(self._close())

    def _run(self, coroutine, timeout: float = 10.0) -> Any:
        with self._start:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="answer-relay", daemon=True).start()
                self._loop = loop
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    # -- on the relay's loop ---------------------------------------------------------------
    async def _open(self, path: Path) -> dict[str, Any]:
        if self._channel is not None:
            if self._channel.path == path:
                return {"open": True, "path": str(path)}
            await self._close()  # Claude's spool moved (another environment): one socket, where the hooks look now
        channel = AnswerChannel(path, accept=self._accept, on_gone=self._gone)
        try:
            await channel.start()
        except ChannelUnavailable as exc:
            return {"open": False, "problem": str(exc), "taken": isinstance(exc, ChannelTaken)}
        self._channel = channel
        return {"open": True, "path": str(path)}

    async def _close(self) -> None:
        channel, self._channel = self._channel, None
        if channel is not None:
            await channel.close()  # every waiting hook gets "no decision"

    async def _waiting(self) -> list[int]:
        return sorted(self._channel.calls) if self._channel is not None else []

    async def _reply(self, call_id: int, decision: Any) -> bool:
        channel = self._channel
        if channel is None:
            return False
        if isinstance(decision, dict):
            return channel.decide(call_id, decision)
        return channel.release(call_id)

    def _accept(self, call: PendingCall) -> bool:
        self._arrived = time.monotonic()
        if self._watch is None or self._watch.done():  # only while calls wait: an idle probe never wakes for it
            self._watch = asyncio.ensure_future(self._watch_silence())
        self._send({"push": "answer", "call": call.id, "record": as_record(call)})
        return True  # headspace's desk decides; a call it does not want is released at once

    def _gone(self, call: PendingCall) -> None:
        self._send({"push": "answer_gone", "call": call.id})

    async def _watch_silence(self) -> None:
        """Let waiting hooks go when headspace has been silent past the keepalive window (a half-open link)."""
        while True:
            await asyncio.sleep(LOOK)
            channel = self._channel
            if channel is None or not channel.calls:
                return  # none waits: looked at again when the next one comes
            if time.monotonic() - max(self._heard, self._arrived) > self.silence:
                for call_id in list(channel.calls):
                    channel.release(call_id)
