"""When the probe looks again: woken by the kernel where it can be, on a timer where it cannot.

The probe (probe.py) reads status folders, the hook spool and whether each
watched Claude still runs.  Looking at them twice a second made an idle
remote host cost four times a local one (issue 27), so the probe sleeps in
``Waker.wait`` until something may have changed:

* **folders** through inotify, reached with ctypes (``inotify_init1`` and
  ``inotify_add_watch`` from libc; the events are ``os.read``): nothing is
  installed on the remote.  A folder that does not exist yet is waited for
  on its nearest existing parent (only its own name there counts), so the
  watch moves down as it is created; a folder deleted or moved away moves
  the watch back up.  A full event queue (``IN_Q_OVERFLOW``) is just one
  more wake: the probe's look is always a full read.
* **processes** through ``os.pidfd_open`` (Linux 5.3+, Python 3.9+): the
  descriptor becomes readable when the process exits.  A process without
  one (an older kernel) is looked at every ``PID_PACE`` seconds.
* **the probe's own requests** through a pipe: ``poke`` after the watched
  sets changed makes the waker arm the new watches at once.

Where inotify cannot be had (not Linux, no libc symbol, the per-user watch
limit reached), the waker polls at ``POLL_PACE``, as the probe always did;
``polling`` says so and ``reason`` says why.  Whatever wakes it, the look
that follows is the same defensive read: this module only decides *when*.

Standard library only: it travels to the remote host in the probe's bundle.
"""

from __future__ import annotations

import errno
import os
import select
import threading
import time
from collections.abc import Iterable

from ..shared.inotify import FOLDER_MASK, IN_DELETE_SELF, IN_IGNORED, IN_MASK_ADD, IN_MOVE_SELF, IN_Q_OVERFLOW, PARENT_MASK, Inotify

POLL_PACE = 0.5  # seconds between looks without inotify (the probe's old pace)
PID_PACE = 2.0  # seconds between looks at processes that have no pidfd
SAFETY_PACE = 60.0  # even with every event source armed, a full look this often (a missed event costs at most this)
SETTLE = 0.02  # after a wake, gather what follows this long: a burst of writes is one look


def _nearest(path: str) -> tuple[str, str]:
    """``(folder to watch, name that matters there)``: the path itself if it is a folder, else its nearest existing parent."""
    path = os.path.abspath(path)
    child = ""
    while True:
        if os.path.isdir(path):
            return path, child
        parent = os.path.dirname(path)
        if parent == path:
            return path, child
        path, child = parent, os.path.basename(path)


