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
        """Close tmux's input (it detaches), wait ``grace`` s, then kill it."""


class ProcessPipe:
    """A ``tmux -C`` child process (``tmux`` here, or ``ssh … tmux`` for a remote host)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

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
        await end(self.proc, grace)  # our own child, by its handle


async def spawn(argv: list[str], env: dict[str, str]) -> ProcessPipe:
    """Start a control client as our own child; ``OSError`` if it cannot start."""
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
    return ProcessPipe(proc)
