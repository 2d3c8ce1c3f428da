"""Input mode's keys to one pane (``InputLink``): forwarded as typed, but only to the pane they were meant for.

In input mode the user types into an agent deliberately, so what a key
means is the user's business (no prompt is checked, unlike an answer).
What is still guarded is *where* it goes:

* the pane chosen when input mode began, by its id (``%N``) and the pid of
  the process tmux started in it: a pane that vanished, or a ``%N`` reused
  after a tmux restart, gets nothing;
* Claude must still run in it (``#{pane_current_command}``): keys meant for
  Claude must never reach the shell left behind when it exits (an Enter
  there runs whatever was typed);
* not while the pane is in copy mode (the keys would drive tmux's copy mode);
* one send at a time (the pane's send lock, shared with the answers), in
  the order typed.  Keys typed while one send is under way are sent
  together by the next one (letters joined into one literal string).

Only the keys in ``FORWARDED`` (and literal text) are accepted: a front end
cannot ask for Ctrl+C (twice ends Claude), Ctrl+D, or Shift+Tab (which
switches Claude's permission mode) through here.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

from ..detect.families import UnknownFamily, family_named
from ..detect.family import Family
from ..tmux.server import TmuxCommandError, TmuxUnavailable
from .keys import KeyStroke, PaneBusy, PaneIO, pane_lock

log = logging.getLogger(__name__)

# tmux key names input mode may send besides literal text.
FORWARDED = frozenset({"Enter", "BSpace", "DC", "Left", "Right", "Up", "Down", "Home", "End", "PPage", "NPage", "Tab", "Escape"})
BUSY_RETRY = 0.05  # seconds between tries while an answer holds the pane's send lock
BUSY_TRIES = 60


class InputLink:
    """Keys for one pane, sent in order, one send at a time, each after the pane is checked again.

    ``report(line, ended)``: a problem in one line; ``ended`` when the pane
    can take no more keys (gone, or its agent gone): input mode should end.
    """

    def __init__(self, io: PaneIO, pane_id: str, server_key: str, report: Callable[[str, bool], None], family: Family, sent: Callable[[], None] | None = None) -> None:
        self.io = io
        # Keys reached the pane: whatever it asked may be answered by them (the service then takes
        # what a later capture shows as a new appearance: an answer drawn before them is stale).
        self.sent = sent
        self.family = family  # whose process must still run in the pane
        self.pane_id = pane_id
        self.server_key = server_key
        self.report = report
        self.pid: int | None = None  # the pane's process when the link was made (read by ``check``)
        self.closed = False
        self._queue: deque[KeyStroke] = deque()
        self._task: asyncio.Task | None = None

    async def check(self) -> str:
        """Why this pane cannot take keys now ("" when it can); the first check remembers the pane's process."""
        try:
            record = await self.io.pane(self.pane_id)
        except (TmuxCommandError, TmuxUnavailable) as exc:
            return f"pane {self.pane_id} is gone ({exc})"
        if self.pid is None:
            self.pid = record.pid
        elif record.pid != self.pid:
            return f"pane {self.pane_id} now runs another process (pid {record.pid}, was {self.pid})"
        if not self.family.is_command(getattr(record, "current_command", "")):
            return f"{self.family.label} is not running in pane {self.pane_id} (it runs {record.current_command or 'nothing'})"
        if getattr(record, "in_mode", False):
            return f"pane {self.pane_id} is in copy mode; leave it first (q)"
        return ""

    def send(self, stroke: KeyStroke) -> None:
        """Queue one key (or literal text) for the pane; refused keys never reach tmux."""
        if self.closed:
            return
        if not stroke.literal and not set(stroke.keys) <= FORWARDED:
            raise ValueError(f"input mode does not forward {stroke.keys!r}")
        self._queue.append(stroke)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    def close(self) -> None:
        """No more keys are taken; those already typed still go (they were meant)."""
        self.closed = True

    async def wait_sent(self) -> None:
        """Until every key typed so far was sent or refused (for tests and for leaving cleanly)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def _drain(self) -> None:
        while self._queue:
            batch = _joined(self._queue)
            self._queue.clear()
            try:
                await self._send(batch)
            except Exception as exc:  # one line to the user; the link stays for the next key
                log.exception("input mode: sending to %s failed", self.pane_id)
                self.report(f"{self.pane_id}: not sent ({type(exc).__name__}: {exc})", False)

    async def _send(self, batch: list[KeyStroke]) -> None:
        for _ in range(BUSY_TRIES):
            try:
                with pane_lock(self.server_key, self.pane_id):
                    problem = await self.check()
                    if problem:
                        ended = "copy mode" not in problem
                        self.report(f"{problem}; {_count(batch)} not sent", ended)
                        if ended:
                            self._queue.clear()
                            self.closed = True
                        return
                    try:
                        for stroke in batch:
                            await self.io.send_keys(self.pane_id, *stroke.keys, literal=stroke.literal)
                    finally:
                        if self.sent is not None:
                            self.sent()
                    return
            except PaneBusy:
                await asyncio.sleep(BUSY_RETRY)
        self.report(f"{self.pane_id} stayed busy with another send; {_count(batch)} not sent", False)


def _joined(queue: deque[KeyStroke]) -> list[KeyStroke]:
    """The queued keys in order, neighbouring literal text joined into one string (one send for a burst of typing)."""
    out: list[KeyStroke] = []
    for stroke in queue:
        if stroke.literal and out and out[-1].literal:
            out[-1] = KeyStroke((out[-1].keys[0] + stroke.keys[0],), literal=True)
        else:
            out.append(stroke)
    return out


def _count(batch: list[KeyStroke]) -> str:
    n = sum(len(s.keys[0]) if s.literal else 1 for s in batch)
    return f"{n} key{'s' if n != 1 else ''}"


class Typist:
    """Makes input mode's links, each to one pane of the fleet (``routes.server_key``: whose send lock)."""

    def __init__(self, io: PaneIO, server_key: Callable[[str], str]) -> None:
        self.io = io
        self.server_key = server_key

    async def open(self, pane_id: str, report: Callable[[str, bool], None], family: str, sent: Callable[[], None] | None = None) -> tuple[InputLink | None, str]:
        """A link to ``pane_id`` (whose agent is of ``family``) once it is checked, or None and why not; ``sent``: after each batch of keys went."""
        if not pane_id.startswith("%"):
            return None, f"refusing to type into {pane_id!r}: panes are addressed by id (%N) only"
        try:
            kind = family_named(family)
        except UnknownFamily as exc:
            return None, str(exc)
        link = InputLink(self.io, pane_id, self.server_key(pane_id), report, kind, sent)
        problem = await link.check()
        return (None, problem) if problem else (link, "")
