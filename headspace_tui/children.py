"""The processes headspace starts: they end with it, however it ends, and leave nothing behind.

A tmux control client is told to go by closing its input, which is what
headspace does when it stops.  When headspace dies instead (killed, a
crash), tmux 3.3a does not notice the closed pipes of a client whose
session is flooding output: the client stays attached forever, a process
of ours outliving us on the user's server (measured: 62 of them after a
soak whose second headspace was killed every 15 s).  So each such child
asks the kernel for SIGTERM when its parent dies (Linux's
``PR_SET_PDEATHSIG``); a tmux client ends cleanly on SIGTERM, as when its
terminal closes.  Elsewhere (no prctl) this does nothing.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def _prctl() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()  # looked up once, in the parent: the child only calls it


def end_with_parent(parent: int | None = None) -> None:
    """For ``preexec_fn``: SIGTERM this child when the thread that started it ends.

    If the parent is already gone when this runs (it died between fork and
    here), end at once rather than live on as an orphan.
    """
    if _PRCTL is None:
        return
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # type: ignore[operator]
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def preexec() -> Callable[[], None]:
    """A ``preexec_fn`` bound to this process as the parent."""
    parent = os.getpid()
    return lambda: end_with_parent(parent)


def release(proc: object) -> None:
    """Close an asyncio child's transport once we are done with it.

    asyncio closes a subprocess transport only when it is garbage collected;
    one still referenced when the event loop closes (a control client kept by
    a monitor, say) is collected afterwards and prints ``Exception ignored
    in: BaseSubprocessTransport.__del__ ... Event loop is closed`` on the
    user's terminal as headspace exits.  Closing it ourselves, while the loop
    runs, leaves nothing for later.  (It kills the child if it still runs.)
    """
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()
