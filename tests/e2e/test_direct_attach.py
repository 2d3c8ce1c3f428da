"""The windowless attach against the real tmux server (tmux/direct_attach.py).

tmux before 3.7 crashes when a notification reaches a control client between
its first identify message and its last.  The server's own debug log (``-vvv``)
shows where its event loop turns: a ``cmdq_next`` line each time round.  The
stock ``tmux -C`` client gives it two turns inside its identify (its two
descriptors arrive in reads of their own); the direct attach none.  Then the
client does what a ``tmux -C`` client does: commands, output, a clean detach,
an end when its session goes, and nothing left behind, also under a burst of
sessions made and killed while it attaches and detaches again and again.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from headspace_tui.tmux.control import ControlClient
from headspace_tui.tmux.server import TmuxServer, TmuxUnavailable

pytestmark = pytest.mark.e2e


def _turns_inside_identify(log: list[str]) -> dict[str, int]:
    """For each control client in a server log: how often the server's loop turned between its FLAGS and its DONE."""
    turns: dict[str, int] = {}
    for i, line in enumerate(log):
        match = re.search(r"client (0x[0-9a-f]+) IDENTIFY_FLAGS (0x[0-9a-f]+)", line)
        if match is None or not int(match.group(2), 16) & 0x2000:  # CLIENT_CONTROL
            continue
        client = match.group(1)
        done = next(j for j in range(i, len(log)) if f"client {client} name is" in log[j])
        turns[f"{client}@{i}"] = sum("cmdq_next" in line for line in log[i:done])
    return turns


def _attach_and_detach(server: TmuxServer, session_id: str) -> list[str]:
    async def once() -> list[str]:
        client = ControlClient(server, session_id, on_output=lambda pane, size: None)
        await client.start()
        answer = await client.command("display-message", "-p", "#{client_control_mode}")
        await client.close()
        return answer

    return asyncio.run(once())


def test_the_server_reads_a_direct_identify_without_a_turn_of_its_loop(private_tmux, tmp_path, monkeypatch):
    # -vvv: the server writes its debug log into the folder it is started from
    subprocess.run(["tmux", "-vvv", "-L", private_tmux.name, "-f", "/dev/null", "new-session", "-d", "-s", "a", "sleep 600"], cwd=tmp_path, env=private_tmux.env, check=True)
    server = TmuxServer(socket_name=private_tmux.name)
    session_id = server.pane(private_tmux.run("display-message", "-p", "-t", "a", "#{pane_id}").strip()).session_id
    monkeypatch.setenv("HEADSPACE_TMUX_ATTACH", "client")
    assert _attach_and_detach(server, session_id) == ["1"]
    monkeypatch.setenv("HEADSPACE_TMUX_ATTACH", "direct")
    assert _attach_and_detach(server, session_id) == ["1"]
    time.sleep(0.3)  # the log is written as the server goes
    (log_file,) = tmp_path.glob("tmux-server-*.log")
    stock, direct = _turns_inside_identify(log_file.read_text(errors="replace").splitlines()).values()
    assert stock >= 1, "the stock client's identify no longer spans a turn of the loop: the measure is blind"
    assert direct == 0, f"the server's loop turned {direct} times inside the direct identify"
    print(f"turns of tmux's loop inside the identify: tmux -C {stock}, direct {direct}")


