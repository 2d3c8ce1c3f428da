"""The warm UI: the app kept running between popups, in headspace's private tmux server (docs/popup.md).

The same app as the popup's cold one (a client of the resident service),
with three differences:

* ``q``, Ctrl+C, Esc with nothing to close, and the end of a jump detach
  the popup's tmux client (the popup closes) instead of ending the app:
  the table, its selection, filter and layout stay for the next open;
* it listens on a Unix socket (same user only) for the launcher
  (cli/popup.py): each open says where the user who opened the popup sits
  (what a jump needs) and the popup's size, to which the window is sized
  (and the table laid out) before the launcher attaches;
* it ends with what it serves: the resident service's process and the
  watched tmux server's (a pidfd each, read on the loop: nothing polled),
  and on SIGTERM / SIGHUP as the cold app does.

It never speaks to the user's tmux server itself: jumps go through the
service, the private server is reached by the callables it is handed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual import events, on

from ..shared.peer import peer_uid
from .main import HeadspaceApp

log = logging.getLogger(__name__)

LINE_MAX = 16 << 10  # bytes of the launcher's one line
SETTLE_MAX = 1.0  # seconds an open waits for the app to take a new size


class WarmApp(HeadspaceApp):
    """The app, detached instead of ended; opened again by the launcher."""

    def __init__(
        self,
        *args: Any,
        control: Path,
        detach: Callable[[], object],
        resize: Callable[[int, int], object],
        here: Callable[[dict[str, str]], object],
        lifelines: tuple[int, ...] = (),
        version: str = "",
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.control = control
        self._detach_popup = detach
        self._resize = resize
        self._set_here = here
        self._lifelines = lifelines
        self._version = version
        self._server: asyncio.AbstractServer | None = None
        self._pidfds: list[int] = []
        self.opens = 0
        self.ended_by = ""  # what ended it: a lifeline, a newer launcher

    # -- closing the popup instead of ending -------------------------------------------
    async def action_quit(self) -> None:
        await self.close_popup()

    def end_after_jump(self, exit_with: str | None) -> None:
        """A jump moved the user's client: close the popup (it would stay over the agent and keep the keyboard)."""
        self.run_worker(self.close_popup(), group="popup", exclusive=True)

    def nothing_to_close(self) -> None:
        """Esc on the main screen with no filter or scrollback open: close the popup."""
        self.run_worker(self.close_popup(), group="popup", exclusive=True)

    async def close_popup(self) -> None:
        await asyncio.to_thread(self._detach_popup)

    # -- opens ------------------------------------------------------------------------------
    @on(events.Mount)
    async def _listen(self) -> None:
        """Watch the lifelines, and take opens (HeadspaceApp's on_mount runs too: Textual calls each class's handler)."""
        loop = asyncio.get_running_loop()
        for pid in self._lifelines:
            try:
                fd = os.pidfd_open(pid)
            except (OSError, AttributeError):
                log.warning("warm UI: cannot watch process %s; it is taken as gone", pid)
                self._end(f"process {pid} gone")
                return
            self._pidfds.append(fd)
            loop.add_reader(fd, self._lifeline_ended, fd, pid)
        with contextlib.suppress(FileNotFoundError):
            self.control.unlink()  # a killed one's: the lock says none runs
        self._server = await asyncio.start_unix_server(self._opened, path=str(self.control), limit=LINE_MAX)
        os.chmod(self.control, 0o600)

    def _lifeline_ended(self, fd: int, pid: int) -> None:
        asyncio.get_running_loop().remove_reader(fd)  # readable for good: once is enough
        self._end(f"process {pid} ended")

    def _end(self, why: str) -> None:
        if not self.ended_by:
            log.info("warm UI: ending: %s", why)
            self.ended_by = why
        self.exit(return_code=0)

    async def _opened(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if peer_uid(writer.get_extra_info("socket")) not in (None, os.getuid()):
                return
            try:
                line = await asyncio.wait_for(reader.readline(), 5.0)
                asked = json.loads(line)
            except (TimeoutError, ValueError, asyncio.LimitOverrunError):
                return
            answer = await self.open(asked if isinstance(asked, dict) else {})
            writer.write(json.dumps(answer).encode() + b"\n")
            await writer.drain()
        except (OSError, ConnectionError) as exc:
            log.info("warm UI: an open broke off: %s", exc)
        finally:
            writer.close()

    async def open(self, asked: dict[str, Any]) -> dict[str, Any]:
        """Take the user who opens the popup: where they sit (for a jump), and the popup's size, laid out before the attach."""
        if asked.get("open") != 1:
            return {"ok": False, "why": "not an open"}
        if self._version and asked.get("version") not in (None, self._version):
            self.call_later(self._end, f"a launcher of version {asked.get('version')} (this one is {self._version})")
            return {"ok": False, "why": f"the warm UI was of version {self._version}: ended, a new one next time"}
        here = asked.get("here")
        self._set_here({k: v for k, v in here.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(here, dict) else {})
        cols, rows = asked.get("cols"), asked.get("rows")
        if isinstance(cols, int) and isinstance(rows, int) and 10 <= cols <= 1000 and 5 <= rows <= 1000 and (cols, rows) != tuple(self.size):
            await asyncio.to_thread(self._resize, cols, rows)
            await self._settled((cols, rows))
        self.opens += 1
        return {"ok": True}

    async def _settled(self, size: tuple[int, int], wait: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        """Until the app has taken ``size`` and drawn once at it (or SETTLE_MAX): the attach then shows the table laid out."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SETTLE_MAX
        while tuple(self.size) != size and loop.time() < deadline:
            await wait(0.005)
        drawn = asyncio.Event()
        self.call_after_refresh(drawn.set)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(drawn.wait(), max(0.0, deadline - loop.time()) + 0.1)

    async def on_unmount(self) -> None:
        if self._server is not None:
            self._server.close()
        with contextlib.suppress(FileNotFoundError):
            self.control.unlink()
        loop = asyncio.get_running_loop()
        for fd in self._pidfds:
            loop.remove_reader(fd)  # False when already removed
            os.close(fd)
        self._pidfds = []  # HeadspaceApp's on_unmount runs next, and stops the facade
