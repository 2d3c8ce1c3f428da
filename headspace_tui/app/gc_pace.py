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
checks headspace's RSS over its whole run.  After each full collection
the C allocator's free pages are handed back to the system (shared/heap.py),
off the app's loop: without that a loaded machine's churn left RSS at each
burst's high-water mark.
"""

from __future__ import annotations

import gc
import threading

from ..shared import heap

THRESHOLDS = (5000, 20, 1000)  # CPython's defaults: (700, 10, 10); the full collection's is ``tick``'s
TICK = 1.0  # seconds between two collections of the middle generation
FULL_AFTER = 60  # ticks between two full collections


def settle() -> None:
    """Collect and freeze what the app is made of, then pace collections (call once it is up; then ``tick`` every TICK s)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


def tick() -> None:
    """The middle generation now (a second's worth: a few ms); every FULL_AFTER ticks, the full one."""
    gc.collect(1)
    if gc.get_count()[2] >= FULL_AFTER:
        gc.collect(2)
        threading.Thread(target=heap.give_back, name="headspace-give-back", daemon=True).start()  # a few ms walking the heaps, off the loop
