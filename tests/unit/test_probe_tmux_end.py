"""A probe that ends takes its tmux control clients with it, even one whose output was never read.

The probe runs as on a remote host (``python3 -c BOOT`` fed the bundle),
with the real tmux of a private server.  The case: a flooding session's
stream that headspace stopped taking (its window is spent, so the probe
stopped reading and tmux holds output for that client), then headspace
goes (the probe's stdin and stdout close).  tmux 3.3a waits to flush a
control client's output before it lets it go, and with nobody left to
read it that wait never ended: the client stayed attached for good, and
the server then ignored ``kill-server`` (found after a CI run: a
benchmark's tmux server still running 20 minutes later, its socket file
already removed).

Both ways the probe attaches: a ``tmux -C`` child (tmux 3.7 on) and a
client it attached itself (before 3.7, tmux/identify.py), whose sockets end
with the probe.
"""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import sys
import time

import psutil
import pytest

from headspace_tui.remote.bundle import BOOT, bundle_line
from headspace_tui.remote.probe_tmux import WINDOW
from headspace_tui.shared.proctree import process_exists


def _line(proc: subprocess.Popen, message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def _cmdline(process: psutil.Process) -> str:
    """Its command line; "" for a child that ended meanwhile (the probe's short ``tmux`` runs end and wait to be reaped)."""
    try:
        return " ".join(process.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):  # ZombieProcess is a NoSuchProcess
        return ""


def _gone(pid: int, within: float) -> bool:
    """Ended within ``within`` s (a zombie waiting for its reaper counts as ended, as everywhere in headspace)."""
    deadline = time.monotonic() + within
    while process_exists(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("attach", ["client", "direct"])
def test_an_ending_probe_ends_a_control_client_whose_output_nobody_reads(private_tmux, tmp_path, attach):
    pane = private_tmux.new_session("flood", width=120, height=40, cwd=str(tmp_path), command=["yes", "flooding a stream nobody reads"])
    session = private_tmux.run("display-message", "-p", "-t", pane, "#{session_id}").strip()
    server_pid = int(private_tmux.run("display-message", "-p", "#{pid}").strip())
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    probe = subprocess.Popen([sys.executable, "-u", "-c", BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    client_pid = None
    try:
        assert probe.stdin is not None and probe.stdout is not None
        probe.stdin.write(bundle_line())
        _line(probe, {"id": 1, "op": "hello"})
        # "attach": headspace's HEADSPACE_TMUX_ATTACH, sent with the request (ssh does not carry it)
        args = ["-L", private_tmux.name, "-C", "attach-session", "-f", "ignore-size,pause-after=2", "-t", session]
        _line(probe, {"id": 2, "op": "ctl_open", "ch": 1, "args": args, "env": ["PATH", "HOME", "LANG"], "attach": attach})
        received, deadline = 0, time.monotonic() + 20
        while received < WINDOW and time.monotonic() < deadline:  # never acknowledged: the window is spent
            message = json.loads(probe.stdout.readline())
            if message.get("push") == "ctl":
                received += len(base64.b64decode(message["data"]))
            assert "error" not in message, message
        assert received >= WINDOW, f"the stream carried only {received} B"
        clients = [p for p in psutil.Process(probe.pid).children() if "attach-session" in _cmdline(p)]
        assert len(clients) == (1 if attach == "client" else 0), clients  # the way asked for is the way taken
        client_pid = clients[0].pid if clients else None
        assert private_tmux.run("list-clients", "-F", "#{client_control_mode}").split() == ["1"]
        time.sleep(1.0)  # tmux fills the unread pipe and holds the rest for this client

        probe.stdin.close()  # headspace goes: the link's both ends close
        probe.stdout.close()
        probe.wait(10)

        assert client_pid is None or _gone(client_pid, 5.0), "the probe's tmux control client outlived it"
        assert private_tmux.run("list-clients").strip() == "", "the probe's control client is still attached"
        private_tmux.run("kill-server", check=False)
        assert _gone(server_pid, 5.0), "the tmux server ignored kill-server: a client of ours still held it"
    finally:
        if probe.poll() is None:
            probe.kill()
            probe.wait()
        if client_pid is not None:  # our own child's child, by its pid: the server can go once it has
            with contextlib.suppress(psutil.NoSuchProcess):
                psutil.Process(client_pid).kill()
