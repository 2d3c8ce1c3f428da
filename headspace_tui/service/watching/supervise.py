"""Long-lived tasks that come back after an error.

A bare ``asyncio`` task that raises is gone for good and says nothing: one
bad reading froze a session's rows for the rest of the run.  Every loop the
monitor keeps (discovery, a session's detector, a file watcher) runs under a
``Supervisor`` instead: an error is logged once with its traceback (to the
log file), told to the user as one line, and the loop starts again after a
back-off that doubles up to a limit and resets once the loop has run well
for a while.  Cancelling ends it, as with any task.

No Textual here; the clock and the sleep are injectable so tests can drive
the back-off without waiting.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

FIRST_DELAY = 0.5
MAX_DELAY = 30.0
HEALTHY_AFTER = 60.0  # a loop that ran this long before failing starts again at once
CANCEL_AGAIN = 0.5  # a loop still running this long after its cancel is cancelled again
CANCEL_GIVE_UP = 10.0  # ...and not waited for after this long (said in the log)


@dataclass
class Backoff:
    """How long to wait before the next start: doubling after quick failures, reset after a good run."""

    first: float = FIRST_DELAY
    limit: float = MAX_DELAY
    healthy_after: float = HEALTHY_AFTER
    _next: float = 0.0

    def after_failure(self, ran_for: float) -> float:
        if ran_for >= self.healthy_after:
            self._next = 0.0
        delay = self._next
        self._next = min(self.limit, max(self.first, self._next * 2))
        return delay


class Supervisor:
    """Runs named loops; restarts each one that raises.

    ``on_error(name, message)`` is called with one human line per failure
    (never the traceback: that goes to the log).  A loop that returns
    normally is done and is not restarted.
    """

    def __init__(
        self,
        on_error: Callable[[str, str], None] = lambda name, message: None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        backoff: Callable[[], Backoff] = Backoff,
    ) -> None:
        self.on_error = on_error
        self.clock = clock
        self.sleep = sleep
        self.backoff = backoff
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.failures: dict[str, int] = {}

    def start(self, name: str, loop: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
        """Run ``loop()`` as ``name`` (replacing nothing: a running one of that name is kept)."""
        task = self.tasks.get(name)
        if task is None or task.done():
            task = self.tasks[name] = asyncio.create_task(self._keep(name, loop), name=f"headspace:{name}")
        return task

    def running(self, name: str) -> bool:
        task = self.tasks.get(name)
        return task is not None and not task.done()

    async def _keep(self, name: str, loop: Callable[[], Awaitable[None]]) -> None:
        backoff = self.backoff()
        while True:
            started = self.clock()
            try:
                await loop()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.failures[name] = self.failures.get(name, 0) + 1
                log.error("%s stopped on an error; starting it again", name, exc_info=exc)
                self.on_error(name, f"{name} stopped on an error ({type(exc).__name__}: {exc}); restarted")
                await self.sleep(backoff.after_failure(self.clock() - started))

    async def cancel(self, name: str) -> None:
        task = self.tasks.pop(name, None)
        if task is not None:
            await end(task)

    async def stop(self) -> None:
        """Cancel every loop and wait for each (they release what they hold in ``finally``)."""
        tasks = list(self.tasks.values())
        self.tasks.clear()
        await asyncio.gather(*(end(task) for task in tasks))


async def end(task: asyncio.Task, *, again_after: float = CANCEL_AGAIN, give_up_after: float = CANCEL_GIVE_UP) -> None:
    """Cancel ``task`` and wait for it, cancelling again while it runs on, never waiting forever.

    Python 3.11's ``asyncio.wait_for`` loses a cancellation that arrives as
    its inner wait completes, and a loop around it then simply goes on: an
    unbounded wait for such a task is how one remote host stayed
    "reconnecting" for good (its discovery waited on a detector).  A task
    still running after ``give_up_after`` is logged and left cancelled.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + give_up_after
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=min(again_after, max(0.0, deadline - loop.time())))
        if loop.time() >= deadline and not task.done():
            log.error("%s ignored its cancellation for %.0f s; left behind", task.get_name(), give_up_after)
            return
    if not task.cancelled() and task.exception() is not None:
        log.debug("%s ended on %r", task.get_name(), task.exception())