class Waker:
    """``wait`` returns when a watched folder or process may have changed (or after a while); see the module."""

    def __init__(self, *, use_inotify: bool = True, use_pidfd: bool = True) -> None:
        self._lock = threading.Lock()
        self._folders: set[str] = set()
        self._pids: set[int] = set()
        self._read_pipe, self._write_pipe = os.pipe()
        os.set_blocking(self._read_pipe, False)
        os.set_blocking(self._write_pipe, False)
        self.reason = ""
        self._inotify: Inotify | None = None
        if use_inotify:
            try:
                self._inotify = Inotify()
            except (OSError, AttributeError, ImportError) as exc:
                self.reason = f"no inotify ({exc})"
        else:
            self.reason = "inotify not used"
        self._use_pidfd = use_pidfd and hasattr(os, "pidfd_open")
        self._watches: dict[str, tuple[int, str]] = {}  # wanted folder -> (wd, name that matters there, "" for the folder itself)
        self._by_wd: dict[int, set[str]] = {}
        self._paths: dict[int, str] = {}  # wd -> the folder it watches
        self._pidfds: dict[int, int] = {}  # pid -> pidfd
        self._unwatched_pids: set[int] = set()  # no pidfd (old kernel, or it fired): looked at every PID_PACE s
        self.overflows = 0  # IN_Q_OVERFLOW seen (each one is a full look, as any wake)
        self.wakes = 0  # how often ``wait`` returned early (tests and benchmarks read it)
        self.waits = 0  # how often ``wait`` returned at all, woken or timed out: the probe's looks

    @property
    def polling(self) -> bool:
        """True when folders are looked at on a timer (``reason`` says why)."""
        return self._inotify is None

    # -- what to watch -------------------------------------------------------------
    def want(self, folders: Iterable[str], pids: Iterable[int]) -> None:
        """The folders and processes to wake for from now on (armed by the next ``wait``)."""
        with self._lock:
            self._folders, self._pids = set(folders), set(pids)

    def poke(self) -> None:
        """Wake ``wait`` now (from any thread): something to watch changed."""
        try:
            os.write(self._write_pipe, b"!")
        except BlockingIOError:
            pass  # the pipe is full of pokes already: one is enough

    def _arm(self) -> bool:
        """Watches for exactly the wanted folders (or their nearest parents) and pidfds for the wanted processes.

        True when a folder's watch moved (it appeared, went or was replaced):
        what changed in it before the new watch was in place is only seen by
        looking again, so ``wait`` then returns at once.
        """
        with self._lock:
            folders, pids = set(self._folders), set(self._pids)
        moved = False
        if self._inotify is not None:
            try:
                moved = self._arm_folders(folders)
            except OSError as exc:  # the watch limit (ENOSPC), or inotify refused otherwise: poll from now on
                self._give_up_inotify(f"inotify failed ({exc})")
                moved = True
        for pid in [p for p in self._pidfds if p not in pids]:
            os.close(self._pidfds.pop(pid))
        self._unwatched_pids &= pids
        for pid in pids - set(self._pidfds) - self._unwatched_pids:
            if not self._use_pidfd:
                self._unwatched_pids.add(pid)
                continue
            try:
                self._pidfds[pid] = os.pidfd_open(pid)
            except ProcessLookupError:
                self._unwatched_pids.add(pid)  # gone already: the next look says so
            except OSError:  # ENOSYS (kernel < 5.3), EMFILE, ...: this one on the timer
                self._unwatched_pids.add(pid)
        return moved

    def _arm_folders(self, folders: set[str]) -> bool:
        assert self._inotify is not None
        for folder in [f for f in self._watches if f not in folders]:
            self._drop(folder)
        moved = False
        for folder in folders:
            for _attempt in range(8):  # the tree can change while we arm; a few tries, then the next wake
                where, name = _nearest(folder)
                current = self._watches.get(folder)
                if current is not None and self._where(current[0]) == where and current[1] == name:
                    break
                self._drop(folder)
                try:
                    wd = self._inotify.add(where, (FOLDER_MASK if not name else PARENT_MASK) | IN_MASK_ADD)
                except OSError as exc:
                    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                        continue  # it went between the look and the watch: look again
                    if exc.errno in (errno.EACCES, errno.EPERM):
                        break  # a folder we may not read: its look says nothing either
                    raise
                self._watches[folder] = (wd, name)
                moved = True
                self._by_wd.setdefault(wd, set()).add(folder)
                self._paths[wd] = where
                if _nearest(folder) == (where, name):
                    break  # nothing moved while we armed
        return moved

    def _where(self, wd: int) -> str:
        return self._paths.get(wd, "")

    def _drop(self, folder: str) -> None:
        current = self._watches.pop(folder, None)
        if current is None:
            return
        wd = current[0]
        users = self._by_wd.get(wd)
        if users is not None:
            users.discard(folder)
            if not users:
                del self._by_wd[wd]
                self._paths.pop(wd, None)
                if self._inotify is not None:
                    self._inotify.remove(wd)

    def _give_up_inotify(self, reason: str) -> None:
        if self._inotify is not None:
            self._inotify.close()
        self._inotify = None
        self._watches.clear()
        self._by_wd.clear()
        self._paths.clear()
        self.reason = reason

    # -- waiting ---------------------------------------------------------------------
    def wait(self, timeout: float | None = None) -> bool:
        """Sleep until something watched may have changed; True for such a wake, False after the timeout.

        It returns True at once when a watch had to be placed anew (see
        ``_arm``), so the caller's next look sees what changed meanwhile.
        ``timeout`` defaults to the pace the armed sources allow: ``SAFETY_PACE``
        with everything armed, ``PID_PACE`` with a process on the timer,
        ``POLL_PACE`` without inotify.
        """
        self.waits += 1
        if self._arm():
            self.wakes += 1
            return True
        if timeout is None:
            timeout = POLL_PACE if self.polling and self._folders else SAFETY_PACE
            if self._unwatched_pids:
                timeout = min(timeout, PID_PACE)
        poller = select.poll()
        poller.register(self._read_pipe, select.POLLIN)
        if self._inotify is not None:
            poller.register(self._inotify.fd, select.POLLIN)
        for fd in self._pidfds.values():
            poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready = poller.poll(left * 1000)
            if not ready:
                return False
            if self._handle({fd for fd, _ in ready}):
                time.sleep(SETTLE)
                self._handle({self._read_pipe} | ({self._inotify.fd} if self._inotify is not None else set()))
                self.wakes += 1
                return True

    def _handle(self, ready: set[int]) -> bool:
        """Drain what is ready; True if it matters (a watched folder's change, an exit, a poke)."""
        matters = False
        if self._read_pipe in ready:
            try:
                while os.read(self._read_pipe, 4096):
                    pass
            except BlockingIOError:
                pass
            matters = True
        for pid, fd in list(self._pidfds.items()):
            if fd in ready:
                os.close(self._pidfds.pop(pid))
                self._unwatched_pids.add(pid)  # exited: never armed again (a fired pidfd stays readable)
                matters = True
        if self._inotify is not None and self._inotify.fd in ready:
            for wd, mask, name in self._inotify.read():
                if mask & IN_Q_OVERFLOW:
                    self.overflows += 1
                    matters = True
                    continue
                if mask & IN_IGNORED:  # the watched folder went (or we removed it): re-armed at the next wait
                    for folder in self._by_wd.pop(wd, set()):
                        self._watches.pop(folder, None)
                    self._paths.pop(wd, None)
                    matters = True
                    continue
                for folder in self._by_wd.get(wd, ()):
                    _, wanted_name = self._watches.get(folder, (0, ""))
                    if not wanted_name or name == wanted_name or mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                        matters = True
        return matters

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None
        for fd in self._pidfds.values():
            os.close(fd)
        self._pidfds.clear()
        os.close(self._read_pipe)
        os.close(self._write_pipe)
