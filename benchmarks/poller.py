"""The peers' way, for comparison: capture every pane with a forked tmux every 500 ms.

Prints one JSON line per pane whose state changes: {"pane", "state", "at"}.
It uses headspace's own classifier, so the comparison is about how the
screen is read, not how well.  Runs until killed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from headspace_tui.detect.claude import classify_capture

SOCKET, INTERVAL = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.5


def panes() -> list[str]:
    out = subprocess.run(["tmux", "-L", SOCKET, "list-panes", "-a", "-F", "#{pane_id}"], capture_output=True, text=True)
    return out.stdout.split()


last: dict[str, str] = {}
while True:
    started = time.monotonic()
    for pane in panes():
        ansi = subprocess.run(["tmux", "-L", SOCKET, "capture-pane", "-p", "-e", "-t", pane], capture_output=True, text=True).stdout
        state = classify_capture(ansi, command="claude").state.value
        if last.get(pane) != state:
            last[pane] = state
            print(json.dumps({"pane": pane, "state": state, "at": time.time()}), flush=True)
    time.sleep(max(0.0, INTERVAL - (time.monotonic() - started)))
