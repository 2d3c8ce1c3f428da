"""A terminal that goes ends headspace in two seconds, and what a SIGKILLed one left is swept at the next start.

headspace runs as the real program in a real pty (``pty.fork``) against a
private tmux server with sessions, so its control clients are attached and
its answer socket is open.  The terminal is then closed (its pty master
closed), in the two ways a user meets it:

* headspace is the terminal's process: the kernel hangs up the terminal and
  sends SIGHUP;
* headspace was started through ``setsid`` (a wrapper, a terminal that passes
  its descriptors on): no signal comes, its input only reads end-of-file.
  Before, it then ran for good, a quarter of a core spinning on that input
  and its control clients attached.

Both must be over within 2 s with the clean-up of ``q``: no control client,
no answer socket, no child left.  The second test SIGKILLs a headspace that
watches a remote host (real sshd on 127.0.0.1) and checks that its stale
answer socket and ssh control folder are there (the premise), that the sweep
a start runs removes exactly those, and that a real start after it finds
nothing left.
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from headspace_tui.app.endings import GRACE
from headspace_tui.cli import leftovers
from tests.harness.procs import named
from tests.harness.sshd import running_sshd

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
DRAWN = b"Waiting for"  # the table's heading: the app is up


def _env(private_tmux, tmp_path: Path) -> dict[str, str]:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    return {
        **private_tmux.env,
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": str(REPO),
    }


def _start_in_pty(argv: list[str], env: dict[str, str]) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal's process
        os.execvpe(argv[0], argv, env)
    return pid, fd


def _read_until(fd: int, mark: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while mark not in seen.replace(b"\x1b[", b"") and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


def _headspace(server_name: str) -> psutil.Process:
    """The headspace watching this private server (found by its command line, not ``setsid``'s: that forks it away)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for proc in psutil.process_iter(["cmdline"]):
            line = proc.info["cmdline"] or []
            if "headspace_tui" in line and server_name in line and os.path.basename(line[0]) != "setsid":
                return proc
        time.sleep(0.05)
    raise AssertionError("headspace did not start")


def _control_clients(private_tmux) -> int:
    return private_tmux.run("list-clients", "-F", "#{client_control_mode}").split().count("1")


def _gone(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize("how", ["hangup", "no signal, only end-of-file"])
def test_a_closed_terminal_ends_headspace_by_the_hangups_deadline_leaving_nothing(private_tmux, tmp_path, how):
    """Gone by HANGUP_GRACE (1.8 s) after its terminal, not SIGTERM's GRACE (10 s): half of that tells them apart, however loaded the machine."""
    for name in ("one", "two", "three"):
        args = ["-f", "/dev/null"] if name == "one" else []
        private_tmux.run(*args, "new-session", "-d", "-s", name, "-x", "80", "-y", "24", "sleep 600")
    env = _env(private_tmux, tmp_path)
    argv = [sys.executable, "-m", "headspace_tui", "--no-service", "-L", private_tmux.name]
    if how != "hangup":
        # -w: setsid's parent (the terminal's session leader) stays until headspace ends.  Without
        # it the parent exits at once, and the terminal's SIGHUP to its process group could reach
        # the forked child before it had called setsid(): under load it killed headspace at start.
        argv = ["setsid", "-w", *argv]
    child, fd = _start_in_pty(argv, env)
    try:
        assert DRAWN in _read_until(fd, DRAWN, 30).replace(b"\x1b[", b""), "headspace did not draw its table"
        headspace = _headspace(private_tmux.name)
        deadline = time.monotonic() + 15
        while _control_clients(private_tmux) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _control_clients(private_tmux) == 3  # the premise: a client per session
        answer_socket = Path(env["XDG_RUNTIME_DIR"]) / "headspace" / "answer.sock"
        assert answer_socket.exists()
        children = headspace.children(recursive=True)
        began = time.monotonic()
        os.close(fd)  # the terminal goes away
        fd = -1
        while not _gone(headspace) and time.monotonic() - began < 10:
            time.sleep(0.01)
        took = time.monotonic() - began
        print(f"\n{how}: headspace gone {took:.2f} s after its terminal")
        assert _gone(headspace), "headspace outlived its terminal by 10 s"
        assert took < GRACE / 2, f"headspace took {took:.2f} s to end after its terminal closed: not a hangup's deadline"
        assert _control_clients(private_tmux) == 0, "a control client outlived headspace"
        assert not answer_socket.exists(), "the answer socket outlived headspace"
        assert [c.pid for c in children if not _gone(c)] == [], "a child of headspace outlived it"
    finally:
        if fd >= 0:
            os.close(fd)
        for proc in psutil.process_iter(["cmdline"]):  # ours, by what we started: never left behind
            if "headspace_tui" in (proc.info["cmdline"] or []) and private_tmux.name in (proc.info["cmdline"] or []):
                proc.kill()
        os.waitpid(child, 0)


def test_what_a_sigkilled_headspace_left_is_swept_at_the_next_start(private_tmux, tmp_path, claude_binary):
    private_tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "work", "-x", "80", "-y", "24", "sleep 600")
    env = _env(private_tmux, tmp_path)
    runtime = Path(env["XDG_RUNTIME_DIR"])
    # Its own temp folder (short: the ssh control socket's path must fit): every headspace that starts sweeps
    # its temp folder, so one of another test, started between the kill and the look, would sweep /tmp first.
    temp = Path(tempfile.mkdtemp(prefix="hs-swept-"))
    env["TMPDIR"] = str(temp)
    with contextlib.ExitStack() as cleanup, running_sshd(tmp_path, claude=claude_binary) as box:
        cleanup.callback(shutil.rmtree, temp, ignore_errors=True)
        config = tmp_path / "config.toml"
        config.write_text(f'[hosts.box]\ndestination = "{box.alias}"\ntmux_socket_name = "headspace-none"\nssh_config = "{box.client_config}"\n')
        argv = [sys.executable, "-m", "headspace_tui", "--no-service", "--config", str(config), "-L", private_tmux.name]
        child, fd = _start_in_pty(argv, env)
        try:
            _read_until(fd, DRAWN, 30)
            headspace = _headspace(private_tmux.name)
            folders: list[Path] = []
            deadline = time.monotonic() + 30
            while not folders and time.monotonic() < deadline:  # its ssh master's control folder
                folders = [temp / name for name in os.listdir(temp) if name.startswith(f"hs-ssh-{headspace.pid}-")]
                time.sleep(0.1)
            assert folders, "headspace made no ssh control folder"
            assert (runtime / "headspace" / "answer.sock").exists()
            ssh = named(headspace, "ssh")
            headspace.send_signal(signal.SIGKILL)  # ours, by its id: no clean-up runs
            headspace.wait(5)
            deadline = time.monotonic() + 5
            while any(not _gone(p) for p in ssh) and time.monotonic() < deadline:  # they die with their parent
                time.sleep(0.05)
        finally:
            os.close(fd)
            with contextlib.suppress(ChildProcessError):  # reaped already by psutil's wait
                os.waitpid(child, 0)
        # The premise: what it left, for good until now.
        assert (runtime / "headspace" / "answer.sock").exists()
        assert all(folder.is_dir() for folder in folders)
        assert not any(entry.is_socket() and _listens(entry) for folder in folders for entry in folder.iterdir())

        removed = leftovers.sweep({"XDG_RUNTIME_DIR": str(runtime), "HOME": str(tmp_path)}, temp=str(temp))
        assert str(runtime / "headspace" / "answer.sock") in removed
        assert {str(f) for f in folders} <= set(removed)
        assert not (runtime / "headspace" / "answer.sock").exists()
        assert not any(folder.exists() for folder in folders)

        # A sweep finds nothing more, and it leaves a live headspace's things alone.
        child, fd = _start_in_pty([sys.executable, "-m", "headspace_tui", "--no-service", "-L", private_tmux.name], env)
        try:
            _read_until(fd, DRAWN, 30)
            deadline = time.monotonic() + 10
            while not (runtime / "headspace" / "answer.sock").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert (runtime / "headspace" / "answer.sock").exists()
            assert str(runtime / "headspace" / "answer.sock") not in leftovers.sweep({"XDG_RUNTIME_DIR": str(runtime), "HOME": str(tmp_path)}, temp=str(temp))
            assert (runtime / "headspace" / "answer.sock").exists()
        finally:
            os.close(fd)
            deadline = time.monotonic() + 5
            while os.waitpid(child, os.WNOHANG) == (0, 0):
                if time.monotonic() > deadline:
                    os.kill(child, signal.SIGKILL)  # ours, by its id
                    os.waitpid(child, 0)
                    break
                time.sleep(0.05)


def _listens(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True
