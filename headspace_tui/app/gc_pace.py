"""Garbage collection paced for a UI that must answer a key at once.

Measured in the churn soak (40 agents coming and going): CPython's full
collections walked every object the app had (Textual's render caches, rows,
screens) and took 40-250 ms each, about ten times a minute, growing as the
heap did; a key pressed during one waited for it (key-to-screen p95 199 ms).
So, once the app is up:

* what exists then (modules, widgets, styles: objects that live as long as
  the app) is collected once and frozen, so no collection walks it again;
* young objects are collected less often (every 5,000 allocations instead of
  700), so the pauses left are short and rare;
* the middle generation is collected every second, on the app's clock
  (``tick``), not when 20 young collections have filled it.  Measured in the
  soak: left to itself it ran every ~18 s and took 17-85 ms (what it walks
  grows with the time since the last one), and the two slowest keys of three
  minutes (145 and 122 ms) each waited for one.  A second's worth is a few
  ms.  The full collection comes after 60 of those ticks, also on the clock
  (about once a minute, as often as it came by itself; its automatic
  threshold is set out of the way).

Memory stays bounded: garbage is still collected, only later; the soak
checks headspace's RSS over its whole run.  Each full collection first
empties Textual's geometry caches and Rich's cell-width cache
(render_caches.py), which otherwise kept filling for 10-20+ minutes of
churn.  After each full collection the C allocator's free pages are handed back to the system (shared/heap.py),
off the app's loop: without that a loaded machine's churn left RSS at each
burst's high-water mark.

And the full collection comes sooner when garbage piles up: once GROWTH
more small objects are alive than after the last one (and at least
EARLIEST ticks later).  What waits for it is cyclic: widgets of screens
that closed, and what Textual left in cycles of its own (strips that kept
themselves in their own caches, about 2,000 in 45 s with 40 agents coming
and going; the ring of a cleared LRU cache, up to 26,000 objects at once;
both now freed by reference counting, textual_private.py).  On a loaded
machine the ticks come late, the pile grew with the delay, and each new
high-water mark left Python's allocator with arenas it could not give back
(their other blocks still in use): the loaded churn soak's RSS rose in
steps.  Bounding the pile bounds that.

Measured on CPython 3.11 only (3.11.7, the soak's machine, November 2026:
commits "Keys answer during churn" and "Garbage collection's middle
generation every second").  The pacing assumes CPython's three
generations (``gc.collect(1)`` the middle one, ``gc.get_count()[2]`` the
ticks since the last full collection); CPython 3.14's incremental
collector has two, and 3.12 and 3.13 were never measured.  So it
refuses (``refusal``: logged, and said by ``headspace doctor``) on an
interpreter whose collector does not have three generations, or on a
Python minor version outside ``MEASURED_ON``: CPython's own pacing then,
untouched.  To add a version: run the churn soak on it (benchmarks/soak.py),
compare the keys' latency and RSS, then add it here.
"""

from __future__ import annotations

import gc
import logging
import sys
import threading

from ..shared import heap
from . import render_caches

THRESHOLDS = (5000, 20, 1000)  # CPython's defaults: (700, 10, 10); the full collection's is ``tick``'s
TICK = 1.0  # seconds between two collections of the middle generation
FULL_AFTER = 60  # ticks between two full collections
GROWTH = 40_000  # more small objects alive than after the last full collection (about 2.5 MB) that bring the next one forward
EARLIEST = 10  # ticks between two full collections at the least, however fast the heap grows (a legitimately growing heap)

MEASURED_ON = ((3, 11),)  # Python minor versions the pacing was measured on (see above)
GENERATIONS = 3  # CPython's, which the pacing assumes

log = logging.getLogger(__name__)

_alive_after_full = 0  # small objects alive after the last full collection (sys.getallocatedblocks)


def refusal(version: tuple[int, int] | None = None) -> str:
    """Why the pacing must not be applied on this interpreter ("" when it may): not three generations, or a Python it was not measured on."""
    generations = {len(gc.get_threshold()), len(gc.get_count())}
    if generations != {GENERATIONS}:
        found = "/".join(str(n) for n in sorted(generations))
        return f"the collector has {found} generations, not the {GENERATIONS} the pacing assumes"
    major, minor = version or sys.version_info[:2]
    if (major, minor) not in MEASURED_ON:
        measured = ", ".join(f"{a}.{b}" for a, b in MEASURED_ON)
        return f"Python {major}.{minor}: the pacing was measured on {measured} only"
    return ""


def settle() -> bool:
    """Collect and freeze what the app is made of, then pace collections (call once it is up; then ``tick`` every TICK s).

    Whether it did: on an interpreter ``refusal`` names, nothing changes
    (CPython's own pacing stays) and the reason is logged.
    """
    global _alive_after_full
    problem = refusal()
    if problem:
        log.warning("garbage collection left as the interpreter paces it: %s", problem)
        return False
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    _alive_after_full = sys.getallocatedblocks()
    return True


def tick() -> None:
    """The middle generation now (a second's worth: a few ms); every FULL_AFTER ticks the full one, or sooner when garbage piles up."""
    global _alive_after_full
    gc.collect(1)
    ticks = gc.get_count()[2]
    if ticks >= FULL_AFTER or (ticks >= EARLIEST and sys.getallocatedblocks() - _alive_after_full > GROWTH):
        render_caches.empty()  # Textual's and Rich's bounded caches hold a minute's worth, not their slow fill (render_caches.py)
        gc.collect(2)
        _alive_after_full = sys.getallocatedblocks()
        threading.Thread(target=heap.give_back, name="headspace-give-back", daemon=True).start()  # a few ms walking the heaps, off the loop
