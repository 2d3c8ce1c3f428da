"""An end that always ends: once the service decides to end, the process is gone within one deadline, whatever it waits on.

Seen in a storm soak: one service of twenty-six outlived its tmux server by
twenty minutes, its loop idle, no "service ended" line, deaf to SIGTERM (the
signal only asks for an end already under way).  Its shutdown waited on
something that never came back: a thread blocked in a tmux call (a thread
cannot be cancelled, and ``asyncio.run`` and the interpreter's exit both
join the executor's threads), a coroutine that swallowed its cancellation,
a connection that never closed.  Finding each such wait is worth doing,
but no list of them can be complete, so the end is bounded from outside
the loop:

* ``Deadline.start`` (called by the first ``end``) arms a daemon timer: if
  the process still runs ``DEADLINE`` seconds later, the timer says in the
  log what the main thread was doing (its stack), runs the last cleanup it
  was given (the socket and card of the service, so the next one starts at
  once), flushes the log and ends the process with ``os._exit``;
* a second signal while ending does the same at once (the user's Ctrl+C
  pressed twice, a supervisor's second TERM).

No Textual, no asyncio: a thread and a clock, so a stuck loop cannot hold
it back.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable

DEADLINE = 5.0  # seconds from the decision to end to the end of the process, at most

log = logging.getLogger(__name__)


def _flush_logs() -> None:
    for handler in logging.getLogger().handlers:
        try:
            handler.flush()
        except (OSError, ValueError):  # a log that cannot be written must not keep the process alive
            pass


class Deadline:
    """The bound on one service's end: armed once, fired by its timer or by a second signal."""

    def __init__(self, cleanup: Callable[[], None], seconds: float = DEADLINE, *, exit_code: int = 0, describe: Callable[[], str] | None = None) -> None:
        self.cleanup = cleanup  # what must not be left behind (the socket, the card): safe to call twice
        self.describe = describe  # what the loop's tasks wait on (the main thread's stack only shows the loop)
        self.seconds = seconds
        self.exit_code = exit_code
        self.why = ""
        self.ended = False  # the service's end is logged: what is left is the process's own exit
        self._timer: threading.Timer | None = None
        self._fired = threading.Lock()

    @property
    def armed(self) -> bool:
        return self._timer is not None

    def start(self, why: str) -> None:
        """The service decided to end (``why``): from now on it has ``seconds`` to do so."""
        if self._timer is not None:
            return
        self.why = why
        self._timer = threading.Timer(self.seconds, self.fire, (f"its shutdown took longer than {self.seconds:g}s",))
        self._timer.daemon = True
        self._timer.name = "headspace-end-deadline"
        self._timer.start()

    def done(self) -> None:
        """The service ended and said so; the timer stays armed for the process's own exit (which joins every thread)."""
        self.ended = True

    def again(self, signal_name: str) -> None:
        """A signal while ending: end now."""
        self.fire(f"{signal_name} again while ending")

    def fire(self, how: str) -> None:
        """End the process now, saying why and what it was waiting on."""
        if not self._fired.acquire(blocking=False):
            return
        main = sys._current_frames().get(threading.main_thread().ident or -1)
        waiting = "".join(traceback.format_stack(main)[-6:]) if main is not None else "(no main thread)\n"
        if self.describe is not None:
            try:
                waiting += self.describe()
            except Exception as exc:  # noqa: BLE001 - a look from another thread may race the loop; the end goes on
                waiting += f"(its tasks could not be listed: {exc})\n"
        log.warning("ending at once: %s; the main thread was at:\n%s", how, waiting.rstrip())
        try:
            self.cleanup()
        except Exception:
            log.exception("the last cleanup failed")
        if not self.ended:
            log.info("service ended: %s (%s)", self.why or "ended", how)
        _flush_logs()
        os._exit(self.exit_code)
