"""SIGTERM, SIGHUP, SIGINT and a terminal that is gone end headspace the way ``q`` does.

Python's default for the signals is to die on the spot: no ``finally``, no
unmount, so every remote host's ssh master (in its own session, so the
terminal's hangup never reaches it) lived on under init, connected, with its
control folder in /tmp (issue 22).  A closed terminal is a SIGHUP; ``kill``
and service managers send SIGTERM.  They now ask the app to exit, which runs
the same shutdown as ``q``: every monitor stops, every tmux control client
detaches, every probe and master is ended, every control folder removed.

A terminal can also go without a SIGHUP reaching us (headspace not in the
terminal's session: started through ``setsid``, a wrapper, a terminal that
passes its descriptors on).  Then the input reads end-of-file for ever:
Textual's reader spins on it (a quarter of a core) and the app never ends,
its control clients attached for good.  ``watch_terminal`` waits on the
terminal for its hangup (``poll`` with no events asked: it reads nothing of
the user's keys) and ends the app as a SIGHUP would.

If that shutdown itself hangs (a terminal that is gone can block a write), a
second SIGTERM or SIGINT, or a deadline, ends the process anyway (a hangup
is seen twice as a rule, the signal and the terminal's end, and is no
second request).  The deadline is short after a hangup (``HANGUP_GRACE``:
the terminal is gone, nobody waits for it) and long after SIGTERM or
SIGINT (``GRACE``): the terminal is still there, and ending the process
before Textual has put it back (raw mode, the alternate screen, mouse
reports) would leave it unusable.  The ssh
children still die with it (``lifeline.die_with_parent``), and what a
shutdown cut short leaves (an empty control folder, a socket) is swept by the
next start (cli/leftovers.py).
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import sys
import threading
from collections.abc import Callable

from textual.app import App

GRACE = 10.0  # seconds the clean shutdown may take after SIGTERM or SIGINT before the process ends regardless (it takes ~0.3)
HANGUP_GRACE = 1.8  # the same after a hangup: the terminal is gone, so nothing is left to put back
SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)  # SIGINT: `kill -INT`; the Ctrl+C key is a key in raw mode
HUNG_UP = select.POLLHUP | select.POLLERR | select.POLLNVAL


def end_on_signals(app: App) -> None:
    """On the app's loop (``on_mount``): SIGTERM / SIGHUP / SIGINT and the terminal's hangup exit the app cleanly, with a deadline."""
    loop = asyncio.get_running_loop()
    received: list[int] = []

    def ended_by(signum: int) -> None:
        received.append(signum)
        if len(received) > 1:
            if signum != signal.SIGHUP:
                os._exit(128 + signum)  # asked twice: the clean way is stuck
            return  # a hangup comes more than once (the signal, the terminal's own end): its deadline decides
        timer = threading.Timer(HANGUP_GRACE if signum == signal.SIGHUP else GRACE, os._exit, (128 + signum,))
        timer.daemon = True
        timer.start()
        app.exit(return_code=0)

    for signum in SIGNALS:
        loop.add_signal_handler(signum, ended_by, signum)
    terminal = _terminal_fd()
    if terminal is not None:
        threading.Thread(target=watch_terminal, args=(terminal, lambda: _call_soon(loop, ended_by, signal.SIGHUP)), daemon=True, name="terminal-hangup").start()


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[int], None], signum: int) -> None:
    """``callback(signum)`` on the loop, unless the loop has already closed (the app ended first: nothing to end)."""
    try:
        loop.call_soon_threadsafe(callback, signum)
    except RuntimeError:
        pass


def _terminal_fd() -> int | None:
    for stream in (sys.__stdin__, sys.__stdout__):
        try:
            if stream is not None and os.isatty(stream.fileno()):
                return stream.fileno()
        except (OSError, ValueError):
            continue
    return None


def watch_terminal(fd: int, hung_up: Callable[[], object]) -> None:
    """Block until the terminal on ``fd`` hangs up, then call ``hung_up`` (once); a thread's whole life."""
    poller = select.poll()
    poller.register(fd, 0)  # no events asked: only a hangup or an error is reported, and no input is taken
    while True:
        try:
            events = poller.poll()
        except InterruptedError:
            continue
        except OSError:
            return
        if any(mask & HUNG_UP for _fd, mask in events):
            hung_up()
            return
