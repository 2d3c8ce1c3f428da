"""Waiting on a condition with a deadline (for things that are not a screen)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


PAUSE = 0.05  # seconds between two cheap reads
SHARE = 2.0  # a costly read is followed by a pause twice its length: a wait takes at most a third of a core


def poll(read: Callable[[], T], accept: Callable[[T], bool], timeout: float = 15.0) -> T:
    """Call ``read`` until ``accept`` holds for its value; return the value.

    A read that costs time (``headspace status`` is a Python start, about
    0.3 s of a core; without a service it looks at every pane too) is not
    repeated back to back: the pause after a read grows with what it took,
    so a test waiting for a state leaves the machine to the agents and the
    service it waits on (four workers on two cores share it).
    """
    deadline = time.monotonic() + timeout

    def timed() -> tuple[T, float]:
        started = time.monotonic()
        got = read()
        return got, time.monotonic() - started

    value, took = timed()
    while not accept(value):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout}s; last value: {value!r}")
        time.sleep(max(PAUSE, SHARE * took))
        value, took = timed()
    return value
