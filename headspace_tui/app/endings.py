"""SIGTERM, SIGHUP and SIGINT end headspace the way ``q`` does.

Python's default for both is to die on the spot: no ``finally``, no
unmount, so every remote host's ssh master (in its own session, so the
terminal's hangup never reaches it) lived on under init, connected, with its
control folder in /tmp (issue 22).  A closed terminal is a SIGHUP; ``kill``
and service managers send SIGTERM.  Both now ask the app to exit, which runs
the same shutdown as ``q``: every monitor stops, every tmux control client
detaches, every probe and master is ended, every control folder removed.

If that shutdown itself hangs (a terminal that is gone can block a write), a
second signal, or ``GRACE`` seconds, ends the process anyway; the ssh
children still die with it (``lifeline.die_with_parent``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading

from textual.app import App

GRACE = 10.0  # seconds the clean shutdown may take after a signal before the process ends regardless
SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)  # SIGINT: `kill -INT`; the Ctrl+C key is a key in raw mode


def end_on_signals(app: App) -> None:
    """On the app's loop (``on_mount``): SIGTERM / SIGHUP exit the app cleanly, with a deadline."""
    loop = asyncio.get_running_loop()
    received: list[int] = []

    def ended_by(signum: int) -> None:
        received.append(signum)
        if len(received) > 1:
            os._exit(128 + signum)  # asked twice: the clean way is stuck
        timer = threading.Timer(GRACE, os._exit, (128 + signum,))
        timer.daemon = True
        timer.start()
        app.exit(return_code=0)

    for signum in SIGNALS:
        loop.add_signal_handler(signum, ended_by, signum)
