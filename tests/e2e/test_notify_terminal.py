"""Notifications as a real terminal receives them: one per wait, through tmux.

headspace runs as a program in its own session of a private tmux server; a
real tmux client in a pty (the user's terminal) is attached to that session;
Claude Code runs for real in another session against the scripted API.  What
counts is the bytes the user's terminal gets: tmux unwraps headspace's
passthrough, so an OSC 9 / 777 there is a notification the terminal would
show.

* an agent that starts waiting (a Bash permission) gives exactly one, naming
  the agent, and none for the ten seconds it waits on (headspace redraws
  its clock every second meanwhile); answered, the next permission is a
  second one;
* an agent already waiting when headspace starts gives none;
* passthrough is allowed on headspace's own pane, not on the agent's.
"""

from __future__ import annotations

import re
import shlex
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.test_jump import wait
from tests.harness import fake_api as api
from tests.harness.env import private_env
from tests.harness.terminal import Terminal

pytestmark = pytest.mark.e2e

OSC = re.compile(rb"\x1b\](?:9|777;notify);([^\x07\x1b]*)(?:\x07|\x1b\\)")
QUIET = 10.0  # seconds in which nothing changes: no second notification
SETTLE = 4.0  # a little more than headspace's start-up quiet time (notify.SETTLE)


def notifications(data: bytes | bytearray) -> list[str]:
    return [m.group(1).decode("utf-8", "replace") for m in OSC.finditer(bytes(data))]


def start_headspace(tmux, root: Path) -> str:
    """headspace (this checkout, private HOME and XDG dirs, default settings) in session "hs"; its pane."""
    env = private_env(root, root / "xdg")
    words = [sys.executable, "-m", "headspace_tui", "-L", tmux.name]
    command = " ".join(shlex.quote(w) for w in words) + f"; echo $? > {shlex.quote(str(root / 'exit'))}; sleep 60"
    return tmux.new_session("hs", width=120, height=40, cwd=str(root), command=["sh", "-c", command], env=env)


def passthrough(tmux, pane: str) -> str:
    return tmux.run("show-options", "-p", "-t", pane, "-v", "allow-passthrough", check=False).strip()


def test_one_notification_per_wait_reaches_the_terminal(claude_session, fake_api, private_tmux, tmp_path):
    agent = claude_session(
        [api.bash("touch first.txt", "Create the first file"), api.bash("touch second.txt", "Create the second file"), api.text("Both files exist.")],
        width=100,
        height=30,
    )
    hs = start_headspace(private_tmux, tmp_path)
    user = Terminal(private_tmux, "hs")
    try:
        wait(lambda: agent.name in private_tmux.capture(hs) and "idle" in private_tmux.capture(hs), "headspace's row of the idle agent")
        time.sleep(SETTLE)
        assert passthrough(private_tmux, hs) in ("on", "all")  # headspace's own pane...
        assert passthrough(private_tmux, agent.pane_id) in ("", "off")  # ...and no other
        assert notifications(user.output) == []  # an idle agent needs nobody

        agent.submit("create the two files")
        agent.wait_for("Do you want to proceed?", what="the first permission")
        (first,) = wait(lambda: notifications(user.output), "a notification in the user's terminal")
        assert f"{agent.name}:" in first and "needs permission" in first and "touch first.txt" in first, first

        time.sleep(QUIET)  # waiting on: headspace redraws every second, Claude animates
        assert "Do you want to proceed?" in agent.screen() and "touch first.txt" in agent.screen()
        assert notifications(user.output) == [first], "notified again while nothing changed"

        agent.answer("1")  # answered: Claude runs it, then asks for the next command
        agent.wait_for("touch second.txt", what="the second permission")
        got = wait(lambda: len(notifications(user.output)) >= 2 and notifications(user.output), "the second notification")
        assert "touch second.txt" in got[1], got
        time.sleep(QUIET / 2)
        assert len(notifications(user.output)) == 2, notifications(user.output)
    finally:
        user.close()


def test_an_agent_already_waiting_at_start_is_not_announced(claude_session, fake_api, private_tmux, tmp_path):
    agent = claude_session([api.bash("touch early.txt", "Create a file"), api.text("Done.")], width=100, height=30)
    agent.submit("create the file")
    agent.wait_for("Do you want to proceed?", what="the permission")
    hs = start_headspace(private_tmux, tmp_path)
    user = Terminal(private_tmux, "hs")
    try:
        wait(lambda: agent.name in private_tmux.capture(hs) and "permission" in private_tmux.capture(hs), "headspace's row of the waiting agent")
        time.sleep(SETTLE + 4)
        assert notifications(user.output) == []
    finally:
        user.close()
