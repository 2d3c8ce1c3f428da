"""The private sshd the remote-host tests stand on, checked against the real OpenSSH.

If these fail, a remote test's failure says nothing about headspace: the
server did not isolate the session (HOME, tmux's socket dir, PATH), let a
password in, kept a dead master alive, or did not come back on its port.
They also pin the OpenSSH behaviour the product has to live with: a master
dies with the server, ``MaxSessions`` (10 by default) refuses the 11th
session of one connection, and the one-line errors of a host that is down or
never answers.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.sshd import Sshd, free_port, running_sshd, silent_host
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Sshd]:
    claude = tmp_path / "bin" / "claude"
    claude.parent.mkdir()
    claude.write_text("#!/bin/sh\necho 'fake claude on PATH'\n")
    claude.chmod(0o755)
    with running_sshd(tmp_path, claude=claude, env={"HEADSPACE_TEST": "over ssh"}) as server:
        yield server


def test_remote_command_runs_in_the_private_environment(box: Sshd, tmp_path: Path) -> None:
    result = box.ssh('echo "$HOME"; echo "$TMUX_TMPDIR"; echo "$XDG_RUNTIME_DIR"; echo "$CLAUDE_CONFIG_DIR"; echo "$HEADSPACE_TEST"; command -v claude; tmux -V')
    assert result.returncode == 0, result.stderr
    home, tmux_tmpdir, runtime, claude_dir, extra, claude, version = result.stdout.splitlines()
    assert home == str(box.home)
    assert (tmux_tmpdir, runtime, claude_dir) == (box.remote_env["TMUX_TMPDIR"], box.remote_env["XDG_RUNTIME_DIR"], box.remote_env["CLAUDE_CONFIG_DIR"])
    assert extra == "over ssh"
    assert claude == str(tmp_path / "bin" / "claude")
    assert version.startswith("tmux ")
    assert result.stderr == ""


def test_only_the_test_key_gets_in(box: Sshd) -> None:
    password = box.ssh("true", options=("-o", "PreferredAuthentications=password,keyboard-interactive"))
    assert password.returncode == 255
    assert "Permission denied (publickey)" in password.stderr


def test_an_unknown_host_key_is_refused(box: Sshd) -> None:
    box.add_alias("stranger", box.port, UserKnownHostsFile="/dev/null")
    result = subprocess.run(["ssh", "-F", str(box.client_config), "stranger", "true"], capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL)
    assert result.returncode == 255
    assert "Host key verification failed." in result.stderr


def test_a_master_carries_sessions_dies_with_the_server_and_a_new_one_connects_after_restart(box: Sshd) -> None:
    via = lambda path: ("-o", f"ControlPath={path}", "-o", "ControlMaster=no")  # noqa: E731
    with box.master() as (master, path):
        result = box.ssh("echo through the master", options=via(path))
        assert (result.returncode, result.stdout) == (0, "through the master\n"), result.stderr
        assert len(box.connection_pids()) == 1  # the session rode the master's connection: no new sshd

        started = time.monotonic()
        box.stop()
        assert master.wait(timeout=5) == 255
        assert time.monotonic() - started < 3
        said = master.stderr.read().decode() if master.stderr is not None else ""
        # The server went away, in ssh's words: read as it closed, or as a write that found it gone (the master was sending as it died).
        assert re.search(r"closed by remote host|send disconnect: (Broken pipe|Connection reset by peer)", said), said
        assert not box.check_master(path)
        down = box.ssh("true")
        assert down.returncode == 255 and "Connection refused" in down.stderr

        box.start()
    port = box.port
    result = box.ssh("echo back")
    assert (result.returncode, result.stdout, box.port) == (0, "back\n", port), result.stderr
    with box.master() as (_, path):
        assert box.ssh("true", options=via(path)).returncode == 0


def _sessions_over_one_master(box: Sshd, held: int) -> subprocess.CompletedProcess[str]:
    """Hold ``held`` sessions open on one master, then run one more; return that one's result."""
    with box.master() as (_, path):
        argv = ["ssh", "-F", str(box.client_config), "-o", f"ControlPath={path}", "-o", "ControlMaster=no", box.alias, "cat"]
        holders = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(held)]
        try:
            # Each open session is one `cat` under the master's sshd.
            poll(lambda: len(box.connection_pids()), lambda n: n >= 1 + held, timeout=15)
            return box.ssh("echo one more", options=("-o", f"ControlPath={path}", "-o", "ControlMaster=no"))
        finally:
            for holder in holders:
                assert holder.stdin is not None
                holder.stdin.close()
            for holder in holders:
                holder.wait(timeout=10)


def test_the_eleventh_session_on_one_connection_is_refused_by_default_and_ssh_falls_back_to_its_own(box: Sshd) -> None:
    result = _sessions_over_one_master(box, held=10)
    # Refused by the server (MaxSessions 10), then ssh quietly opens a
    # connection of its own and the command still runs: exit 0, one line on stderr.
    assert result.stderr == "mux_client_request_session: session request failed: Session open refused by peer\n"
    assert (result.returncode, result.stdout) == (0, "one more\n")


def test_max_sessions_can_be_raised(tmp_path: Path) -> None:
    with running_sshd(tmp_path, max_sessions=32) as server:
        result = _sessions_over_one_master(server, held=10)
    assert (result.returncode, result.stdout, result.stderr) == (0, "one more\n", "")


def test_a_host_that_never_answers_times_out_in_the_banner_wait_and_a_closed_port_is_refused_at_once(box: Sshd) -> None:
    with silent_host() as port:
        box.add_alias("silent", port)
        started = time.monotonic()
        result = subprocess.run(["ssh", "-F", str(box.client_config), "-o", "ConnectTimeout=1", "silent", "true"], capture_output=True, text=True, timeout=15)
        took = time.monotonic() - started
    assert (result.returncode, result.stderr) == (255, "Connection timed out during banner exchange\n")
    assert 0.9 < took < 5

    closed = free_port()
    box.add_alias("closed", closed)
    result = subprocess.run(["ssh", "-F", str(box.client_config), "-o", "ConnectTimeout=1", "closed", "true"], capture_output=True, text=True, timeout=15)
    assert (result.returncode, result.stderr) == (255, f"ssh: connect to host 127.0.0.1 port {closed}: Connection refused\n")
