"""Jump moves the user's own client: in a session that also runs an agent, and in a tmux popup.

A real terminal client (a pty running ``tmux attach``) is the user; Claude
Code runs for real in its own session; headspace runs inside the same
private tmux server, in a window of the agent's session or in a
``display-popup`` opened on the user's client.  Enter is typed into the
user's terminal.  The user's client must end up on the agent's pane, and
headspace's control-mode clients must stay where they were.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.harness.env import private_env
from tests.harness.terminal import Terminal

pytestmark = pytest.mark.e2e


def clients(tmux) -> list[dict[str, str]]:
    out = tmux.run("list-clients", "-F", "#{client_name}\t#{client_control_mode}\t#{session_name}\t#{pane_id}")
    rows = [dict(zip(("name", "control", "session", "pane"), line.split("\t"), strict=True)) for line in out.splitlines() if line]
    return rows


def wait(predicate, what: str, timeout: float = 30.0, pause=lambda: time.sleep(0.1)):
    """``predicate``'s first true value, asked every ``pause`` (a browser test pauses through its driver) until ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        pause()
    raise AssertionError(f"timed out waiting for {what}")


def headspace_command(tmux, root: Path) -> str:
    env = private_env(root, root / "xdg")
    words = ["env", *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m", "headspace_tui", "-L", tmux.name]
    return " ".join(shlex.quote(w) for w in words) + f"; echo $? > {shlex.quote(str(root / 'exit'))}"


def headspace_ready(tmux, agent_pane: str):
    """headspace's control clients are attached and its table lists the agent (its top row, selected)."""
    return [c for c in clients(tmux) if c["control"] == "1"]


def test_enter_in_a_session_that_also_runs_an_agent_moves_the_users_client(claude_session, private_tmux, tmp_path):
    agent = claude_session([])
    private_tmux.run("new-window", "-t", f"{agent.name}:", "-n", "hs", headspace_command(private_tmux, tmp_path))
    user = Terminal(private_tmux, f"{agent.name}:hs")
    try:
        real = wait(lambda: [c for c in clients(private_tmux) if c["control"] == "0"], "the user's client")
        assert real[0]["pane"] != agent.pane_id  # the user looks at headspace
        controls = wait(lambda: headspace_ready(private_tmux, agent.pane_id), "headspace's control clients")
        wait(lambda: "idle" in private_tmux.capture(f"{agent.name}:hs") and agent.name in private_tmux.capture(f"{agent.name}:hs"), "the agent's row")
        time.sleep(0.5)
        user.type(b"\r")
        moved = wait(lambda: [c for c in clients(private_tmux) if c["control"] == "0" and c["pane"] == agent.pane_id], "the user's client on the agent")
        assert moved[0]["name"] == real[0]["name"]
        after = [c for c in clients(private_tmux) if c["control"] == "1"]
        assert sorted((c["name"], c["session"]) for c in after) == sorted((c["name"], c["session"]) for c in controls)
    finally:
        user.close()


def test_enter_in_a_popup_moves_the_users_client_and_closes_the_popup(claude_session, private_tmux, tmp_path):
    agent = claude_session([])
    private_tmux.new_session("home", width=120, height=40, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])
    user = Terminal(private_tmux, "home")
    popup = None
    try:
        (real,) = wait(lambda: [c for c in clients(private_tmux) if c["control"] == "0"], "the user's client")
        popup = subprocess.Popen(
            ["tmux", "-L", private_tmux.name, "display-popup", "-c", real["name"], "-w", "90%", "-h", "90%", "-E", headspace_command(private_tmux, tmp_path)],
            env=private_tmux.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait(lambda: headspace_ready(private_tmux, agent.pane_id), "headspace's control clients")
        wait(lambda: b"idle" in user.output and b"Waiting for" in user.output, "headspace's table in the popup")
        time.sleep(1.0)
        assert [c["pane"] for c in clients(private_tmux) if c["control"] == "0"] != [agent.pane_id]
        user.type(b"\r")
        wait(lambda: [c for c in clients(private_tmux) if c["control"] == "0" and c["pane"] == agent.pane_id], "the user's client on the agent")
        code = wait(lambda: (tmp_path / "exit").exists() and (tmp_path / "exit").read_text().strip(), "headspace to leave the popup")
        assert code == "0"
        assert not [c for c in clients(private_tmux) if c["control"] == "1"]  # its control clients left with it
    finally:
        user.close()
        if popup is not None and popup.poll() is None:
            popup.kill()
            popup.wait()
