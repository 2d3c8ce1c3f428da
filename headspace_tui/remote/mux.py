"""Headspace's side of the probe's tmux streams: a control client's pipes, carried on the probe's channel.

A ``MuxPipe`` is what ``ControlClient`` reads and writes for a remote
session when the host's probe runs (probe_tmux.py starts the ``tmux -C``
there); it behaves like the pipes of a ``tmux -C`` child (control_pipe.py),
so the client's parsing and pacing are the same code for both.

Memory stays bounded: the probe sends at most ``probe_tmux.WINDOW`` bytes
of a stream before headspace acknowledges them, and headspace acknowledges
only while that stream's unread bytes stay under the control client's own
line limit, so a stream nobody reads stops its tmux client there (and tmux
pauses the panes) instead of filling this process.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import concurrent.futures
import itertools
import os
from collections.abc import Callable
from typing import Any, Protocol

from ..tmux.control_pipe import LINE_LIMIT
from ..tmux.server import CONTROL_ENV, TmuxUnavailable
from .probe_tmux import WINDOW

ACK_EVERY = WINDOW // 4  # bytes taken before they are acknowledged (fewer, smaller acks than one per chunk)


class Carrier(Protocol):
    """The probe's channel, as the streams need it (``host.ProbeClient``)."""

    @property
    def running(self) -> bool: ...

    async def call(self, op: str, timeout: float = ..., **args: Any) -> Any: ...

    def notify(self, op: str, **args: Any) -> None: ...

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None: ...

    async def drain(self) -> None: ...


class MuxPipe:
    """One remote control client's bytes: ``readline`` as ``asyncio.StreamReader``'s, ``write``/``drain``/``end``."""

    def __init__(self, number: int, carrier: Carrier, on_end: Callable[[int], None], limit: int = LINE_LIMIT) -> None:
        self.number = number
        self._carrier = carrier
        self._on_end = on_end
        self._limit = limit
        self._buffer = bytearray()
        self._arrived = asyncio.Event()
        self._eof = False
        self._skipping = False  # the rest of a line past the limit is dropped up to its newline
        self._searched = 0  # how far the buffer is known to hold no newline
        self._unacknowledged = 0
        self.ended = False
        self.received = 0  # bytes carried so far (for measurements)

    # -- what the probe sends -----------------------------------------------------
    def feed(self, data: bytes) -> None:
        if self._eof:
            return
        self._buffer += data
        self.received += len(data)
        self._unacknowledged += len(data)
        self._arrived.set()
        self._acknowledge()

    def feed_eof(self) -> None:
        self._eof = True
        self._arrived.set()
        if not self.ended:
            self.ended = True
            self._on_end(self.number)

    def _acknowledge(self) -> None:
        # Only while the unread bytes fit the line limit: a reader that stops reading stops the stream.
        if self._unacknowledged >= ACK_EVERY and len(self._buffer) <= self._limit and self._carrier.running and not self._eof:
            size, self._unacknowledged = self._unacknowledged, 0
            try:
                self._carrier.notify("ctl_ack", ch=self.number, n=size)
            except (ConnectionError, RuntimeError):
                pass

    # -- what the control client reads ------------------------------------------------
    @property
    def stdout(self) -> MuxPipe:
        return self

    async def readline(self) -> bytes:
        while True:
            newline = self._buffer.find(b"\n", self._searched)  # a long line's start is not searched again
            self._searched = len(self._buffer) if newline < 0 else 0
            if self._skipping and newline >= 0:
                del self._buffer[: newline + 1]
                self._skipping = False
                self._acknowledge()
                continue
            if self._skipping:
                self._buffer.clear()
                self._searched = 0
            elif newline >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                self._acknowledge()
                if len(line) > self._limit:
                    raise ValueError("line longer than the limit (dropped)")
                return line
            elif len(self._buffer) > self._limit:
                self._buffer.clear()
                self._searched = 0
                self._skipping = True
                self._acknowledge()
                raise ValueError("line longer than the limit (dropped)")
            if self._eof:
                line = bytes(self._buffer)
                self._buffer.clear()
                self._searched = 0
                return line
            self._arrived.clear()
            await self._arrived.wait()

    # -- what the control client writes -----------------------------------------------
    @property
    def running(self) -> bool:
        return not self._eof and self._carrier.running

    def write(self, data: bytes) -> None:
        if not self.running:
            raise BrokenPipeError("the remote tmux stream is closed")
        try:
            self._carrier.notify("ctl_in", ch=self.number, data=base64.b64encode(data).decode("ascii"))
        except (ConnectionError, RuntimeError) as exc:
            raise BrokenPipeError(str(exc)) from None

    async def drain(self) -> None:
        await self._carrier.drain()

    @property
    def detaches(self) -> bool:
        return False  # the probe cuts it off (probe_tmux.Stream.close)

    async def end(self, grace: float) -> None:
        """Have the probe end it there (cut off: probe_tmux.Stream.close).

        Nothing is waited for here: there is no process of ours to reap, and
        a link that hangs must not hold up the end of every session's client
        in turn (``Sessions.end_all`` ends them one by one).  What the stream
        still says is dropped.
        """
        if self.running:
            try:
                self._carrier.notify("ctl_close", ch=self.number)
            except (ConnectionError, RuntimeError):
                pass
        self._buffer.clear()
        self._searched = 0
        self.feed_eof()

    @property
    def unread(self) -> int:
        """Bytes arrived and not yet read by the control client (bounded: see the module's docstring)."""
        return len(self._buffer)


