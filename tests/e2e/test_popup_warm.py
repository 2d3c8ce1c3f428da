"""The popup remembers: the warm UI (docs/popup.md), opened twice by a real tmux client pressing the printed binding.

A private tmux server stands for the user's (PATH without headspace), with
three fake agents (real recorded Claude screens) and a real terminal client
(a pty running ``tmux attach``).  ``headspace popup-binding``'s line is
sourced and pressed: the first open starts the warm UI in headspace's own
private tmux server; the filter typed and the selection moved there are
still on screen at the second open, in the same process; ``q`` closes the
popup and leaves the warm UI; a second client's popup takes the warm UI
over (the first popup is detached), and each Enter jumps the client that
opened the popup on screen; a warm UI killed outright is replaced at the
next open (its socket files cleaned); killing the service ends the warm UI
and its private server, as does killing the watched tmux server (no
process, no socket left).  The warm UI
never attaches a control client to the user's server: every control client
there is the service's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from headspace_tui.api.timeouts import SLOW
from headspace_tui.cli.popup import SESSION, tmux_socket, ui_place
from headspace_tui.shared.resident_place import place_of, read_card
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_popup_key import popup_home
from tests.e2e.test_resident_service import alive, wait_gone
from tests.harness.terminal import Terminal
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
FAKE_AGENT = REPO / "benchmarks" / "fake_agent.py"
CORPUS = REPO / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "120x40"
PREFIX_H = b"\x02h"  # C-b h
DOWN = b"\x1b[B"


class Warm:
    """The warm UI's private server, as the test reads it (its socket, never the user's server)."""

    def __init__(self, server_key: str, runtime: Path) -> None:
        self.place = ui_place(server_key, {"XDG_RUNTIME_DIR": str(runtime)})
        self.socket = tmux_socket(self.place)

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        return subprocess.run(["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, env=env, timeout=20)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", f"={SESSION}:").stdout

    def clients(self) -> int:
        said = self.tmux("list-clients")
        return len(said.stdout.splitlines()) if said.returncode == 0 else -1

    def pids(self) -> tuple[int, int]:
        """(the warm UI's pid, its private tmux server's pid)."""
        ui, server = self.tmux("display-message", "-p", "-t", f"={SESSION}:", "#{pane_pid} #{pid}").stdout.split()
        return int(ui), int(server)


def control_pids(tmux) -> list[int]:
    lines = tmux.run("list-clients", "-F", "#{client_control_mode} #{client_pid}").splitlines()
    return [int(line.split()[1]) for line in lines if line.startswith("1 ")]


def real_clients(tmux) -> dict[str, str]:
    """The user's (not control-mode) clients: name -> the session each shows."""
    lines = tmux.run("list-clients", "-F", "#{client_control_mode} #{client_name} #{session_name}").splitlines()
    return {line.split()[1]: line.split()[2] for line in lines if line.startswith("0 ")}


def popup_gone(tmux, warm: Warm) -> bool:
    """No headspace popup runs on the user's server any more: its launcher, or the client it became, has exited.

    The warm UI lets go of its client before that client's process has
    ended and tmux has closed the popup around it; a key typed meanwhile goes
    to the closing popup, as it would for a person who did not wait to see it close.
    """
    import psutil

    server = int(tmux.run("display-message", "-p", "#{pid}").strip())
    for child in psutil.Process(server).children(recursive=True):
        try:
            argv = " ".join(child.cmdline())
        except psutil.Error:
            continue
        if " popup" in argv or str(warm.socket) in argv:
            return False
    return True


def descendants(pid: int) -> set[int]:
    import psutil

    try:
        return {pid, *(p.pid for p in psutil.Process(pid).children(recursive=True))}
    except psutil.NoSuchProcess:
        return set()


