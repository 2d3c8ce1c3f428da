"""Textual's geometry caches and Rich's cell-width cache, emptied with each full collection.

Textual keeps the results of its region arithmetic (``Region.overlaps``,
``translate``, ``intersection``, ...) and Rich the width of every string it
measured (``cached_cell_len``) in ``lru_cache``\\s of 1,024-4,096 entries,
each entry holding its arguments alive.  The bound is sound, but under churn
every new layout and every new line of a pane adds entries, so the caches
fill slowly: logged each minute in the loaded churn soak, the width cache
grew by 265-355 entries a minute and was full only at minute 11, and the
busiest region caches (``overlaps``, ``translate``, ``intersection``) were
still growing at minute 20.  That fill is memory a long run keeps for good,
landing after the warm-up, and the app does not need it (an entry takes
about 10 µs to compute again).  Emptied, with the strips freed at once
(textual_private.strips_free_themselves), the soak's growth after minute 2
went from 6.6-7.4 MB an hour to 3.4-5.3 (and to 1.6-2.8 once a cleared
LRU cache freed its ring at once: textual_private.lru_caches_free_on_clear).

So each full collection (about once a minute, gc_pace.py) empties them
first: what they hold is at most a minute's worth, and the memory it took
is reused by the next minute's.  A Textual or Rich upgrade that drops a
cache leaves nothing to empty; one that adds an ``lru_cache`` on these
classes is emptied too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from rich import cells
from textual.geometry import Offset, Region, Size, Spacing


@functools.cache
def caches() -> tuple[Callable[[], None], ...]:
    """Each cache's ``cache_clear``: every ``lru_cache`` on Textual's geometry classes, and Rich's cell widths."""
    found = [getattr(member, "cache_clear", None) for cls in (Region, Size, Offset, Spacing) for member in vars(cls).values()]
    found.append(getattr(cells.cached_cell_len, "cache_clear", None))
    return tuple(clear for clear in found if callable(clear))


def empty() -> None:
    """Empty every one of them (8 ms for 16,000 entries on this machine, once a minute: less than the full collection beside it)."""
    for clear in caches():
        clear()
