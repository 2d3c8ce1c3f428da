"""Starting the service in the background, and waiting until it answers.

The service is ``headspace serve --foreground`` started as its own session
(``start_new_session``: its own process group, no controlling terminal, so
closing the terminal or the popup that started it does not end it), its
standard streams on /dev/null (it logs to ``service.log`` in the state
folder).  It ends with its tmux server (server.py), so nothing of ours
outlives what it watches.  It runs from ``/`` with Python's ``-P``: the
folder the user was in never holds it (a mount it pins) or feeds it code (a
``headspace_tui`` folder there, an old checkout, would be imported first).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..shared import logfile
from ..shared.resident_place import Place
from ..shared.safe_files import Unreadable, read_regular
from .client import ServiceError, hello

START_WAIT = 15.0  # seconds a new service may take to answer


def start_detached(socket_args: list[str], place: Place, *, config: Path | None = None) -> dict[str, Any]:
    """Start the service of the tmux server ``socket_args`` names (``-L NAME``, ``-S PATH`` or none) in the background; its card once it answers."""
    argv = [sys.executable, "-P", "-m", "headspace_tui", *socket_args]  # -P: not the code of whatever folder it was started from
    if config is not None:
        argv += ["--config", str(config)]
    argv += ["serve", "--foreground"]
    started = time.time()
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True, cwd="/")
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        code = process.poll()
        if code is not None:
            raise ServiceError(last_said(started) or f"the service ended at once (exit status {code}); see {log_path()}")
        try:
            return hello(place)
        except ServiceError:
            time.sleep(0.05)
    raise ServiceError(f"the service did not answer within {START_WAIT:g}s; see {log_path()}")


def log_path() -> Path:
    """The service's log: ``service.log`` beside headspace's own log, in the state folder."""
    return logfile.default_path().with_name("service.log")


def last_said(since: float) -> str:
    """The last line the service logged, if it logged since ``since`` (why a new one ended at once), else ""."""
    path = log_path()
    try:
        if path.stat().st_mtime < since:
            return ""
        data = read_regular(path, 2 * logfile.MAX_BYTES)
    except (OSError, Unreadable):
        return ""
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1].split(": ", 1)[-1] if lines else ""
