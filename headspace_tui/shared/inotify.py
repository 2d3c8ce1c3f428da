"""Linux inotify on the event loop: a folder's changes told when they happen, and nothing done while none do.

Why not a watcher library: the one used before (watchfiles) waits on a
thread of its own that wakes every 20-50 ms to look for news, so each
watched folder cost about 50 wakes a second with nothing changing (two of
them were most of an idle service's CPU).  Here the kernel's descriptor is
read by the loop itself (``add_reader``): no thread, no timer, no wake
until the kernel has something to say.

Only what headspace needs: one folder, not recursive, the names of what
changed in it and whether the folder itself went.  ``Unavailable`` when
the kernel will not give a watch (no inotify, the user's watch limit):
callers then look at their own pace.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import errno
import os
import struct

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

CHANGES = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED  # the folder itself went (or its watch did)
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)
READ_SIZE = 64 * 1024


class Unavailable(OSError):
    """No inotify watch for this folder here (no such call, the watch limit, not a folder)."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class FolderWatch:
    """One folder's inotify watch, read on the running loop; ``changed`` is set when something in it changed (or it went)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.changed = asyncio.Event()
        self.names: set[str] = set()  # what changed since ``take`` ("" for the folder itself, or an overflow)
        self.gone = False
        try:
            libc = _libc()
            fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        except (OSError, AttributeError) as exc:
            raise Unavailable(errno.ENOSYS, f"no inotify: {exc}") from None
        if fd < 0:
            code = ctypes.get_errno()
            raise Unavailable(code, f"no inotify: {os.strerror(code)}")
        self._fd = fd
        if libc.inotify_add_watch(fd, os.fsencode(folder), CHANGES | IN_ONLYDIR) < 0:
            code = ctypes.get_errno()
            os.close(fd)
            raise Unavailable(code, f"cannot watch {folder}: {os.strerror(code)}")
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(fd, self._read)

    def _read(self) -> None:
        try:
            data = os.read(self._fd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.gone = True
            self.names.add("")
        offset = 0
        while offset + _HEADER.size <= len(data):
            _wd, mask, _cookie, size = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size : offset + _HEADER.size + size]
            offset += _HEADER.size + size
            if mask & IN_Q_OVERFLOW:
                self.names.add("")  # events were lost: everything may have changed
            if mask & GONE:
                self.gone = True
                self.names.add("")
                continue
            self.names.add(os.fsdecode(raw.rstrip(b"\0")))
        self.changed.set()

    def take(self) -> set[str]:
        """What changed since the last take (and clear ``changed``)."""
        names, self.names = self.names, set()
        self.changed.clear()
        return names

    def close(self) -> None:
        if self._fd < 0:
            return
        with contextlib.suppress(ValueError, RuntimeError):  # a loop already closed
            self._loop.remove_reader(self._fd)
        os.close(self._fd)
        self._fd = -1
