"""The terminal UI as a client of the resident service, as a user meets it: a real tmux client in a pty, popups, real Claude Code.

* Opening and closing the popup twenty times adds no tmux control-client
  attach (tmux's own ``client-attached`` hook counts them), and each open's
  first drawn table holds every agent, in the state ``status --json`` says.
* A SIGKILLed service comes back when the TUI opens, and a TUI left open
  while its service is killed says so, starts it again and goes on, with
  one service left and nothing else of ours.

The in-process mode (``--no-service``) keeps its own tests: the quiet exit,
the crash exit and the churn soak run it.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyte
import pytest

from headspace_tui.shared.resident_place import place_of, read_card, take_lock
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_jump import wait
from tests.e2e.test_resident_service import alive, rows, run, started, wait_gone
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU
from tests.harness.terminal import Terminal

pytestmark = pytest.mark.e2e

OPENS = 20
WIDTH, HEIGHT = 120, 40
ENV_KEYS = ("HOME", "PATH", "PYTHONPATH", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "LANG")
HEADER = re.compile(r"headspace\s+(\d+) agents?")
TITLE = re.compile(r"│ headspace\s")  # the header's first word, whatever it says next ("looking for agents…" before a first look)


def headspace_words(server: str, *options: str) -> str:
    """``headspace -L server``, as a shell command, in this test's environment (the service's place is in its XDG_RUNTIME_DIR)."""
    env = [f"{key}={os.environ[key]}" for key in ENV_KEYS if key in os.environ]
    return shlex.join(["env", *env, "TERM=xterm-256color", sys.executable, "-m", "headspace_tui", *options, "-L", server])


def serving(server: str) -> list[int]:
    """The pids of every ``headspace -L server serve --foreground`` running now (from /proc: no pgrep needed)."""
    wanted = ["-L", server, "serve", "--foreground"]
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if entry.name.isdigit() and any(argv[i : i + len(wanted)] == wanted for i in range(len(argv))):
            found.append(int(entry.name))
    return found


def attaches(count_file: Path) -> int:
    return count_file.read_text().count("x") if count_file.exists() else 0


class Screen:
    """What the user's terminal shows: every byte tmux sent it, through a virtual terminal."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.screen = pyte.Screen(WIDTH, HEIGHT)
        self.stream = pyte.ByteStream(self.screen)
        self.fed = 0
        self.lines: list[str] = list(self.screen.display)

    def now(self) -> list[str]:
        """The screen as the bytes so far draw it; drawn again only when bytes came (looked at every 5 ms, mostly none)."""
        assert self.terminal.output is not None
        data = bytes(self.terminal.output[self.fed :])
        if data:
            self.fed += len(data)
            self.stream.feed(data)
            self.lines = list(self.screen.display)
        return list(self.lines)


