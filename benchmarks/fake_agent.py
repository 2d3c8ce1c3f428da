"""A stand-in for one Claude Code agent, for the scale benchmark.

It draws real recorded Claude screens (from the corpus) into its pane and
changes them on signals, so the benchmark decides when each agent does what:

  SIGUSR1  become busy: Claude's working screen, with the spinner line
           redrawn in bursts every 120 ms, as Claude does
  SIGUSR2  draw the permission menu now; the instant it is written (after the
           flush) goes to ``<results>/<pane>.drawn``
  SIGINT   back to the idle screen

Run as ``exec -a claude python3 -S fake_agent.py CORPUS_DIR RESULTS_DIR`` so
the process tree shows a ``claude`` like a real agent.  Standard library only.
"""

from __future__ import annotations

import os
import signal
import sys
import time

CORPUS, RESULTS = sys.argv[1], sys.argv[2]
PANE = os.environ.get("TMUX_PANE", "%?")
GLYPHS = "✢✳✶✻✽"


def screen(name: str) -> str:
    with open(os.path.join(CORPUS, f"{name}.ansi"), encoding="utf-8") as handle:
        rows = handle.read().rstrip("\n").split("\n")
    return "\x1b[H\x1b[2J" + "\r\n".join(rows)


IDLE, BUSY, MENU = screen("idle_fresh"), screen("working_spinner"), screen("permission_bash")
SPINNER_ROW = next(i for i, row in enumerate(BUSY.split("\r\n")) if "…" in row) + 1  # the spinner row, with or without its timer
mode = "idle"


def draw(text: str) -> None:
    os.write(1, text.encode())


def on_busy(signum, frame) -> None:
    global mode
    mode = "busy"
    draw(BUSY)


def on_menu(signum, frame) -> None:
    global mode
    mode = "menu"
    draw(MENU)
    drawn = time.time()
    with open(os.path.join(RESULTS, PANE.lstrip("%") + ".drawn"), "w") as handle:
        handle.write(repr(drawn))


def on_idle(signum, frame) -> None:
    global mode
    mode = "idle"
    draw(IDLE)


signal.signal(signal.SIGUSR1, on_busy)
signal.signal(signal.SIGUSR2, on_menu)
signal.signal(signal.SIGINT, on_idle)
draw(IDLE)
SIGNALS = {signal.SIGUSR1, signal.SIGUSR2, signal.SIGINT}
tick = 0
while True:
    if mode == "busy":
        tick += 1
        glyph = GLYPHS[tick % len(GLYPHS)]
        # The signals wait while the spinner line is drawn: a menu drawn between the look at ``mode`` and the
        # spinner's write had the spinner line written over it, and nothing after (a menu a real Claude never shows).
        signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        try:
            if mode == "busy":
                draw(f"\x1b[{SPINNER_ROW};1H\x1b[38;5;174m{glyph}\x1b[39m Nucleating… ({tick // 8}s · ↓ {tick * 3} tokens)\x1b[K")
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)  # one that came meanwhile is handled here, after the line
        time.sleep(0.12)
    else:
        signal.pause()
