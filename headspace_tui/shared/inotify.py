"""Linux inotify through libc (ctypes, standard library only), and a folder's watch read on the event loop.

Two users: the remote probe's waker (remote/probe_watch.py, which travels
to the host in the probe's bundle: nothing is installed there) and the
service's folder watch (service/watching/folder_watch.py, ``FolderWatch``
here).  Why not a watcher library: the one used before waited on a thread
of its own that woke every 20-50 ms to look for news, so each watched
folder cost about 50 wakes a second with nothing changing (two of them were
most of an idle service's CPU).  ``FolderWatch`` has the loop read the
kernel's descriptor itself (``add_reader``): no thread, no timer, no wake
until the kernel has something to say.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import struct
import sys

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_MASK_ADD = 0x20000000  # a folder watched for two reasons (itself, and as a missing one's parent) keeps both masks

# In a watched folder: any file written, replaced, added or removed; the folder itself going.
FOLDER_MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
# On the parent of a folder that is not there yet: a child appearing (created or moved in), the parent going.
PARENT_MASK = IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then len bytes of name)


class Inotify:
    """One inotify instance, through libc's own functions (ctypes): no module to install."""

    def __init__(self) -> None:
        if not sys.platform.startswith("linux"):
            raise OSError("inotify is Linux's")
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        self._init = libc.inotify_init1  # AttributeError on a libc without it
        self._add = libc.inotify_add_watch
        self._rm = libc.inotify_rm_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._rm.argtypes = [ctypes.c_int, ctypes.c_int]
        self._errno = ctypes.get_errno
        fd = self._init(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            code = self._errno()
            raise OSError(code, f"inotify_init1: {os.strerror(code)}")
        self.fd = fd

    def add(self, path: str, mask: int) -> int:
        """A watch descriptor; ``OSError`` with errno (ENOENT, ENOTDIR, ENOSPC for the watch limit, ...)."""
        wd = self._add(self.fd, os.fsencode(path), mask)
        if wd < 0:
            code = self._errno()
            raise OSError(code, f"inotify_add_watch {path}: {os.strerror(code)}")
        return int(wd)

    def remove(self, wd: int) -> None:
        self._rm(self.fd, wd)  # an already-gone watch (EINVAL) is fine

    def read(self) -> list[tuple[int, int, str]]:
        """Every queued event, ``(wd, mask, name)``; [] when none (a full queue's overflow is its last)."""
        events: list[tuple[int, int, str]] = []
        while True:
            try:
                data = os.read(self.fd, 1 << 16)  # whole events only: the kernel never splits one
            except BlockingIOError:
                return events
            at = 0
            while at + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
                at += _EVENT.size
                name = data[at : at + length].split(b"\0", 1)[0]
                at += length
                events.append((wd, mask, os.fsdecode(name)))

    def close(self) -> None:
        os.close(self.fd)


class Unavailable(OSError):
    """No inotify watch for this folder here (no such call, the watch limit, not a folder)."""


GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED  # the folder itself went (or its watch did)


class FolderWatch:
    """One folder's inotify watch, read on the running loop; ``changed`` is set when something in it changed (or it went)."""

    def __init__(self, folder: str, mask: int = FOLDER_MASK) -> None:
        self.folder = folder
        self.changed = asyncio.Event()
        self.names: set[str] = set()  # what changed since ``take`` ("" for the folder itself, or an overflow)
        self.gone = False
        try:
            self._inotify: Inotify | None = Inotify()
        except (OSError, AttributeError) as exc:
            raise Unavailable(getattr(exc, "errno", None) or errno.ENOSYS, f"no inotify: {exc}") from None
        try:
            self._inotify.add(folder, mask)
        except OSError as exc:
            self._inotify.close()
            raise Unavailable(exc.errno or errno.EINVAL, str(exc)) from None
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._inotify.fd, self._read)

    def _read(self) -> None:
        assert self._inotify is not None
        try:
            events = self._inotify.read()
        except OSError:
            events, self.gone = [], True
            self.names.add("")
        for _wd, mask, name in events:
            if mask & IN_Q_OVERFLOW:
                self.names.add("")  # events were lost: everything may have changed
            if mask & GONE:
                self.gone = True
                self.names.add("")
                continue
            self.names.add(name)
        if events or self.gone:
            self.changed.set()

    def take(self) -> set[str]:
        """What changed since the last take (and clear ``changed``)."""
        names, self.names = self.names, set()
        self.changed.clear()
        return names

    def close(self) -> None:
        """Stop reading now; the descriptor itself is closed beside the loop.

        Closing an inotify descriptor waits for the kernel's grace period
        (5-16 ms each, measured here): on the loop, every such close held up
        every pane's news by as much.
        """
        if self._inotify is None:
            return
        inotify, self._inotify = self._inotify, None
        with contextlib.suppress(ValueError, RuntimeError):  # a loop already closed
            self._loop.remove_reader(inotify.fd)
        try:
            self._loop.run_in_executor(None, inotify.close)
        except RuntimeError:  # a loop closed, or its executor shut down: closed here
            inotify.close()
