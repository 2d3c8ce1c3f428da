"""Freed memory handed back to the system, so that a long run's RSS follows what it holds.

Python frees its objects into the C allocator; glibc's malloc keeps freed
pages in its heaps (one per thread that ever allocated: asyncio's
``to_thread`` workers among them) and returns them to the system only
when the top of a heap is free.  A long-running headspace that had, for a
moment, many sessions, connections or screens in memory kept that high-water
mark for good, and scattered small objects that outlive a burst keep whole
pages from going back.  ``malloc_trim(0)`` walks every heap and releases
the free pages inside them as well.

Where the C library has no ``malloc_trim`` (musl, macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library the interpreter runs on
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def give_back() -> bool:
    """Return the allocator's free pages to the system; whether it could (a few ms for a heap of tens of MB).

    ctypes lets go of the GIL for the call, so other threads run meanwhile.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
