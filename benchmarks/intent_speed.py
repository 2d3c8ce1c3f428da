"""How long intent detection takes per turn (the PRD allows 10 ms), on the labelled set and hostile sizes; and a state transition (50 ms).

    python benchmarks/intent_speed.py

Best of three runs per text, so a busy moment does not count; prints the
mean and the slowest labelled turn, and each hostile input.  Then 600 turns
through the command state machine (user, progress, completion, repeated):
the mean and the slowest transition (the PRD allows 50 ms; once gated in
tests/unit/test_state_machine.py, which now checks only where they end).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from headspace_tui.state.intent import detect_intent
from headspace_tui.state.machine import AgentCommands, Turn, apply_turn
from tests.unit.test_intent import HOSTILE, HOSTILE_IDS, ROWS


def timed(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        detect_intent("agent", text, "processing")
        best = min(best, time.perf_counter() - started)
    return best


def transitions() -> list[float]:
    """Each of 600 turns' apply_turn, timed (the turns of tests/unit/test_state_machine.py)."""
    script = [("user", "go"), ("agent", "Let me look at the parser and the tests."), ("agent", "I've fixed it; all 12 tests pass.")] * 200
    agent = AgentCommands("a")
    times = []
    for n, (actor, text) in enumerate(script):
        started = time.perf_counter()
        agent, _ = apply_turn(agent, Turn(f"t{n}", actor, text))
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    labelled = [timed(row["text"]) for row in ROWS]
    print(f"labelled turns: {len(labelled)}, mean {sum(labelled) / len(labelled) * 1000:.2f} ms, slowest {max(labelled) * 1000:.2f} ms")
    for name, text in zip(HOSTILE_IDS, HOSTILE, strict=True):
        print(f"{name:>12}: {len(text):>7} chars, {timed(text) * 1000:.2f} ms")
    moved = transitions()
    print(f"state transitions: {len(moved)}, mean {sum(moved) / len(moved) * 1000:.3f} ms, slowest {max(moved) * 1000:.2f} ms (goal: under 50 ms)")


if __name__ == "__main__":
    main()