def test_the_second_popup_shows_the_first_ones_filter_and_selection_and_the_warm_ui_ends_with_the_service(private_tmux, short_tmp: Path):
    tmux, tmp_path = private_tmux, short_tmp
    runtime = tmp_path / "xdg_runtime_dir"
    popup_home(tmux, tmp_path)  # short_tmp: the service's and the warm UI's sockets must fit a Unix socket's 108 bytes
    drawn = tmp_path / "drawn"
    drawn.mkdir()
    agent = ["bash", "-c", f"exec -a claude {sys.executable} -S {FAKE_AGENT} {CORPUS} {drawn}"]
    for name in ("alpha", "beta1", "beta2"):
        tmux.new_session(name, width=120, height=40, cwd=str(drawn), command=agent)
    server = TmuxServer(socket_name=tmux.name)
    warm = Warm(server.identity, runtime)
    printed = subprocess.run([sys.executable, "-m", "headspace_tui", "popup-binding"], capture_output=True, text=True, timeout=30, check=True).stdout
    assert " popup'" in printed and "HEADSPACE_CLIENT" in printed, printed
    conf = tmp_path / "tmux.conf"
    conf.write_text(printed)
    tmux.run("source-file", str(conf))
    user = Terminal(tmux, "home")
    other: Terminal | None = None
    try:
        (user_client,) = poll(lambda: real_clients(tmux), bool, timeout=10)

        # The first open: the warm UI starts, and the table comes.
        user.type(PREFIX_H)
        poll(warm.screen, lambda s: "3 agents" in s and "beta2" in s, timeout=60)
        poll(warm.clients, lambda n: n == 1, timeout=10)
        assert not popup_gone(tmux, warm)  # the popup is seen while it is open
        ui_pid, private_pid = warm.pids()
        assert oct(warm.place.folder.stat().st_mode & 0o777) == "0o700"
        # Its window keeps the size the UI gives it, and the server takes a new window without crashing
        # (a global "window-size manual" crashes tmux 3.3a at the next window it creates).
        assert warm.tmux("show-options", "-gv", "window-size").stdout.strip() != "manual"
        assert warm.tmux("show-options", "-wv", "-t", f"={SESSION}:", "window-size").stdout.strip() == "manual"
        assert warm.tmux("new-window", "-d", "-t", f"={SESSION}:", "sleep 0.2").returncode == 0
        assert warm.pids() == (ui_pid, private_pid)
        user.type(b"/")
        poll(warm.screen, lambda s: "filter: target" in s, timeout=15)  # the filter box has the keys now
        user.type(b"beta")
        poll(warm.screen, lambda s: "alpha" not in s, timeout=15)
        user.type(b"\r")
        poll(warm.screen, lambda s: "⏎ jump" in s, timeout=15)  # the table has the keys again, the filter kept
        user.type(DOWN)
        poll(warm.screen, lambda s: "╭─ beta2:0.0" in s, timeout=15)  # the preview's border names the selected agent
        first = warm.screen()
        user.type(b"q")
        poll(warm.clients, lambda n: n == 0, timeout=15)  # the popup closed...
        poll(lambda: popup_gone(tmux, warm), bool, timeout=15)
        assert alive(ui_pid) and alive(private_pid)  # ...and the warm UI is still there

        # The second open: the same process, the table as the first one left it, on the user's terminal.
        user.take()
        user.type(PREFIX_H)
        poll(warm.clients, lambda n: n == 1, timeout=15)
        shown = bytearray()
        poll(lambda: shown.extend(user.take()) or bytes(shown), lambda b: b"beta2:0.0 (%" in b, timeout=15)
        assert warm.pids() == (ui_pid, private_pid)
        second = warm.screen()
        assert "alpha" not in second and "beta" in second and "╭─ beta2:0.0" in second, second
        # The table's rows, the filter and the selection as left (the header's first words too: its tail may have
        # gained the day's waits, asked of the service every few seconds, since the first open).
        assert second.splitlines()[1:6] == first.splitlines()[1:6]
        assert second.splitlines()[0].startswith(first.splitlines()[0].split("  ·  ")[0]), (first.splitlines()[0], second.splitlines()[0])
        service_pid = read_card(place_of(server.identity, {"XDG_RUNTIME_DIR": str(runtime)}))["pid"]
        mine = descendants(ui_pid) | descendants(private_pid)
        assert control_pids(tmux) and not set(control_pids(tmux)) & mine, "the warm UI attached to the user's server"

        # A second client opens the popup meanwhile: it takes the warm UI over (the first popup is detached),
        # and its Enter moves that client, not the first one.
        other = Terminal(tmux, "alpha")
        (other_client,) = set(poll(lambda: real_clients(tmux), lambda c: len(c) == 2, timeout=10)) - {user_client}
        first_attach = warm.tmux("list-clients", "-F", "#{client_pid}").stdout.split()
        other.type(PREFIX_H)
        poll(lambda: warm.tmux("list-clients", "-F", "#{client_pid}").stdout.split(), lambda pids: len(pids) == 1 and pids != first_attach, timeout=15)
        other.type(b"\r")
        poll(lambda: real_clients(tmux), lambda c: c == {user_client: "home", other_client: "beta2"}, timeout=SLOW + 5)  # a jump: SLOW
        poll(warm.clients, lambda n: n == 0, timeout=15)
        poll(lambda: popup_gone(tmux, warm), bool, timeout=15)

        # The first client opens it again; Enter: that client goes to beta2, and the popup closes.
        user.type(PREFIX_H)
        poll(warm.clients, lambda n: n == 1, timeout=15)
        user.type(b"\r")
        poll(lambda: real_clients(tmux), lambda c: c.get(user_client) == "beta2", timeout=SLOW + 5)
        poll(warm.clients, lambda n: n == 0, timeout=15)
        poll(lambda: popup_gone(tmux, warm), bool, timeout=15)
        assert warm.pids() == (ui_pid, private_pid)

        # A warm UI killed outright leaves its socket files; the next open cleans them and starts a new one.
        os.kill(ui_pid, signal.SIGKILL)  # the warm UI this test's popup started
        assert wait_gone(ui_pid, 15) and wait_gone(private_pid, 15)
        assert warm.socket.exists()  # tmux 3.3a leaves it
        user.type(PREFIX_H)
        poll(warm.screen, lambda s: "3 agents" in s, timeout=60)
        assert warm.pids() != (ui_pid, private_pid)
        ui_pid, private_pid = warm.pids()
        user.type(b"q")
        poll(warm.clients, lambda n: n == 0, timeout=15)
        poll(lambda: popup_gone(tmux, warm), bool, timeout=15)

        # The service ends: so do the warm UI and its private server, leaving no socket.
        os.kill(service_pid, signal.SIGTERM)  # the service this test's popup started
        assert wait_gone(ui_pid, 15) and wait_gone(private_pid, 15)
        assert not warm.socket.exists() and not warm.place.socket.exists()

        # Opened again: a new warm UI (and service); the watched tmux server ends: everything of ours ends.
        user.type(PREFIX_H)
        poll(warm.screen, lambda s: "3 agents" in s, timeout=60)
        ui_pid, private_pid = warm.pids()
        service_pid = read_card(place_of(server.identity, {"XDG_RUNTIME_DIR": str(runtime)}))["pid"]
        user.type(b"\x1b")  # Esc with nothing to close: the popup closes too
        poll(warm.clients, lambda n: n == 0, timeout=15)
        assert alive(ui_pid)
        user.close()
        if other is not None:
            other.close()
        tmux.run("kill-server")
        assert wait_gone(ui_pid, 15) and wait_gone(private_pid, 15) and wait_gone(service_pid, 15)
        assert not warm.socket.exists() and not warm.place.socket.exists()
    finally:
        for terminal in (user, other):
            if terminal is not None:
                with contextlib.suppress(OSError):
                    terminal.close()
        if warm.socket.exists():
            warm.tmux("kill-server")  # a failed test's warm UI: its own private server, by its socket
