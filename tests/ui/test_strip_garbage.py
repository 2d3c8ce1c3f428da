"""Strips that are freed when let go, not left for the full garbage collection.

Textual's ``Strip.crop_extend`` and ``Strip.divide`` remember their result
in the strip's own cache, and when nothing needs cutting the result is the
strip itself: a cycle that only a full collection breaks.  In the loaded
churn soak that garbage (up to 17,000 objects a minute: FIFOCache, Strip,
Segment) was the larger part of the heap's swing between collections, and
the swing's highest mark stays in RSS (issue 41).  ``strips_free_themselves``
(app/textual_private.py) stops the self-caching; these tests hold it, on
the strips alone and on the app drawing its table and preview.
"""

from __future__ import annotations

import asyncio
import gc
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from rich.segment import Segment
from rich.style import Style
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


def test_the_app_drawing_its_table_and_preview_leaves_no_strip_in_a_cycle():
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            panes = [agent.pane_id for agent in app.service.agents()][:6]
            assert len(panes) >= 3

            async def browse() -> None:  # every selection redraws the preview and the table's rows
                for pane in panes * 3:
                    app.table.select(pane)
                    await wait_until(pilot, lambda pane=pane: app.table.selected_pane_id == pane, f"{pane} selected", every=0.01)
                    await pilot.pause(0.05)

            await browse()  # warm: what stays drawn is not garbage
            with cycles_found() as found:
                await browse()
            # Without strips_free_themselves: hundreds of strips, each with its seven caches.
            assert found["Strip"] <= 5, f"{found['Strip']} strips freed only by a full collection ({found.most_common(6)})"

    asyncio.run(scenario())
