"""What the app draws is freed when let go, not left for the full garbage collection.

Garbage in reference cycles waits for a full collection; in the loaded
churn soak the pile it made between two collections was the heap's swing,
and the swing's highest mark stays in RSS (issue 41).  Two of Textual's
habits made most of it, and app/textual_private.py undoes each:

* ``Strip.crop_extend`` and ``Strip.divide`` remember their result in the
  strip's own cache, and when nothing needs cutting the result is the strip
  itself (up to 17,000 objects a minute: FIFOCache, Strip, Segment);
  ``strips_free_themselves`` stops the self-caching.
* ``LRUCache.clear`` leaves its ring of links holding itself and every value
  cached: DataTable clears its render caches when its columns change, and
  one clear left 18,000-26,000 objects at once, at the same minute in every
  run of a seed; ``lru_caches_free_on_clear`` breaks the ring.

These tests hold both, on Textual's parts alone and on the app drawing its
table and preview.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.strip import Strip

from headspace_tui.app import textual_private
from tests.ui.apps import demo_app, wait_until


@contextmanager
def cycles_found() -> Iterator[Counter[str]]:
    """What a full collection finds unreachable (only in cycles) of what the block made and let go, by type."""
    found: Counter[str] = Counter()
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield found
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found.update(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def test_a_strip_that_is_its_own_crop_or_division_is_freed_by_reference_counting():
    textual_private.strips_free_themselves()

    def use() -> None:
        strip = Strip([Segment("hello", Style(bold=True)), Segment(" world")])
        assert strip.crop_extend(0, strip.cell_length, None) is strip  # nothing to cut: the strip itself
        assert strip.divide([strip.cell_length]) == [strip]
        assert strip.divide(iter([strip.cell_length, 99])) == [strip]  # cuts past the end are dropped, any iterable

    with cycles_found() as found:
        use()
    assert found["Strip"] == 0


def test_a_real_cut_is_still_remembered():
    textual_private.strips_free_themselves()
    strip = Strip([Segment("hello world")])
    wider = strip.crop_extend(0, 20, None)
    assert wider is not strip and wider.cell_length == 20
    assert strip.crop_extend(0, 20, None) is wider  # from the cache
    halves = strip.divide([5, 11])
    assert [s.text for s in halves] == ["hello", " world"]
    assert strip.divide([5, 11]) is halves


async def select_each(app, pilot, panes: list[str]) -> None:
    """Select each pane in turn, as a user browsing the table: every selection redraws the preview and the table's rows."""
    for pane in panes:
        app.table.select(pane)
        await wait_until(pilot, lambda pane=pane: app.table.selected_pane_id == pane, f"{pane} selected", every=0.01)
        await pilot.pause(0.05)


def test_the_app_drawing_its_table_and_preview_leaves_no_strip_in_a_cycle():
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            panes = [agent.pane_id for agent in app.service.agents()][:6]
            assert len(panes) >= 3
            await select_each(app, pilot, panes * 3)  # warm: what stays drawn is not garbage
            with cycles_found() as found:
                await select_each(app, pilot, panes * 3)
            # Without strips_free_themselves: 890 strips, each with its seven caches (measured with Textual's own methods).
            # With it, a few that depend on which frames the compositor drew between the moves: 0 to 5 on a quiet machine,
            # 8 with a core kept busy. The bound tells the two apart whatever the load.
            assert found["Strip"] <= 50, f"{found['Strip']} strips freed only by a full collection ({found.most_common(6)})"

    asyncio.run(scenario())


class _Value:
    """A cached value that can be watched with a weak reference."""


def test_a_cleared_lru_cache_frees_its_values_by_reference_counting():
    textual_private.lru_caches_free_on_clear()
    cache: LRUCache[int, _Value] = LRUCache(8)
    values = [_Value() for _ in range(12)]  # more than it holds: the oldest four are evicted
    for n, value in enumerate(values):
        cache.set(n, value)
    watched = [weakref.ref(value) for value in values]
    del values, value
    with cycles_found() as found:
        assert sum(ref() is not None for ref in watched) == 8
        cache.clear()
        assert [ref() for ref in watched] == [None] * 12, "a value outlived the clear"
    assert found["list"] == 0 and found["_Value"] == 0
    cache.set(1, _Value())  # and the cache works as before after it
    assert 1 in cache and len(cache) == 1
    cache.clear()
    assert len(cache) == 0 and cache.get(1) is None


def test_the_table_replanning_its_columns_leaves_no_rendered_row_in_a_cycle():
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(160, 40)) as pilot:
            await app.snapshot_loader(pilot)
            panes = [agent.pane_id for agent in app.service.agents()][:6]
            await select_each(app, pilot, panes)  # rows drawn with the cursor on each: the render caches fill

            def widths() -> list[tuple[object, int]]:
                return [(key, column.width) for key, column in app.table.columns.items()]

            wide = widths()
            with cycles_found() as found:
                await pilot.resize_terminal(110, 40)  # narrower: the columns are planned again and the table rebuilt
                await wait_until(pilot, lambda: widths() != wide, "columns replanned", every=0.05)
                await pilot.pause(0.2)
            # Without lru_caches_free_on_clear: every cached row's renderables, strips and segments.
            assert found["RowRenderables"] == 0, f"{found['RowRenderables']} rows' renderables freed only by a full collection ({found.most_common(8)})"
            assert found["Segment"] <= 50, f"{found['Segment']} segments freed only by a full collection ({found.most_common(8)})"

    asyncio.run(scenario())
