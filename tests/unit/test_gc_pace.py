"""Garbage collection on the app's clock (app/gc_pace.py): the middle generation every tick, the full one every FULL_AFTER ticks.

Left to CPython the middle generation ran every ~18 s in the churn soak and
took 17-85 ms; the two slowest keys of the run waited for one.  Collected
every second it took 4 ms (p50), 13 ms at most.  This checks the pacing
itself: the automatic full collection is out of the way, each tick
collects the middle generation, and the full one comes on the clock.
"""

from __future__ import annotations

import gc
import threading

import pytest

from headspace_tui.app import gc_pace


@pytest.fixture
def paced():
    before = gc.get_threshold()
    gc.set_threshold(*gc_pace.THRESHOLDS)  # as settle() leaves it (without freezing pytest's own heap)
    seen: list[int] = []

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*before)


def test_each_tick_collects_the_middle_generation_and_every_full_after_ticks_the_full_one(paced, monkeypatch):
    given_back = threading.Event()
    monkeypatch.setattr(gc_pace.heap, "give_back", given_back.set)
    gc.collect()  # a known start: the full count at 0
    paced.clear()
    for _ in range(gc_pace.FULL_AFTER - 1):
        gc_pace.tick()
    assert paced.count(1) == gc_pace.FULL_AFTER - 1 and 2 not in paced
    assert not given_back.wait(0.2), "the allocator's pages are handed back after a full collection only"
    gc_pace.tick()
    assert paced.count(2) == 1, "the full collection did not come on the clock"
    assert gc.get_count()[2] == 0
    assert given_back.wait(5), "the full collection's garbage stayed in the allocator (shared/heap.py)"


def test_the_full_collection_never_comes_by_itself_before_the_clock_says():
    assert gc_pace.THRESHOLDS[2] > gc_pace.FULL_AFTER * 10
