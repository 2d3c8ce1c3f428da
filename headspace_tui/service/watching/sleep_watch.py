"""Noticing that this machine slept (a laptop's lid closed), so remote links are redone at once on waking.

While the machine is suspended nothing runs, ssh's keepalive included; on
waking, a link to a remote host still looks up, and after a sleep it is
often dead (the laptop woke on another network, or the server dropped it).
ssh would learn so from its keepalive 3 s later, and the rows, an hour
old, would look live until then. Waking is told by the clocks instead:
``CLOCK_MONOTONIC`` stops during a suspend and ``CLOCK_BOOTTIME`` does not,
so their difference grows by the time asleep (on a system without
``CLOCK_BOOTTIME`` the wall clock stands in, which a large clock step also
moves: one needless reconnect).

Pure: the clock is a function, so tests can make the machine "sleep".
"""

from __future__ import annotations

import time
from collections.abc import Callable

SLEPT_AFTER = 2.0  # the clocks drifting apart by this much between two looks is a sleep, not scheduling jitter
LOOK_EVERY = 1.0  # seconds between two looks (a sleep is told within this of waking)


def asleep_so_far() -> float:
    """Seconds this machine has been suspended since it booted (give or take a constant)."""
    boot = getattr(time, "CLOCK_BOOTTIME", None)
    now = time.clock_gettime(boot) if boot is not None else time.time()
    return now - time.monotonic()


class SleepWatch:
    """Says, at each look, how long the machine slept since the last one (0 when it did not)."""

    def __init__(self, asleep: Callable[[], float] | None = None) -> None:
        self._asleep = asleep or (lambda: asleep_so_far())  # looked up at each look: a test may stand in for the clocks
        self._last = self._asleep()

    def slept(self) -> float:
        now = self._asleep()
        gone, self._last = now - self._last, now
        return gone if gone >= SLEPT_AFTER else 0.0
