"""Reading files other programs write, so that no file can stop headspace.

headspace reads Claude's status files and transcripts, the hook spool, its
own config and Claude's settings.  Any of them can be something other than
the small JSON file we expect: a named pipe (an ``open`` that never
returns), a link to ``/dev/zero``, a 50 MB file re-written every second,
200,000 nested brackets (a ``RecursionError``, not a ``ValueError``), text
that is not UTF-8.  Every reader goes through here:

* ``read_regular``: opened without following a final link and without
  blocking (``O_NONBLOCK``), checked to be a regular file *after* opening
  (no race between a check and the open), and read up to a cap; anything
  else raises ``Unreadable`` with a one-line reason.
* ``loads``: JSON with a nesting limit, every failure an ``Unreadable``.
* ``Unchanged``: remembers each file's identity (device, inode, size,
  mtime) with what was made of it, so an unchanged file is not read again.
* ``note_once``: a bad file is logged once per reason, not once a second.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

MAX_DEPTH = 64  # Claude's files nest a handful of levels
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class Unreadable(Exception):
    """Why a file was not read, in one line."""


def open_regular(path: str | os.PathLike[str], *, follow: bool = False) -> tuple[int, os.stat_result]:
    """An fd on ``path`` and its stat, only if it is a regular file; never blocks.

    ``follow=False`` refuses a symlink as the last component (a link to
    ``/dev/zero`` or to another user's file); the check is made on the open
    descriptor, so the file cannot be swapped between check and read.
    """
    flags = os.O_RDONLY | _NONBLOCK | (0 if follow else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable(f"{path} is a symbolic link; not followed") from None
        raise Unreadable(f"cannot open {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise Unreadable(f"cannot read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise Unreadable(f"{path} is not a regular file ({_kind(info.st_mode)}); not read")
    return fd, info


def read_regular(path: str | os.PathLike[str], cap: int, *, follow: bool = False) -> bytes:
    """The bytes of the regular file ``path``, at most ``cap`` of them.

    Raises ``FileNotFoundError`` for a missing file (callers usually treat
    that as "nothing there") and ``Unreadable`` for everything else: not a
    regular file, a link (unless ``follow``), larger than ``cap``.
    """
    return read_with_stat(path, cap, follow=follow)[0]


def read_with_stat(path: str | os.PathLike[str], cap: int, *, follow: bool = False) -> tuple[bytes, os.stat_result]:
    """``read_regular``, plus the stat of the very file read (for an owner check)."""
    fd, info = open_regular(path, follow=follow)
    try:
        if info.st_size > cap:
            raise Unreadable(f"{path} is {_size(info.st_size)}, over the {_size(cap)} limit; not read")
        chunks, left = [], cap + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise Unreadable(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap:  # grew while we read it
        raise Unreadable(f"{path} is over the {_size(cap)} limit; not read")
    return data, info


def loads(data: bytes | str, *, max_depth: int = MAX_DEPTH, what: str = "file") -> Any:
    """Decoded JSON, refusing what is not JSON or is nested deeper than ``max_depth``."""
    if isinstance(data, bytes):
        text = data.decode("utf-8", errors="replace")
    else:
        text = data
    try:
        value = json.loads(text)
    except RecursionError:
        raise Unreadable(f"{what} is nested too deeply to read") from None
    except ValueError as exc:
        raise Unreadable(f"{what} is not valid JSON ({exc})") from None
    if depth(value) > max_depth:
        raise Unreadable(f"{what} is nested more than {max_depth} levels deep; not read")
    return value


def depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (iterative: no recursion to exhaust)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


T = TypeVar("T")


class Unchanged(Generic[T]):
    """What was made of each file, kept while the file is unchanged.

    The identity is (device, inode, size, mtime in ns): a file replaced by
    rename, rewritten or touched is read again; one left alone is not, which
    keeps a large or busy folder from costing a read per file per second.
    """

    def __init__(self) -> None:
        self._seen: dict[str, tuple[tuple[int, int, int, int], T]] = {}

    def get(self, path: str | os.PathLike[str], make: Callable[[], T]) -> T:
        key = os.fspath(path)
        try:
            info = os.stat(key, follow_symlinks=False)
        except OSError:
            self._seen.pop(key, None)
            return make()
        identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
        known = self._seen.get(key)
        if known is not None and known[0] == identity:
            return known[1]
        value = make()
        self._seen[key] = (identity, value)
        return value

    def forget_except(self, paths: set[str]) -> None:
        for key in [k for k in self._seen if k not in paths]:
            del self._seen[key]


_noted: set[str] = set()


def note_once(message: str, *, level: int = logging.WARNING) -> bool:
    """Log ``message`` the first time it is seen in this run; True when it was new."""
    if message in _noted:
        return False
    if len(_noted) > 10_000:  # a flood of distinct bad files must not grow memory without end
        _noted.clear()
    _noted.add(message)
    log.log(level, "%s", message)
    return True


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB" if n >= 1 << 20 else f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"


def is_private_dir(path: Path) -> str | None:
    """None when ``path`` is a real directory owned by this user and not writable by others; else why not."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None  # not there yet: creating it 0700 is the caller's business
    except OSError as exc:
        return f"cannot check {path}: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory"
    if info.st_uid != os.getuid():
        return f"{path} belongs to another user (uid {info.st_uid})"
    if info.st_mode & 0o022:
        return f"{path} is writable by other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None
