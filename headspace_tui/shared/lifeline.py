"""Children that die with headspace, however headspace ends, and leave nothing behind.

A clean ending (``q``, Ctrl+C, SIGTERM, SIGHUP: see ``app/main.py``) closes
every child itself.  This is the belt and braces for the endings that run no
code of ours (``kill -9``, a crash in C): Linux's ``PR_SET_PDEATHSIG`` asks
the kernel to send the child SIGTERM when its parent dies.  The ssh master
and the probe are started in their own session (a Ctrl+C in headspace's
terminal is not theirs), so nothing else would ever end them.

tmux control clients need it too: tmux 3.3a keeps a control client whose
reader is gone attached forever while its session floods output (62 such
orphans after a soak that killed a headspace every 15 s).

Two caveats, measured or documented: the signal fires when the *thread* that
forked the child ends, not the process, so only children forked on the event
loop's thread (which lives as long as headspace) may use it; and it is reset
by nothing we do (ssh does not exec again).  Elsewhere than Linux it is a
no-op.

``end`` and ``exited`` end a child here without waiting on its pipes (see
``exited`` for why).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    return getattr(libc, "prctl", None)


_PRCTL = _prctl()  # looked up once, here: the child between fork and exec must not load libraries


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the child SIGTERMed when headspace dies (None where there is no prctl).

    Made in the parent, so it knows the parent's pid: a parent that died
    between the fork and the ``prctl`` is noticed and the child exits.
    """
    if _PRCTL is None:
        return None
    prctl, parent = _PRCTL, os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


async def exited(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    """Wait up to ``timeout`` s for ``proc`` to exit; True if it did.

    Not ``proc.wait()``: on Python 3.11 that returns only once every pipe
    of the child is closed too, and a multiplexed ssh client's pipes are held
    open by the master after the client is gone, so ``wait()`` after
    ``kill()`` could hang for as long as the master lived (measured: a hung
    remote python3 froze a host's discovery for good, issue 22).  The exit
    status itself is known as soon as the child is reaped.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while proc.returncode is None and loop.time() < deadline:
        await asyncio.sleep(0.02)
    return proc.returncode is not None


async def end(proc: asyncio.subprocess.Process, grace: float = 2.0, *, terminate: bool = False) -> bool:
    """End our own child by its handle: its stdin closed (or SIGTERM), ``grace`` s, then SIGKILL; our pipe ends closed.

    Returns True if it ended by itself within ``grace`` (False: it had to be killed).
    Cancelled (headspace stopping while it waits), it still releases: that
    kills a child still running, and leaves no transport for the collector.
    """
    try:
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        if terminate and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        by_itself = await exited(proc, grace)
        if not by_itself:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await exited(proc, 5.0)
        return by_itself
    finally:
        release(proc)  # our ends of its pipes, which its holders may keep open


def release(proc: object) -> None:
    """Close an asyncio child's transport once we are done with it.

    asyncio closes a subprocess transport only when it is garbage collected;
    one still referenced when the event loop closes (a control client kept by
    a monitor, say) is collected afterwards and prints ``Exception ignored
    in: BaseSubprocessTransport.__del__ ... Event loop is closed`` on the
    user's terminal as headspace exits (about one quit in twelve).  Closing
    it ourselves, while the loop runs, leaves nothing for later.  (It kills
    the child if it still runs.)
    """
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()
