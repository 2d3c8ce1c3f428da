"""Telling a sleep of this machine from the clocks (service/watching/sleep_watch.py)."""

from __future__ import annotations

import time

import pytest

from headspace_tui.service.watching.sleep_watch import SLEPT_AFTER, SleepWatch, asleep_so_far


def test_a_sleep_is_told_once_with_its_length_and_jitter_is_not_a_sleep() -> None:
    asleep = [100.0]
    watch = SleepWatch(lambda: asleep[0])
    assert watch.slept() == 0.0
    asleep[0] += SLEPT_AFTER / 2  # a busy machine's scheduling, a small clock slew
    assert watch.slept() == 0.0
    asleep[0] += 3600.0  # the lid closed for an hour
    assert watch.slept() == 3600.0
    assert watch.slept() == 0.0  # said once


def test_the_real_clocks_are_boottime_ahead_of_monotonic() -> None:
    """What is read: CLOCK_BOOTTIME runs on through a suspend, CLOCK_MONOTONIC does not (their gap is the time asleep)."""
    gap = time.clock_gettime(time.CLOCK_BOOTTIME) - time.monotonic()
    assert asleep_so_far() == pytest.approx(gap, abs=0.05)
