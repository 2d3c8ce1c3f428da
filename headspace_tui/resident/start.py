"""Starting the service in the background, and waiting until it answers.

The service is ``headspace serve --foreground`` started as its own session
(``start_new_session``: its own process group, no controlling terminal, so
closing the terminal or the popup that started it does not end it), by a
shell that ends at once (so it is nobody's child: a TUI that started it
never holds its zombie), its
standard streams on /dev/null (it logs to ``service.log`` in the state
folder).  It ends with its tmux server (server.py), so nothing of ours
outlives what it watches.  It runs from ``/`` with Python's ``-P``: the
folder the user was in never holds it (a mount it pins) or feeds it code (a
``headspace_tui`` folder there, an old checkout, would be imported first).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Protocol

from ..api import timeouts
from ..api.errors import ServerGone, ServiceError
from ..shared import logfile
from ..shared.resident_place import Place, is_held, place_of
from ..shared.safe_files import Unreadable, read_regular
from .client import asked_place, hello


class Server(Protocol):
    """The tmux server a service is started for, as far as starting it asks (tmux/server.py's ``TmuxServer`` is one)."""

    @property
    def identity(self) -> str: ...
    def server_pid(self) -> int | None: ...
    def where(self) -> str: ...
    def socket_args(self) -> list[str]: ...


SHELL = "/bin/sh"


def start_detached(socket_args: list[str], place: Place, *, config: Path | None = None) -> dict[str, Any]:
    """Start the service of the tmux server ``socket_args`` names (``-L NAME``, ``-S PATH`` or none) in the background; its card once it answers."""
    argv = [sys.executable, "-P", "-m", "headspace_tui", *socket_args]  # -P: not the code of whatever folder it was started from
    if config is not None:
        argv += ["--config", str(config)]
    argv += ["serve", "--foreground"]
    started = time.time()
    # Started by a shell that leaves it running and ends: the service is never our child, so one that dies
    # while this headspace runs is reaped by init, not left a zombie of ours (and never ends with us).
    spawn = [SHELL, "-c", '"$@" </dev/null >/dev/null 2>&1 & echo $!', "sh", *argv]
    said = subprocess.run(spawn, stdin=subprocess.DEVNULL, capture_output=True, text=True, start_new_session=True, close_fds=True, cwd="/", timeout=10)
    if said.returncode != 0 or not said.stdout.strip().isdigit():
        raise ServiceError(f"the service could not be started ({said.stderr.strip()[:200] or f'exit status {said.returncode}'})")
    pid = int(said.stdout.strip())
    deadline = time.monotonic() + timeouts.START
    while time.monotonic() < deadline:
        if not _alive(pid):
            raise ServiceError(last_said(started) or f"the service ended at once; see {log_path()}")
        try:
            return hello(place)
        except ServiceError:
            time.sleep(0.05)
    raise ServiceError(f"the service did not answer within {timeouts.START:g}s; see {log_path()}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's by now: not the service's
    return True


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


def start_service(server: Server, place: Place, config: Path | None = None) -> object:
    """Start the resident service of ``server`` in the background (reading ``config``); its card.  ServiceError when it cannot be.

    One started at the same moment by another headspace is as good: its
    answer is waited for.
    """
    if server.server_pid() is None:
        raise ServerGone(server.where())  # nothing to start a service for
    try:
        return start_detached(server.socket_args(), place, config=config)
    except ServiceError:
        if not is_held(place):
            raise
        deadline = time.monotonic() + timeouts.START  # another headspace opened at the same moment started it first
        while True:
            try:
                return hello(place)
            except ServiceError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)


def asked_or_started(server: Server, config: Path | None = None) -> Place:
    """The place of the service of ``server`` that may be asked (of this version, reading ``config``), started first when none runs.

    ServiceError when there is none to ask: one of another version or
    config holds the place (not ours to end), or none would start
    (``ServerGone``: no tmux server to start it for).  Nothing was asked.
    """
    wanted = str(config.resolve()) if config is not None else None
    try:
        return asked_place(server.identity, wanted)
    except ServiceError as exc:
        place = place_of(server.identity)
        if is_held(place):
            raise ServiceError(str(exc)) from None  # a newer one, or one that reads another config
        start_service(server, place, config)
        return asked_place(server.identity, wanted)
