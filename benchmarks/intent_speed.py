"""How long intent detection takes per turn (the PRD allows 10 ms), on the labelled set and hostile sizes.

    python benchmarks/intent_speed.py

Best of three runs per text, so a busy moment does not count; prints the
mean and the slowest labelled turn, and each hostile input.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from headspace_tui.state.intent import detect_intent
from tests.unit.test_intent import HOSTILE, HOSTILE_IDS, ROWS


def timed(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        detect_intent("agent", text, "processing")
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    labelled = [timed(row["text"]) for row in ROWS]
    print(f"labelled turns: {len(labelled)}, mean {sum(labelled) / len(labelled) * 1000:.2f} ms, slowest {max(labelled) * 1000:.2f} ms")
    for name, text in zip(HOSTILE_IDS, HOSTILE, strict=True):
        print(f"{name:>12}: {len(text):>7} chars, {timed(text) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
