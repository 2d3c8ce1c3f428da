"""Garbage collection paced for a UI that must answer a key at once.

Measured in the churn soak (40 agents coming and going): CPython's full
collections walked every object the app had (Textual's render caches, rows,
screens) and took 40-250 ms each, about ten times a minute, growing as the
heap did; a key pressed during one waited for it (key-to-screen p95 199 ms).
So, once the app is up:

* what exists then (modules, widgets, styles: objects that live as long as
  the app) is collected once and frozen, so no collection walks it again;
* young objects are collected less often (every 5,000 allocations instead of
  700, the middle generation after 20 young collections, the full one after
  20 middle ones), so the pauses left are short and rare.

Memory stays bounded: garbage is still collected, only later; the soak
checks headspace's RSS over its whole run.
"""

from __future__ import annotations

import gc

THRESHOLDS = (5000, 20, 20)  # CPython's defaults: (700, 10, 10)


def settle() -> None:
    """Collect and freeze what the app is made of, then pace collections (call once it is up)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
