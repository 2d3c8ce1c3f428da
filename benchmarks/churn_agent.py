"""A short-lived stand-in for a Claude Code agent, for the churn soak (soak.py).

It lives LIFE seconds, drawing real recorded Claude screens (the corpus) in a
random order: its input box, a working spinner redrawn in bursts, a
permission menu, a question; then it exits, as an agent that finished or
was closed does.  Each choice comes from SEED, so a run can be repeated.

Run as ``exec -a claude python3 -S churn_agent.py CORPUS_DIR SEED LIFE`` so
the process tree shows a ``claude`` like a real agent.  Standard library only.
"""

import os
import random
import sys
import time

CORPUS, SEED, LIFE = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
GLYPHS = "✢✳✶✻✽"
SCREENS = ("idle_fresh", "working_spinner", "permission_bash", "question_two_options", "idle_finished")


def screen(name: str) -> str:
    try:
        with open(os.path.join(CORPUS, f"{name}.ansi"), encoding="utf-8") as handle:
            rows = handle.read().rstrip("\n").split("\n")
    except OSError:
        rows = [f"(no recorded screen {name})"]
    return "\x1b[H\x1b[2J" + "\r\n".join(rows)


def draw(text: str) -> None:
    os.write(1, text.encode())


def main() -> None:
    rng = random.Random(SEED)
    drawn = {name: screen(name) for name in SCREENS}
    end = time.monotonic() + LIFE
    tick = 0
    while time.monotonic() < end:
        name = rng.choice(SCREENS)
        draw(drawn[name])
        hold = min(rng.uniform(1.0, 8.0), max(0.0, end - time.monotonic()))
        if name != "working_spinner":
            time.sleep(hold)
            continue
        until = time.monotonic() + hold
        while time.monotonic() < until:  # Claude's spinner: a small redraw every 120 ms
            tick += 1
            draw(f"\x1b[{10};1H\x1b[38;5;174m{GLYPHS[tick % len(GLYPHS)]}\x1b[39m Nucleating… ({tick // 8}s · ↓ {tick * 3} tokens)\x1b[K")
            time.sleep(0.12)


if __name__ == "__main__":
    main()
