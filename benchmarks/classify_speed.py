"""How long the screen reader takes per capture, over every recorded screen.

    python benchmarks/classify_speed.py [--module headspace_tui.detect.claude]
    python benchmarks/classify_speed.py --family qwen      # another family's reader over its own corpus

Best of three runs per screen; prints the mean, p95 and slowest, overall and
at 200x50.  The monitor runs the reader on every changed capture, so this is
the per-pane CPU cost of knowing the state.  Then a hostile screen: the
2000-column Gemini box with long blank rows that once made the option
pattern backtrack for a second per read (tests/unit/test_gemini_screens.py
only checks it stays far from that).
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
    parser.add_argument("--family", help="a family's reader (its record's) over its own corpus, <family>-*/, instead")
    args = parser.parse_args()
    if args.family:
        from headspace_tui.detect.families import family_named

        family = family_named(args.family)
        classify, pattern, command, largest = family.classify, f"{family.name}-*/*/*/*.ansi", "node", "120x40"
    else:
        classify, pattern, command, largest = importlib.import_module(args.module).classify_capture, "claude-*/*/*/*.ansi", "claude", "200x50"
    times: list[tuple[float, str]] = []
    for path in sorted(args.panes.glob(pattern)):
        ansi = path.read_text()
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            classify(ansi, command=command)
            best = min(best, time.perf_counter() - started)
        times.append((best, str(path.relative_to(args.panes))))
    values = sorted(t for t, _ in times)
    big = sorted(t for t, name in times if f"/{largest}/" in name)
    p95 = values[int(len(values) * 0.95)]
    print(
        f"{len(values)} screens: mean {statistics.mean(values) * 1e6:.0f} µs, p95 {p95 * 1e6:.0f} µs, "
        f"slowest {values[-1] * 1e6:.0f} µs ({max(times)[1]}); {largest} mean {statistics.mean(big) * 1e6:.0f} µs"
    )

    hostile()


def hostile() -> None:
    """The Gemini reader on the box of test_hostile_screens_are_read_quickly_and_without_error, best of three."""
    from headspace_tui.detect.gemini import classify_capture

    box = ["╭" + "─" * 1998 + "╮"] + ["│" + " " * 1990 + "1x" + " " * 6 + "│"] * 30 + ["│ ● 1. Allow once" + " " * 1980 + "│", "╰" + "─" * 1998 + "╯"]
    text = "\n".join(box)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        classify_capture(text)
        best = min(best, time.perf_counter() - started)
    print(f"hostile Gemini box (2000 columns, blank rows): {best * 1000:.1f} ms (it took a second before the fix)")


if __name__ == "__main__":
    main()
