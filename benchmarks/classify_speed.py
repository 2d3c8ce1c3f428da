"""How long the screen reader takes per capture, over every recorded screen.

    python benchmarks/classify_speed.py [--module headspace_tui.detect.claude]

Best of three runs per screen; prints the mean, p95 and slowest, overall and
at 200x50.  The monitor runs the reader on every changed capture, so this is
the per-pane CPU cost of knowing the state.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", default="headspace_tui.detect.claude", help="where classify_capture lives")
    parser.add_argument("--panes", type=Path, default=ROOT / "snapshots" / "panes")
    args = parser.parse_args()
    classify = importlib.import_module(args.module).classify_capture
    times: list[tuple[float, str]] = []
    for path in sorted(args.panes.glob("claude-*/*/*/*.ansi")):
        ansi = path.read_text()
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            classify(ansi, command="claude")
            best = min(best, time.perf_counter() - started)
        times.append((best, str(path.relative_to(args.panes))))
    values = sorted(t for t, _ in times)
    big = sorted(t for t, name in times if "/200x50/" in name)
    p95 = values[int(len(values) * 0.95)]
    print(f"{len(values)} screens: mean {statistics.mean(values) * 1e6:.0f} µs, p95 {p95 * 1e6:.0f} µs, "
          f"slowest {values[-1] * 1e6:.0f} µs ({max(times)[1]}); 200x50 mean {statistics.mean(big) * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
