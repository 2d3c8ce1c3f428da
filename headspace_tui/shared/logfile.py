"""Where tracebacks go: a log file, never the user's screen.

A full-screen app cannot print a traceback where anyone reads it, and a
traceback is not what a user needs anyway: one line saying what went wrong
and where the details are.  ``setup`` points Python's logging at
``$XDG_STATE_HOME/headspace/headspace.log`` (beside the event log), small
and rotated; everything that goes wrong inside headspace is logged there
with its traceback.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
from collections.abc import Mapping
from pathlib import Path

from ..state.eventlog import default_path as events_path

MAX_BYTES = 1 << 20
BACKUPS = 2


def default_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/headspace/headspace.log``: beside the event log (``~/.local/state`` when unset)."""
    return events_path(env).with_name("headspace.log")


def setup(path: Path | None = None) -> Path | None:
    """Send headspace's log to ``path``; the path, or None when it cannot be written.

    Without a writable log file headspace still runs; the one-line messages
    to the user then cannot point at details.
    """
    path = path or default_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
        os.chmod(path, 0o600)
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("headspace_tui")
    for old in [h for h in root.handlers if getattr(h, "_headspace", False)]:
        root.removeHandler(old)
        old.close()
    handler._headspace = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    root.propagate = False  # nothing of ours reaches stderr behind the screen
    loop_log = logging.getLogger("asyncio")  # the loop's own warnings (a task's lost exception, a child reaped late): the log's too
    for old in [h for h in loop_log.handlers if getattr(h, "_headspace", False)]:
        loop_log.removeHandler(old)
    loop_log.addHandler(handler)
    loop_log.propagate = False
    return path
