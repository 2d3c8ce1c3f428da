"""When a tmux server's socket appears, goes or is replaced: a stat, no fork.

tmux 3.3 leaves its socket behind after ``kill-server`` and the next server
binds a new one in its place, often with the same inode: its modification
time (in ns) is what tells them apart.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

SOCKET_CHECK = 0.25  # with no server, its socket file is looked at this often...
SOCKET_CHECK_UP = 2.0  # ...and while it runs, this often (its end is told sooner by the control clients)


def identity(path: str | Path) -> tuple[int, int, int] | None:
    """The socket file's device, inode and modification time, or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


async def watch_socket(path: str | Path, wake: asyncio.Event, server_lost: Callable[[], bool], changed: Callable[[], None]) -> None:
    """Call ``changed`` whenever the socket file at ``path`` is another than last time.

    Looked at every SOCKET_CHECK s while ``server_lost()``, else every
    SOCKET_CHECK_UP s; ``wake`` ends a wait at once (a server just lost).
    """
    last = identity(path)
    while True:
        try:
            await asyncio.wait_for(wake.wait(), SOCKET_CHECK if server_lost() else SOCKET_CHECK_UP)
        except TimeoutError:
            pass
        wake.clear()
        now = identity(path)
        if now != last:
            last = now
            changed()
