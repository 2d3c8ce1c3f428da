"""Ending headspace's control clients as a fault would, whichever way they attached."""

from __future__ import annotations

import os
import signal

from headspace_tui.tmux.control import ControlClient


def cut(client: ControlClient) -> None:
    """End a control client as a crash would: its ``tmux -C`` process SIGKILLed (our own child, by its id),
    or a directly attached client's sockets closed without detaching (tmux/direct_attach.py)."""
    proc = getattr(client.pipe, "proc", None)
    if proc is not None:
        os.kill(proc.pid, signal.SIGKILL)
    else:
        client.pipe.abort()  # type: ignore[union-attr]
