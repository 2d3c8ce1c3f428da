"""The event log's memory stays small however big the log grows (state/eventlog.py, ``cache_size``).

SQLite keeps the pages it wrote in its page cache, 2 MB by default; in the
churn soak the log grew about 185 KB a minute and headspace's C heap grew
with it (a part of the loaded soak's slow growth).  Measured here in the C heap
itself (glibc's ``mallinfo2``: SQLite allocates with ``malloc``, which
tracemalloc does not see): 20,000 events (a 3.5 MB log) grew it by
2.04 MB with SQLite's default and 0.18 MB with the log's own cache size.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import pytest

from headspace_tui.state.eventlog import EventLog


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def _c_heap_in_use() -> float:
    """MB the C allocator has handed out and not had back (small blocks and mmapped ones)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    if not hasattr(libc, "mallinfo2"):
        pytest.skip("no glibc mallinfo2 here (glibc 2.33 or later): the C heap cannot be measured")
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 1e6


def test_a_growing_log_does_not_grow_the_c_heap_with_it(tmp_path):
    log = EventLog(tmp_path / "events.db")
    log.write("state", "agent-0", {"state": "idle"})
    before = _c_heap_in_use()
    for n in range(20_000):
        log.write("state", f"agent-{n % 500}", {"state": "working", "pane": f"%{n}", "why": "x" * 40})
    grown = _c_heap_in_use() - before
    assert (tmp_path / "events.db").stat().st_size + (tmp_path / "events.db-wal").stat().st_size > 3_000_000, "the log did not grow"
    assert grown < 1.0, f"the C heap grew {grown:.2f} MB with a 3.5 MB log (SQLite's default page cache: about 2)"
    assert [event.payload["pane"] for event in log.query(agent="agent-7", limit=2)] == ["%19007", "%19507"]  # and it still reads
