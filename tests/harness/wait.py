"""Waiting on a condition with a deadline (for things that are not a screen)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def poll(read: Callable[[], T], accept: Callable[[T], bool], timeout: float = 15.0) -> T:
    """Call ``read`` until ``accept`` holds for its value; return the value."""
    deadline = time.monotonic() + timeout
    value = read()
    while not accept(value):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout}s; last value: {value!r}")
        time.sleep(0.05)
        value = read()
    return value
