"""What an earlier headspace of this user left when it was SIGKILLed: removed as the next one starts.

A ``kill -9`` (or the GRACE cut-off in app/endings.py) runs no clean-up.
Two things then stayed for good:

* ``answer.sock`` at this machine's answer channel, a socket nobody listens
  on (the next headspace to open the channel clears it, but a thin client of
  the service opens none): removed when nobody holds the channel's lock and
  nobody answers on it (hooks/channel.py ``sweep_stale``);
* the ssh control folders in the temp folder (remote/ssh.py): each is
  named ``hs-ssh-<pid>-…`` by its owner, and is removed once that process is
  gone, with the sockets of its dead ssh masters in it (a socket something
  still answers on keeps its folder).  Folders named before the pid was in
  the name (``hs-ssh-<random>``) are removed when empty and untouched for
  ``OLD_STYLE_AGE``.

Nothing here may keep headspace from starting: every failure is skipped.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from ..hooks.channel import answers, sweep_stale
from ..remote.ssh import CONTROL_PREFIX
from ..shared.paths import runtime_dir
from ..shared.proctree import process_exists

OLD_STYLE_AGE = 600.0  # seconds an old-style, empty control folder must have been left alone

log = logging.getLogger(__name__)


def sweep(env: Mapping[str, str] | None = None, temp: str | None = None) -> list[str]:
    """Remove what dead headspaces of this user left; what was removed (for the log)."""
    removed: list[str] = []
    folder = runtime_dir(env)
    if sweep_stale(folder):
        removed.append(str(folder / "answer.sock"))
    removed += sweep_control_folders(temp or tempfile.gettempdir(), time.time())
    for path in removed:
        log.info("removed %s, left by a headspace that is gone", path)
    return removed


def sweep_control_folders(temp: str, now: float) -> list[str]:
    removed: list[str] = []
    try:
        entries = list(os.scandir(temp))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(CONTROL_PREFIX):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue  # not a folder of ours
        owner = _owner(entry.name)
        if owner is not None and process_exists(owner):  # (a number reused by another process: the folder waits)
            continue
        if owner is None and now - info.st_mtime < OLD_STYLE_AGE:
            continue  # an old-style name says nothing of its owner: only a long-untouched one goes
        if _empty_of_life(Path(entry.path), old_style=owner is None):
            removed.append(entry.path)
    return removed


def _owner(name: str) -> int | None:
    head = name[len(CONTROL_PREFIX) :].split("-", 1)
    return int(head[0]) if len(head) == 2 and head[0].isdigit() else None


def _empty_of_life(folder: Path, *, old_style: bool) -> bool:
    """Remove the dead sockets in ``folder``, then the folder; False (nothing removed) if anything else is there."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return False
    if old_style and entries:
        return False
    for entry in entries:
        try:
            if not stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode) or answers(entry.path):
                return False
        except OSError:
            return False
    try:
        for entry in entries:
            os.unlink(entry.path)
        folder.rmdir()
    except OSError:
        return False
    return True