class ProbeMux:
    """The streams of one probe, by number; fed by the probe's pushes, ended with it."""

    def __init__(self, carrier: Carrier) -> None:
        self.carrier = carrier
        self._streams: dict[int, MuxPipe] = {}
        self._numbers = itertools.count(1)

    @property
    def running(self) -> bool:
        return self.carrier.running

    @property
    def streams(self) -> list[MuxPipe]:
        return list(self._streams.values())

    async def open(self, tmux_args: list[str]) -> MuxPipe:
        """Start ``tmux tmux_args`` there as a new stream; ``TmuxUnavailable`` if the probe cannot."""
        number = next(self._numbers)
        pipe = self._streams[number] = MuxPipe(number, self.carrier, self._forget)
        try:
            await self.carrier.call("ctl_open", ch=number, args=tmux_args, env=sorted(CONTROL_ENV), attach=os.environ.get("HEADSPACE_TMUX_ATTACH", ""))
        except asyncio.CancelledError:
            self._streams.pop(number, None)
            if self.carrier.running:  # it may have started there: it is ended there, not left behind
                self.carrier.notify("ctl_close", ch=number)
            raise
        except Exception as exc:  # noqa: BLE001 -- the probe's one line (ProbeError) or its absence
            self._streams.pop(number, None)
            raise TmuxUnavailable(f"the remote reader could not start tmux: {exc}") from None
        return pipe

    def run(self, tmux_args: list[str], timeout: float) -> tuple[int, str, str]:
        """One tmux command there, from a worker thread (``TmuxServer.run``'s callers): exit status, stdout, stderr.

        ``TmuxUnavailable`` if the probe cannot answer, and ``RuntimeError``
        when called on the probe's own event loop, which would wait for itself
        (the caller then uses its own ssh command instead).
        """
        loop = self.carrier.loop
        if loop is None or not self.carrier.running:
            raise TmuxUnavailable("the remote reader is not running")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise RuntimeError("called on the probe's own loop")
        future = asyncio.run_coroutine_threadsafe(self.carrier.call("tmux", timeout=timeout + 2, args=tmux_args), loop)
        try:
            answer = future.result(timeout + 3)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TmuxUnavailable(f"the remote tmux did not answer within {timeout:g}s") from None
        except Exception as exc:  # noqa: BLE001 -- the probe's one line (ProbeError)
            raise TmuxUnavailable(str(exc)) from None
        if not isinstance(answer, dict):
            raise TmuxUnavailable("the remote reader gave no answer")
        return int(answer.get("rc", 1)), str(answer.get("out", "")), str(answer.get("err", ""))

    def pushed(self, message: dict[str, Any]) -> None:
        """A ``ctl`` or ``ctl_end`` push from the probe."""
        pipe = self._streams.get(message.get("ch"))  # type: ignore[arg-type]
        if pipe is None:
            return
        if message.get("push") == "ctl_end":
            pipe.feed_eof()
            return
        try:
            pipe.feed(base64.b64decode(str(message.get("data", "")), validate=True))
        except (binascii.Error, ValueError):
            pass

    def ended(self) -> None:
        """The probe is gone: every stream ends (their control clients see the end of their pipe)."""
        for pipe in list(self._streams.values()):
            pipe.feed_eof()
        self._streams.clear()

    def _forget(self, number: int) -> None:
        self._streams.pop(number, None)