def test_a_direct_client_commands_detaches_and_ends_with_its_session(private_tmux, tmp_path, monkeypatch):
    monkeypatch.setenv("HEADSPACE_TMUX_ATTACH", "direct")
    pane = private_tmux.new_session("work", width=80, height=24, cwd=str(tmp_path), command=["cat"])
    private_tmux.new_session("other", width=80, height=24, cwd=str(tmp_path), command=["sleep", "600"])
    server = TmuxServer(socket_name=private_tmux.name)
    session_id = server.pane(pane).session_id
    outputs: list[str] = []
    exits: list[str] = []

    async def scenario() -> None:
        client = ControlClient(server, session_id, on_output=lambda p, size: outputs.append(p), on_exit=exits.append)
        await client.start()
        assert type(client.pipe).__name__ == "DirectPipe"
        assert private_tmux.run("list-clients", "-F", "#{client_control_mode} #{session_name}").split() == ["1", "work"]
        await client.send_keys(pane, "typed-through-the-client", literal=True)
        await client.send_keys(pane, "Enter")
        deadline = time.monotonic() + 5
        while "typed-through-the-client" not in await client.capture(pane, ansi=False) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert "typed-through-the-client" in await client.capture(pane, ansi=False)
        assert pane in outputs
        await client.close()
        assert exits and private_tmux.run("list-clients").strip() == ""

        client = ControlClient(server, session_id, on_output=lambda p, size: None, on_exit=exits.append)
        await client.start()
        private_tmux.run("kill-session", "-t", "work")  # tmux lets the client go: it ends by itself
        deadline = time.monotonic() + 5
        while not client.closed and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert client.closed and len(exits) == 2
        await client.close()

    asyncio.run(scenario())
    assert private_tmux.run("list-clients").strip() == ""
    assert private_tmux.run("list-sessions", "-F", "#{session_name}").split() == ["other"]


def test_attaching_again_and_again_while_sessions_come_and_go_leaves_the_server_running(private_tmux, tmp_path, monkeypatch):
    """200 attaches and detaches, one after another, while another thread makes and kills a session every few ms."""
    monkeypatch.setenv("HEADSPACE_TMUX_ATTACH", "direct")
    private_tmux.new_session("base", width=80, height=24, cwd=str(tmp_path), command=["sleep", "600"])
    server = TmuxServer(socket_name=private_tmux.name)
    pid = server.server_pid()
    session_id = private_tmux.run("display-message", "-p", "-t", "base", "#{session_id}").strip()
    stop = threading.Event()
    made = [0]

    def storm() -> None:
        while not stop.is_set():
            name = f"brief{made[0]}"
            private_tmux.run("new-session", "-d", "-s", name, "sleep 30", check=False)
            private_tmux.run("kill-session", "-t", name, check=False)
            made[0] += 1

    async def attaches() -> int:
        done = 0
        for _ in range(200):
            client = ControlClient(server, session_id, on_output=lambda p, size: None)
            await client.start()
            await client.close()
            done += 1
        return done

    thread = threading.Thread(target=storm, daemon=True)
    thread.start()
    try:
        done = asyncio.run(attaches())
    finally:
        stop.set()
        thread.join(timeout=10)
    assert done == 200
    assert made[0] >= 20, "the sessions did not come and go while it attached"
    assert server.server_pid() == pid, "the tmux server died"
    assert private_tmux.run("list-clients").strip() == ""
    print(f"200 direct attaches while {made[0]} sessions were made and killed")


def test_a_socket_that_cannot_be_reached_directly_falls_back_to_tmux(private_tmux, tmp_path, monkeypatch):
    monkeypatch.setenv("HEADSPACE_TMUX_ATTACH", "direct")
    pane = private_tmux.new_session("work", width=80, height=24, cwd=str(tmp_path), command=["sleep", "600"])

    class Elsewhere(TmuxServer):
        def socket_file(self) -> str:
            return str(tmp_path / "no-such-socket")  # tmux itself still finds the server by its -L name

    server = Elsewhere(socket_name=private_tmux.name)

    async def scenario() -> None:
        client = ControlClient(server, server.pane(pane).session_id, on_output=lambda p, size: None)
        await client.start()
        assert type(client.pipe).__name__ == "ProcessPipe"
        assert await client.command("display-message", "-p", "#{client_control_mode}") == ["1"]
        await client.close()

    asyncio.run(scenario())

    async def no_server() -> None:
        gone = TmuxServer(socket_name=private_tmux.name + "-none")
        with pytest.raises(TmuxUnavailable):
            await ControlClient(gone, "$0", on_output=lambda p, size: None).start(timeout=3)

    asyncio.run(no_server())
    assert not Path(tmp_path / "no-such-socket").exists()
    # The stock client's attach starts a server there, which finds no session and ends, and tmux 3.3a leaves its
    # socket file: the test's own, removed (one was left in /tmp/tmux-<uid> by every run).
    left = Path(private_tmux.default_socket_path() + "-none")
    if left.is_socket() and subprocess.run(["tmux", "-S", str(left), "list-sessions"], capture_output=True).returncode != 0:
        left.unlink()
