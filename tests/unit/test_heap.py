"""Freed memory goes back to the system (shared/heap.py), so that a long run's RSS follows what it holds.

A real process: it allocates 100 MB in pieces the C allocator serves from
its heap (1 KB buffers), frees all but every 500th (what a burst leaves
behind), and its RSS is read before and after ``give_back``.  glibc keeps
the freed pages (the scattered survivors pin the heap's top) until asked.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

PROGRAM = """
import gc, json
from headspace_tui.shared import heap

def rss_mb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024

burst = [bytearray(1000) for _ in range(100_000)]
survivors = burst[::500]
del burst
gc.collect()
before = rss_mb()
could = heap.give_back()
print(json.dumps({"before": before, "after": rss_mb(), "could": could, "kept": len(survivors)}))
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_a_bursts_freed_memory_is_handed_back():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(done.stdout)
    assert seen["could"] is True
    assert seen["before"] - seen["after"] > 50, f"RSS {seen['before']:.1f} -> {seen['after']:.1f} MB: the freed 100 MB stayed"
