"""Over ssh, every byte is the user's: what a real terminal attached to headspace receives.

headspace runs as a program in a pane of one private tmux server at 80x24,
watching real Claude Code agents on another; a real tmux client in a pty is
attached to it and counts the bytes it is sent (see
``tests/harness/terminal_bytes.py``).  Idle is measured over a minute;
the preview windows are 20 s, scaled to a minute.

* With every agent idle, headspace sends at most 2 KB a minute.
* Previewing an agent that works (a long Bash tool: Claude's spinner and
  timer tick), it sends at most 3 times what a second client attached
  straight to that agent's pane receives over the same 20 s.
* Afterwards the preview shows the pane as it is (repainting only changed
  cells must not leave stale ones behind).

``python benchmarks/terminal_bytes.py`` prints the same figures at 80x24
and 120x40, and with all of it waiting on a seconds counter.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pytest

from tests.harness.terminal_bytes import Rig, per_minute

pytestmark = pytest.mark.e2e

WINDOW = 20.0  # seconds per preview measurement, scaled to a minute
# Idle is measured over a whole minute: its cost is rare events (an idle row's
# "<1m" becoming "1m"), and one of them in a 20 s window counted three times.
IDLE_WINDOW = 60.0
IDLE_LIMIT = 2 * 1024  # bytes a minute with every agent idle
PREVIEW_FACTOR = 3  # previewing a working agent, against attaching to its pane


@pytest.fixture
def rig(claude_binary):
    root = Path(tempfile.mkdtemp(prefix="hs-bytes-"))
    try:
        with Rig(claude_binary, root, 80, 24, agents=2) as rig:
            yield rig
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _box(screen: str) -> tuple[list[str], int]:
    """The preview's rows (between its box's borders, without them) and the box's inner width."""
    lines = screen.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("╭"))
    bottom = next(i for i in range(top + 1, len(lines)) if lines[i].startswith("╰"))
    return [line[1:-1].rstrip() for line in lines[top + 1 : bottom]], len(lines[top]) - 2


def _tail(rows: list[str], n: int) -> list[str]:
    rows = [row for row in rows if row.strip()]
    return rows[-n:]


def test_idle_costs_almost_nothing_and_a_working_preview_little_more_than_the_pane(rig):
    assert rig.terminal is not None
    (idle,) = per_minute([rig.terminal], IDLE_WINDOW)
    assert idle <= IDLE_LIMIT, f"all agents idle: {idle:.0f} bytes a minute (at most {IDLE_LIMIT})"

    agent = rig.work(0)
    direct = rig.attach_direct(0)
    time.sleep(2)  # the direct client's first full draw is not the pane's motion
    previewing, attached = per_minute([rig.terminal, direct], WINDOW)
    assert attached > 1000, f"the pane hardly moved ({attached:.0f} bytes a minute attached directly): nothing was measured"
    assert previewing <= PREVIEW_FACTOR * attached, (
        f"previewing a working agent: {previewing:.0f} bytes a minute, {previewing / attached:.1f} times the {attached:.0f} of attaching to its pane (at most {PREVIEW_FACTOR})"
    )

    # The pane comes to rest; the preview must show it as it is, cell for cell (its bottom rows, cropped to the box).
    rig.stop_work(0)
    pane = agent.wait_stable(quiet=1.0, timeout=15, strict=False)
    deadline = time.monotonic() + 10
    while True:
        box, width = _box(rig.screen())
        expected = _tail([row[:width].rstrip() for row in pane.splitlines()], 5)
        shown = _tail(box, 5)
        if shown == expected:
            break
        if time.monotonic() > deadline:
            pytest.fail("the preview does not show the pane at rest:\n" + "\n".join(shown) + "\n---- the pane:\n" + "\n".join(expected))
        time.sleep(0.3)
        pane = agent.screen()
