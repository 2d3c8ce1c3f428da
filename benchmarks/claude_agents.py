"""What one ``claude agents --json`` call costs: wall time and CPU of the child process.

    python benchmarks/claude_agents.py [--runs 10] [--claude PATH]

headspace asks it only about agents without a status file, at most once per
discovery (and every 30 s per binary and config dir); this says why it is
not asked on every discovery.  Runs with a throwaway HOME, so it lists
nothing and touches nobody's ~/.claude.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from headspace_tui.detect.claude.agents_cli import list_agents
from tests.harness.claude import find_claude


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--claude", help="the binary (default: the pinned test version)")
    args = parser.parse_args()
    binary = args.claude or find_claude()
    walls, cpus = [], []
    with tempfile.TemporaryDirectory(prefix="hs-bench-home-") as home:
        for _ in range(args.runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            asyncio.run(list_agents(binary, {"HOME": home}))
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    print(f"claude agents --json, {args.runs} runs: wall p50 {statistics.median(walls) * 1000:.0f} ms, max {max(walls) * 1000:.0f} ms; CPU p50 {statistics.median(cpus) * 1000:.0f} ms per call")


if __name__ == "__main__":
    main()
