"""After Ctrl-Z and fg, a key headspace reports as delivered really reached Claude.

Seen before: right after ``fg`` the terminal echoed the "1" (Claude was not
reading yet), the dialog vanished from the screen, and headspace said "sent;
the prompt closed". Whatever the timing, a success must now be a real one:
either Claude ran the approved command, or headspace says it was not
delivered (or refuses). Real Claude, real job control in a real shell.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU
from tests.harness.session import SHELL_PROMPT

pytestmark = pytest.mark.e2e


def _send(private_tmux, pane_id: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    return subprocess.run(
        [sys.executable, "-m", "headspace_tui", "send", pane_id, "--approve", "--timeout", "4", "-L", private_tmux.name],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize("delay", [0.0, 0.3])
def test_a_key_after_fg_is_reported_delivered_only_if_claude_took_it(claude_session, private_tmux, delay):
    session = claude_session([api.bash("touch resumed.txt", "Make a file"), api.text("Made it.")], name="fg")
    session.submit("make the file")
    session.wait_for(NUMBERED_MENU, what="the permission dialog")
    session.wait_stable(quiet=0.5, timeout=10, strict=False)
    session.press("C-z")
    session.wait_for(lambda s: SHELL_PROMPT.search(s.rstrip()) is not None, timeout=15, what="the shell after Ctrl-Z")
    session.type("fg")
    session.press("Enter")
    time.sleep(delay)
    done = _send(private_tmux, session.pane_id)
    if done.returncode == 0:  # reported delivered: the command must run (waited for: a loaded Claude may take longer than 2 s)
        deadline = time.monotonic() + 20
        while not (session.workdir / "resumed.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
    else:
        time.sleep(2.0)  # not delivered: a key that landed would have run the command by now
    made = (session.workdir / "resumed.txt").exists()
    print(f"\nafter fg +{delay}s: exit {done.returncode}, {(done.stdout or done.stderr).strip()}; command ran: {made}")
    if done.returncode == 0:
        assert made, f"reported delivered ({done.stdout.strip()}) but Claude never ran the command"
    else:
        assert not made or "not delivered" in done.stderr or "changed" in done.stderr, done.stderr
