"""What a control client talks through: two byte streams, whoever carries them.

``ControlClient`` (control.py) reads tmux's control-mode lines and writes
commands; it does not care how the bytes travel.  Locally (and for a
remote host without a running probe) they are a ``tmux -C`` child's pipes
(``ProcessPipe``; through ssh, one SSH session channel per client).  For a
remote host with a running probe they are one multiplexed stream of the
probe's single channel (``remote/mux.py``).  All the parsing and pacing
stays in ``ControlClient``: a transport only moves bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

from ..shared.lifeline import die_with_parent, end

LINE_LIMIT = 4 << 20  # a longer line (a pane's flood in one %output) is dropped, not the client's end


class LineSource(Protocol):
    """``asyncio.StreamReader``'s ``readline``: one line with its newline, b"" at the end,
    ``ValueError`` for a line past the limit (which is dropped)."""

    async def readline(self) -> bytes: ...


class ControlPipe(Protocol):
    """The two ends of one control client, and its ending."""

    @property
    def stdout(self) -> LineSource: ...

    @property
    def running(self) -> bool: ...

    def write(self, data: bytes) -> None:
        """Queue bytes for tmux's input; ``BrokenPipeError`` once it is gone."""

    async def drain(self) -> None: ...

    async def end(self, grace: float) -> None:
        """End the client (cut off, or detached where it cannot be: ``detaches``), within about ``grace`` s."""

    @property
    def detaches(self) -> bool:
        """Whether ``end`` detaches (input closed, output read to its end) rather than cutting the client off.

        Detaching is what tmux mishandles under load (``ProcessPipe``): before
        it, the client pauses its panes (control.py), which leaves tmux no
        queued output to trip on.
        """


class ProcessPipe:
    """A ``tmux -C`` child process (``tmux`` here, or ``ssh … tmux`` for a remote host).

    Our own ``tmux`` child is cut off, never detached (``cut_off``): tmux
    (3.3a to 3.7 at least) exits with ``fatal: not enough data`` when, in
    one turn of its loop, a control client's input ends while output is
    queued for it, a busy pane writes more (tmux marks that output read for
    a client on its way out) and the client's output has room (tmux then
    writes the queued output it no longer has): a flooding pane and a
    detaching client were enough to take the user's whole server.  A client
    whose process is killed is freed by tmux at once, without that path;
    its input is closed only once tmux has let go of it (its output ended).
    ``ssh … tmux`` cannot be cut off that way (the tmux there would wait
    for good): it detaches, after its panes were paused (control.py).
    """

    def __init__(self, proc: asyncio.subprocess.Process, *, cut_off: bool = False) -> None:
        self.proc = proc
        self.cut_off = cut_off

    @property
    def detaches(self) -> bool:
        return not self.cut_off

    @property
    def stdout(self) -> LineSource:
        assert self.proc.stdout is not None
        return self.proc.stdout

    @property
    def running(self) -> bool:
        return self.proc.returncode is None

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    async def drain(self) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.drain()

    async def end(self, grace: float) -> None:
        # Closing stdin, then a kill after ``grace``; never proc.wait(), which on 3.11 also waits
        # for pipes an ssh master may hold open for good (lifeline.exited).
        if self.cut_off and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()  # our own child, by its handle: tmux frees the client
            with contextlib.suppress(TimeoutError):  # its output read (by the client's reader) to the end tmux gives it
                await asyncio.wait_for(at_eof(self.stdout), grace)
        await end(self.proc, grace)  # our own child, by its handle


async def at_eof(stream: LineSource) -> None:
    """Until ``stream`` was read to its end (by whoever reads it)."""
    while not getattr(stream, "at_eof", lambda: True)():
        await asyncio.sleep(0.02)


async def spawn(argv: list[str], env: dict[str, str], *, cut_off: bool = False) -> ProcessPipe:
    """Start a control client as our own child (``cut_off``: see ``ProcessPipe``); ``OSError`` if it cannot start."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        limit=LINE_LIMIT,
        # Its own process group: a hangup of headspace's terminal must not kill it
        # mid-write; it detaches when we close its input, or on SIGTERM when we die.
        start_new_session=True,
        preexec_fn=die_with_parent(),
    )
    return ProcessPipe(proc, cut_off=cut_off)