def first_frame(screen: Screen, timeout: float = 30.0) -> list[str]:
    """The first screen (looked at every 5 ms) on which headspace's header is drawn, whatever it says."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = screen.now()
        if any(TITLE.search(line) for line in lines):
            return lines
        time.sleep(0.005)
    raise AssertionError("headspace's header never appeared:\n" + "\n".join(screen.now()))


def test_twenty_popup_opens_attach_nothing_and_each_draws_the_whole_table_first(claude_session, private_tmux, tmp_path, services):
    asking = claude_session([api.bash("touch popup.txt", "Create a file")], name="asking")
    asking.submit("create a file")
    asking.wait_for(NUMBERED_MENU, timeout=60)
    claude_session(name="resting")
    private_tmux.run("new-session", "-d", "-s", "desk", "-x", str(WIDTH), "-y", str(HEIGHT), "sleep 600")
    counted = tmp_path / "attaches"
    private_tmux.run("set-hook", "-g", "client-attached", f"run-shell -b 'echo x >> {counted}'")
    card = started(private_tmux.name, services)
    sessions = len(private_tmux.run("list-sessions", "-F", "#{session_id}").split())
    wait(lambda: attaches(counted) >= sessions, "the service's control client on every session (desk after it settled)", timeout=60)
    served = rows(run("-L", private_tmux.name, "status", "--json"))
    assert sorted(row["state"] for row in served) == ["idle", "permission"], served
    needing = 1

    user = Terminal(private_tmux, "desk", WIDTH, HEIGHT)
    screen = Screen(user)
    try:
        wait(lambda: attaches(counted) == sessions + 1, "the user's terminal attached")
        listed = [line.split() for line in private_tmux.run("list-clients", "-F", "#{client_name} #{client_control_mode}").splitlines()]
        (client,) = [name for name, control in listed if control == "0"]  # the user's, not the service's control clients
        before = attaches(counted)
        for n in range(OPENS):
            screen.now()  # what was drawn before this open is not this open's
            popup = subprocess.Popen(  # display-popup returns when the popup closes
                ["tmux", "-L", private_tmux.name, "display-popup", "-c", client, "-w", "110", "-h", "34", "-E", headspace_words(private_tmux.name)],
                env=private_tmux.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            lines = first_frame(screen)
            text = "\n".join(lines)
            assert "watching from this headspace alone" not in text, text
            # The header is counted from the table's rows: on the first frame it already counts every agent and who needs you.
            headers = [line for line in lines if HEADER.search(line)]
            assert len(headers) == 1 and f"headspace  {len(served)} agents  ·  {needing} need" in headers[0], f"open {n}: first frame\n{text}"
            # tmux may pass that frame on to the terminal in more than one piece: its rows, once the rest of it is drawn
            # (the prompt bar also starts with the selected agent's target: one of the lines is its row).
            for row in served:
                drawn = wait(lambda row=row: [line for line in screen.now() if line.lstrip().startswith(f"│ {row['target']} ")], f"open {n}: {row['target']}'s row", timeout=5)
                assert any(row["state"] in line for line in drawn), f"open {n}: {row['target']} is {row['state']}, drawn as {drawn!r}"
            user.type(b"q")
            assert popup.wait(30) == 0, f"open {n}: the popup did not close"
        assert attaches(counted) == before, f"{attaches(counted) - before} control-client attaches in {OPENS} popup opens"
        assert alive(card["pid"]) and read_card(place_of(TmuxServer(socket_name=private_tmux.name).identity))["pid"] == card["pid"]
    finally:
        user.close()


def test_a_killed_service_comes_back_with_the_tui_and_a_tui_left_open_reconnects(claude_session, private_tmux, services):
    agent = claude_session(name="resting")
    place = place_of(TmuxServer(socket_name=private_tmux.name).identity)
    first = started(private_tmux.name, services)
    os.kill(first["pid"], signal.SIGKILL)
    assert wait_gone(first["pid"], 10)

    # Two opened at the same moment, with no service: both find none, one service starts, both are its clients.
    pane, other = (private_tmux.new_session(name, width=WIDTH, height=HEIGHT, cwd="/", command=["sh", "-c", headspace_words(private_tmux.name) + "; sleep 600"]) for name in ("tui", "tui2"))

    def shown(where: str = pane) -> str:
        return private_tmux.run("capture-pane", "-p", "-t", where)

    for where in (pane, other):
        wait(lambda where=where: HEADER.search(shown(where)) and f"{agent.name}:0.0" in shown(where), "the TUI's table, through a new service", timeout=60)
        assert "watching from this headspace alone" not in shown(where), shown(where)
    second = read_card(place)
    assert second is not None and second["pid"] != first["pid"] and alive(second["pid"])
    services.append(second["pid"])
    # The service the other TUI started found the lock taken; it asks again for LOCK_PATIENCE, then ends.
    wait(lambda: serving(private_tmux.name) == [second["pid"]], "one service left")
    private_tmux.run("send-keys", "-t", other, "q")

    os.kill(second["pid"], signal.SIGKILL)  # under the open TUI
    # The lock taken here as soon as the kernel lets go of it, and held a while, as by a service still
    # starting: the TUI says it lost its service and waits for it.
    held = take_lock(place, patience=2.0)
    try:
        assert wait_gone(second["pid"], 10)
        wait(lambda: "not answering" in shown(), "the TUI saying its service is lost")
        time.sleep(1.0)
        assert "not answering" in shown() and read_card(place) is None or read_card(place)["pid"] == second["pid"], shown()
    finally:
        os.close(held)  # a lock with no service behind it: the TUI starts one
    wait(lambda: (card := read_card(place)) is not None and card["pid"] not in (first["pid"], second["pid"]) and alive(card["pid"]), "a third service, started by the TUI", timeout=60)
    third = read_card(place)
    assert third is not None
    services.append(third["pid"])
    wait(lambda: "not answering" not in shown() and f"{agent.name}:0.0" in shown(), "the TUI drawing from the new service", timeout=30)

    private_tmux.run("send-keys", "-t", pane, "q")
    wait(lambda: HEADER.search(shown()) is None, "the TUI ended")
    assert alive(third["pid"]), "the service ended with its client"
    private_tmux.run("kill-server")
    assert wait_gone(third["pid"], 10), "the service outlived its tmux server"
    assert not place.socket.exists() and read_card(place) is None


@pytest.mark.parametrize("end", ["its last word", "no word from it"])
def test_a_tui_outside_the_watched_tmux_says_its_server_is_gone(claude_session, private_tmux, services, end):
    """The trial: with its tmux server gone the TUI said only "the headspace service is not answering"; now it says why.

    From the service's last word, or, when none reached it (the service died
    with the server, or ended before the TUI's stream opened, as on a loaded
    CI machine), from its own look when it tries to start the service again.
    The second case is made certain: the service is stopped before the server
    is killed, so it never looks, then killed.
    """
    from tests.harness.tmux import temp_server

    agent = claude_session([], name="why")
    card = started(private_tmux.name, services)
    with temp_server("hs-desk-") as (_root, desk):  # the user's own terminal: another tmux server, watching this one (-L)
        pane = desk.new_session("tui", width=WIDTH, height=HEIGHT, cwd="/", command=["sh", "-c", headspace_words(private_tmux.name) + "; sleep 600"])

        def shown() -> str:
            return " ".join(desk.run("capture-pane", "-p", "-t", pane).split())

        wait(lambda: f"{agent.name}:0.0" in shown(), "the TUI's table, through the service", timeout=60)
        if end == "no word from it":
            os.kill(card["pid"], signal.SIGSTOP)
            private_tmux.run("kill-server")
            os.kill(card["pid"], signal.SIGKILL)
        else:
            private_tmux.run("kill-server")
        assert wait_gone(card["pid"], 10)
        try:
            wait(lambda: "service ended: the tmux server" in shown(), "the TUI saying its tmux server is gone")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the TUI shows: {shown()[:400]}") from None
        time.sleep(2.0)  # no service can start for a server that is gone: the line stays
        assert "service ended: the tmux server" in shown() and "not answering" not in shown(), shown()
        desk.run("send-keys", "-t", pane, "q")
