"""What the guarded send stands on: the pane read, a screen that held still, a keystroke and how it went.

Below ``keys.py`` (the guarded send) and ``multi.py`` (a multi-select
dialog, answered step by step), which both build on it: how a pane is read
through tmux (awaited: a control client, or a server's blocking calls in a
thread), the one error whose words reach the user, and the read that keys
follow only once the screen holds still.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from dataclasses import dataclass
from typing import Protocol

from ..detect.family import Family
from ..model import Observation

# The screen must hold still this long before the last read that keys follow:
# Claude redraws within a frame or two of a key typed in the pane itself.
SETTLE = 0.15
SETTLE_STRETCH = 4.0  # at most this many times SETTLE, on a machine far busier than its cores


def settle_for(load: float, cores: int) -> float:
    """SETTLE on a machine no busier than its cores; stretched in proportion to its load beyond them, up to SETTLE_STRETCH times.

    An agent draws what a key brought when it gets the CPU: within a few
    tens of milliseconds on a quiet machine, but with a core kept busy
    beside four test workers (load about 7 on 2 cores) Claude had not yet
    drawn the question a key typed in its own pane had brought 150 ms
    later, so the settled read still showed the one before and headspace's
    key answered the next question (tests/harness/races.py, pane_then_app).
    """
    return SETTLE * min(SETTLE_STRETCH, max(1.0, load / max(1, cores)))


def settle_time() -> float:
    """How long the screen must hold still on this machine now: ``settle_for`` its last minute's load and its cores."""
    try:
        load = os.getloadavg()[0]
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    except OSError:
        return SETTLE
    return settle_for(load, cores)


STEP_TIMEOUT = 2.0
STILL_WITHIN = 2.0  # seconds a key waits for its pane to hold still before it gives up ("kept changing")


class ActionError(Exception):
    """Why nothing was sent, in one line for the user."""


@dataclass(frozen=True)
class KeyStroke:
    keys: tuple[str, ...]
    literal: bool = False


@dataclass(frozen=True)
class Outcome:
    delivered: bool
    detail: str
    after: Observation | None = None
    what: str = ""  # what was answered ("Bash: make → 1. Yes"), for the audit
    more: bool = False  # the dialog goes on (a box toggled, the next page of one dialog): an inbox stays on this agent


class PaneIO(Protocol):
    """What the guarded path needs from tmux, awaited (``fleet.ControlPaneIO``, ``ThreadedPaneIO``)."""

    async def pane(self, pane_id: str): ...
    async def capture(self, pane_id: str, ansi: bool = True) -> str: ...
    async def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None: ...


class BlockingPaneIO(Protocol):
    """A tmux server's blocking calls (``tmux.server.TmuxServer``, ``remote.ssh.SshTmuxServer``)."""

    def pane(self, pane_id: str): ...
    def capture(self, pane_id: str, ansi: bool = True) -> str: ...
    def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None: ...


class ThreadedPaneIO:
    """A server's blocking calls, each in a thread: the loop (and an ssh link's master on it) keeps running."""

    def __init__(self, server: BlockingPaneIO) -> None:
        self.server = server

    async def pane(self, pane_id: str):
        return await asyncio.to_thread(self.server.pane, pane_id)

    async def capture(self, pane_id: str, ansi: bool = True) -> str:
        return await asyncio.to_thread(self.server.capture, pane_id, ansi)

    async def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None:
        await asyncio.to_thread(lambda: self.server.send_keys(pane_id, *keys, literal=literal))


async def read_pane(io: PaneIO, pane_id: str, family: Family) -> tuple[Observation, object]:
    """The pane's record and its screen, read by ``family``'s reader (with the pane's title, where it needs that)."""
    record = await io.pane(pane_id)
    return family.read(await io.capture(pane_id, ansi=True), command=record.current_command, title=getattr(record, "title", None)), record


# A line's leading bullet, between its colour codes: Claude blinks the "●" of a tool line that waits on
# the user (it alternates with a blank, about twice a second).
_BULLET = re.compile(r"^((?:\x1b\[[0-9;]*m)*)●((?:\x1b\[[0-9;]*m)*) ", re.M)


def _held_still(before: str, after: str) -> bool:
    """Two captures show the same screen, a blinking tool bullet aside.

    The blink is not a redraw: with it counted, a third of the approvals
    timed by ``benchmarks/inbox_move.py`` waited a second SETTLE round
    (304 ms instead of 152 ms from the key to the keys going, 2.1.330) for
    nothing but "●" turning into " ".  Any other change, a letter or a
    colour, still counts.
    """
    return before == after or _BULLET.sub(r"\1 \2 ", before) == _BULLET.sub(r"\1 \2 ", after)


async def settled_read(io: PaneIO, pane_id: str, command: str, family: Family, *, quiet: float | None = None, timeout: float = STILL_WITHIN) -> tuple[Observation, str]:
    """The pane once two captures ``quiet`` seconds apart show the same screen (``_held_still``).

    Claude redraws within a frame or two of a key: a screen that is still
    changing may already be out of date (a key typed in the pane itself has
    answered question 1, and question 2 is being drawn).  Keys only go to a
    screen that held still, for ``settle_time()`` unless ``quiet`` is given.
    """
    quiet = settle_time() if quiet is None else quiet
    deadline = time.monotonic() + max(timeout, 4 * quiet)
    ansi = await io.capture(pane_id, ansi=True)
    while True:
        await asyncio.sleep(quiet)
        again = await io.capture(pane_id, ansi=True)
        if _held_still(ansi, again):
            return family.classify(again, command=command), again
        if time.monotonic() > deadline:
            raise ActionError(f"the pane {pane_id} kept changing; nothing sent")
        ansi = again
