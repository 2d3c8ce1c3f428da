"""Garbage collection on the app's clock (app/gc_pace.py): the middle generation every tick, the full one every FULL_AFTER ticks.

Left to CPython the middle generation ran every ~18 s in the churn soak and
took 17-85 ms; the two slowest keys of the run waited for one.  Collected
every second it took 4 ms (p50), 13 ms at most.  This checks the pacing
itself: the automatic full collection is out of the way, each tick
collects the middle generation, and the full one comes on the clock.
"""

from __future__ import annotations

import gc
import sys
import threading

import pytest

from headspace_tui.app import gc_pace


@pytest.fixture
def paced(monkeypatch):
    before = gc.get_threshold()
    gc.set_threshold(*gc_pace.THRESHOLDS)  # as settle() leaves it (without freezing pytest's own heap)
    gc.collect()
    monkeypatch.setattr(gc_pace, "_alive_after_full", sys.getallocatedblocks())
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


class _Cyclic:
    """Garbage only a full collection frees once it has aged into the oldest generation (as Textual's strips do)."""

    def __init__(self) -> None:
        self.me = self


def test_a_pile_of_old_garbage_brings_the_full_collection_forward_but_not_before_earliest_ticks(paced, monkeypatch):
    monkeypatch.setattr(gc_pace.heap, "give_back", lambda: None)
    pile = [_Cyclic() for _ in range(gc_pace.GROWTH)]
    gc.collect(1)
    gc.collect(1)  # aged into the oldest generation, as a cached strip is by the time a cache lets it go
    del pile
    paced.clear()
    for _ in range(gc_pace.EARLIEST - 1 - gc.get_count()[2]):  # the ticks since the last full collection count
        gc_pace.tick()
    assert 2 not in paced, "a full collection sooner than EARLIEST ticks"
    assert sum(isinstance(o, _Cyclic) for o in gc.get_objects()) == gc_pace.GROWTH, "the pile was collected by something else"
    gc_pace.tick()
    assert paced.count(2) == 1, "the pile did not bring the full collection forward"
    assert not any(isinstance(o, _Cyclic) for o in gc.get_objects())
    paced.clear()
    for _ in range(gc_pace.EARLIEST * 2):
        gc_pace.tick()
    assert 2 not in paced, "a full collection with nothing piled up"


def test_the_full_collection_never_comes_by_itself_before_the_clock_says():
    assert gc_pace.THRESHOLDS[2] > gc_pace.FULL_AFTER * 10


def test_the_full_collection_empties_textuals_geometry_caches_and_richs_cell_widths_first(paced, monkeypatch):
    # Bounded caches that fill slowly under churn (10-40 minutes in the loaded soak) kept their fill in RSS for
    # good; each full collection empties them (app/render_caches.py), and only the full one does.
    from rich.cells import cached_cell_len
    from textual.geometry import Region

    monkeypatch.setattr(gc_pace.heap, "give_back", lambda: None)

    def fill() -> None:
        for n in range(300):
            Region(n, 0, 10, 5).overlaps(Region(0, n, 3, 3))
            Region(n, 1, 4, 4).translate((n, 2))
            cached_cell_len(f"a line of pane {n}")

    def held() -> list[int]:
        return [Region.overlaps.cache_info().currsize, Region.translate.cache_info().currsize, cached_cell_len.cache_info().currsize]

    fill()
    gc.collect()  # a known start: the full count at 0
    paced.clear()
    assert all(size >= 300 for size in held())
    for _ in range(gc_pace.FULL_AFTER - 1):
        gc_pace.tick()
    assert all(size >= 300 for size in held()), "a tick without the full collection emptied the caches"
    gc_pace.tick()
    assert paced.count(2) == 1
    assert held() == [0, 0, 0]


def test_the_pacing_applies_on_the_python_it_was_measured_on_only():
    assert gc_pace.refusal((3, 11)) == ""
    assert gc_pace.refusal((3, 13)) == "Python 3.13: the pacing was measured on 3.11 only"
    assert gc_pace.refusal((3, 14)) == "Python 3.14: the pacing was measured on 3.11 only"
    assert gc_pace.refusal() == ("" if sys.version_info[:2] in gc_pace.MEASURED_ON else f"Python {sys.version_info[0]}.{sys.version_info[1]}: the pacing was measured on 3.11 only")


def test_a_collector_without_three_generations_is_left_alone_and_the_reason_logged(monkeypatch, caplog):
    # CPython 3.14's incremental collector has a young and an old generation; what the pacing calls the middle one is not there.
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    monkeypatch.setattr(gc, "get_threshold", lambda: (2000, 10))
    monkeypatch.setattr(gc, "get_count", lambda: (3, 0))
    assert gc_pace.refusal((3, 11)) == "the collector has 2 generations, not the 3 the pacing assumes"
    with caplog.at_level("WARNING", logger=gc_pace.__name__):
        assert gc_pace.settle() is False
    monkeypatch.undo()
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen, "settle changed the collector it refused"
    assert "garbage collection left as the interpreter paces it: the collector has 2 generations" in caplog.text


def test_an_unmeasured_python_is_refused_by_settle(monkeypatch, caplog):
    before = gc.get_threshold()
    monkeypatch.setattr(gc_pace, "MEASURED_ON", ((3, 99),))
    with caplog.at_level("WARNING", logger=gc_pace.__name__):
        assert gc_pace.settle() is False
    assert gc.get_threshold() == before
    assert f"Python {sys.version_info[0]}.{sys.version_info[1]}: the pacing was measured on 3.99 only" in caplog.text
