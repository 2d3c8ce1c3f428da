"""Thirty remote sessions through one SSH connection and one channel: the probe carries tmux.

The fixtures are test_remote.py's: ``box`` is a real sshd on 127.0.0.1 with
OpenSSH's default ``MaxSessions`` (10), and ``private_tmux`` the sessions'
tmux server where a login through it finds it.  The agents are 27 fake ones
drawing real recorded Claude screens (benchmarks/fake_agent.py, named
``claude`` in the process table) and 3 real Claude Code sessions on the
fake API.

What is counted, and why it is a true count:

* **connections**: sshd logs ``Accepted publickey for USER from ADDR port P``
  once per authenticated connection (``LogLevel VERBOSE``, set by the
  harness); every distinct port is one TCP connection.  The log covers the
  whole run, so a connection that came and went between two looks is
  counted too.  The live per-connection sshd processes (children of the
  listener) are counted as well.
* **session channels**: sshd logs ``Starting session: command for USER from
  ADDR port P id N`` each time a session channel runs a command (session.c,
  ``do_exec``), which is the only kind of channel headspace opens (the
  master itself runs none: ``ssh -N``).  Counting those lines counts every
  channel ever opened, not a sample; the live children of the connection's
  sshd (one process per running session channel) are counted too.

Before the probe carried tmux, this test saw one channel per session
(``tmux -C attach-session``) plus one per ``list-panes``/capture/key, and
more connections once the first one's 10 sessions were taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
from pathlib import Path

import psutil
import pytest

from headspace_tui.model import AgentState
from tests.e2e.test_remote import box, private_tmux, remote_app  # noqa: F401 - fixtures
from tests.harness import fake_api as api
from tests.harness.fake_api import block_text
from tests.harness.procs import named
from tests.harness.scenarios import NUMBERED_MENU
from tests.harness.sshd import Sshd
from tests.harness.tmux import PrivateTmux
from tests.ui.apps import press_as_a_person, service_of
from tests.ui.test_app_live import select_agent, wait_until

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
FAKE_AGENT = REPO / "benchmarks" / "fake_agent.py"
CORPUS = REPO / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "120x40"
SESSIONS = 30
REAL = 3  # real Claude sessions among them (the rest draw recorded screens)

_ACCEPTED = re.compile(r"Accepted publickey for \S+ from \S+ port (\d+)")
_SESSION = re.compile(r"Starting session: (\S+) for \S+ from \S+ port (\d+) id (\d+)")


def ssh_log_counts(sshd: Sshd) -> tuple[set[str], list[tuple[str, str]]]:
    """Every connection (its client port) and every session channel (port, id) sshd logged so far."""
    text = sshd.log()
    return set(_ACCEPTED.findall(text)), [(port, ident) for _kind, port, ident in _SESSION.findall(text)]


def live_counts(sshd: Sshd) -> tuple[int, int]:
    """Live per-connection sshds (children of the listener), and the session processes below them."""
    assert sshd.process is not None
    connections = named(sshd.process.pid, "sshd", recursive=False)
    channels = 0
    for connection in connections:
        with contextlib.suppress(psutil.Error):  # a connection that closed meanwhile has none
            channels += len(connection.children())
    return len(connections), channels


def stock_control_clients(root: int) -> list[int]:
    """``tmux -C`` processes below a process (our sshd)."""
    found = []
    for proc in psutil.Process(root).children(recursive=True):
        try:
            if proc.name().startswith("tmux") and "-C" in proc.cmdline():  # a tmux client calls itself "tmux: client"
                found.append(proc.pid)
        except psutil.Error:
            pass  # a one-shot tmux command that ended meanwhile
    return found


def our_ssh_processes() -> int:
    return len(named(psutil.Process(), "ssh"))


def fake_agents(tmux: PrivateTmux, count: int, folder: Path) -> dict[str, int]:
    """``count`` sessions each running a fake agent; pane id -> the agent's pid."""
    folder.mkdir(parents=True, exist_ok=True)
    command = ["bash", "-c", f"exec -a claude {sys.executable} -S {FAKE_AGENT} {CORPUS} {folder}"]
    panes = {}
    for n in range(count):
        pane = tmux.new_session(f"fake{n:02d}", width=120, height=40, cwd=str(folder), command=command)
        panes[pane] = int(tmux.run("display-message", "-p", "-t", pane, "#{pane_pid}").strip())
    return panes


def test_thirty_remote_sessions_watched_through_one_connection_and_one_channel(claude_session, fake_api, private_tmux, box, tmp_path):  # noqa: F811 - fixtures
    real = [claude_session(name=f"real{n}") for n in range(REAL)]
    fake_api.set_script([api.bash("touch answered.txt && echo answered-remotely", "Make a file")])
    asker = real[0]
    asker.submit("make a file")
    asker.wait_for(NUMBERED_MENU, what="the real agent's permission")
    fake_api.set_script([api.text("Made it.")])
    fakes = fake_agents(private_tmux, SESSIONS - REAL, tmp_path / "drawn")
    addresses = [pane + "@box" for pane in fakes] + [session.pane_id + "@box" for session in real]
    assert len(addresses) == SESSIONS == len(private_tmux.run("list-sessions", "-F", "#{session_id}").split())
    samples: list[tuple[int, int, int]] = []

    def sample() -> None:
        samples.append((*live_counts(box), our_ssh_processes()))

    async def scenario() -> float:
        app = remote_app(box, private_tmux.name, tmp_path)
        async with app.run_test(size=(160, 60)) as pilot:
            began = time.monotonic()
            await wait_until(
                pilot,
                lambda: all(a in app.table.agents and app.table.agents[a].state is not AgentState.UNKNOWN for a in addresses),
                "all 30 remote rows with a state",
                timeout=60,
                every=0.05,
            )
            full_table = time.monotonic() - began
            sample()
            rows = app.table.agents
            assert all(rows[a].host == "box" and not rows[a].offline for a in addresses)
            assert all(rows[a].state is AgentState.IDLE for a in addresses if a != asker.pane_id + "@box")
            await wait_until(pilot, lambda: rows[asker.pane_id + "@box"].state is AgentState.PERMISSION, "the real agent's permission row", 30)
            # Every session has its control client, and all of them run on the far side under the probe.
            await wait_until(pilot, lambda: len(service_of(app)._fleet.monitors["box"].sessions.clients) == SESSIONS, "a control client per session", 30)
            sample()
            # tmux 3.3a there has the identify crash: the probe attached every client itself, no tmux -C among its children.
            assert box.process is not None
            assert stock_control_clients(box.process.pid) == []

            # A state change seen live: a recorded agent draws its permission menu.
            changed = next(iter(fakes))
            drawn = time.monotonic()
            psutil.Process(fakes[changed]).send_signal(signal.SIGUSR2)  # a fake agent this test started
            await wait_until(pilot, lambda: rows[changed + "@box"].state is AgentState.PERMISSION, "the recorded agent's menu seen", 10, every=0.02)
            print(f"\nstate change seen {time.monotonic() - drawn:.3f} s after the signal")
            sample()

            # A key answered: the real agent's permission approved from the table.
            await select_agent(pilot, app, asker.pane_id + "@box", AgentState.PERMISSION)
            answered = lambda r: any("answered-remotely" in block_text(b) for b in r.tool_results())  # noqa: E731
            await press_as_a_person(pilot, app, asker.pane_id + "@box", "y", lambda: fake_api.seen(answered), "the approved command's result", timeout=30)
            await wait_until(pilot, lambda: rows[asker.pane_id + "@box"].state is AgentState.IDLE, "the real agent idle after the key", 30)
            sample()
            await pilot.pause(2.0)  # a few discovery rounds and rechecks more, counted too
            sample()
            return full_table

    full_table = asyncio.run(scenario())
    assert (asker.workdir / "answered.txt").exists()
    connections, channels = ssh_log_counts(box)
    print(f"first full table of {SESSIONS} in {full_table:.2f} s; connections logged {len(connections)}, session channels logged {len(channels)}")
    print("live (connections, session processes, our ssh processes):", samples)
    assert len(connections) == 1, f"sshd accepted {len(connections)} connections"
    assert len(channels) == 1, f"sshd started {len(channels)} session channels: {channels}"
    assert all(live == (1, 1, 2) for live in samples), samples  # one connection, one channel; here the master and the probe's ssh


def test_a_flooding_remote_session_neither_starves_the_others_nor_grows_memory(private_tmux, box, tmp_path):  # noqa: F811 - fixtures
    """``yes`` in one remote session while five recorded agents draw their menus, all on the probe's one channel.

    The flood's stream may have at most ``probe_tmux.WINDOW`` bytes in flight
    and the control client holds the flooding pane back (``refresh-client -A
    pause``, sent through the same stream), so the others' menus are seen
    as fast as without it, the probe's memory stays flat and no stream's
    unread bytes here pass the line limit.
    """
    from headspace_tui.remote.probe_tmux import WINDOW
    from headspace_tui.tmux.control_pipe import LINE_LIMIT

    fakes = fake_agents(private_tmux, 5, tmp_path / "drawn")
    flood = private_tmux.new_session("flood", width=120, height=40, cwd=str(tmp_path), command=["sh", "-c", "sleep 3; exec yes 'flooding the one channel, line after line'"])
    addresses = [pane + "@box" for pane in fakes]

    def said(p: psutil.Process) -> str:
        with contextlib.suppress(psutil.Error):
            return f"{p.pid} (group {group(p)}): {' '.join(p.cmdline())[:160]}"
        return f"{p.pid}: gone"

    def pythons() -> list[psutil.Process]:
        assert box.process is not None
        return named(box.process.pid, "python3")

    def group(p: psutil.Process) -> int | None:
        with contextlib.suppress(OSError, psutil.Error):
            return os.getpgid(p.pid)
        return None

    def probe_rss(monitor) -> int:
        # The probe the host talks to now: the python3 its shell became (``exec``), so its pid is the
        # group's (a start that a loaded machine took for hung leaves one ending beside it: checked
        # below). Another python3 in its group is the probe forking tmux, caught before the exec.
        found = pythons()
        ours = [p for p in found if p.pid == monitor.host.probe.remote_pid]
        assert len(ours) == 1, [said(p) for p in found]
        return ours[0].memory_info().rss

    def no_other_probe(monitor) -> bool:
        return all(group(p) in (None, monitor.host.probe.remote_pid) for p in pythons())

    async def scenario() -> dict[str, object]:
        app = remote_app(box, private_tmux.name, tmp_path)
        async with app.run_test(size=(140, 40)) as pilot:
            monitor = service_of(app)._fleet.monitors["box"]
            await wait_until(pilot, lambda: all(a in app.table.agents and app.table.agents[a].state is AgentState.IDLE for a in addresses), "the five agents idle", 60)
            await wait_until(pilot, lambda: len(monitor.sessions.clients) == 6, "a control client per session, the flood's too", 30)
            mux = monitor.host.server.mux
            assert mux is not None and mux.running
            flood_session = private_tmux.run("display-message", "-p", "-t", flood, "#{session_id}").strip()
            flood_client = monitor.sessions.clients[flood_session]
            await wait_until(pilot, lambda: flood_client.floods >= 1, "the flood held back by its control client", 15)
            rss, unread = [probe_rss(monitor)], [0]
            delays = []
            carried = sum(s.received for s in mux.streams)
            began = time.monotonic()
            for pane in fakes:  # one menu at a time, each while the flood runs
                drawn = time.monotonic()
                psutil.Process(fakes[pane]).send_signal(signal.SIGUSR2)  # a fake agent this test started
                while app.table.agents[pane + "@box"].state is not AgentState.PERMISSION:
                    assert time.monotonic() - drawn < 10, f"{pane}'s menu not seen within 10 s of the flood"
                    unread.append(max(s.unread for s in mux.streams))
                    await pilot.pause(0.02)
                delays.append(time.monotonic() - drawn)
                rss.append(probe_rss(monitor))
                await pilot.pause(0.5)
            for _ in range(20):  # a few seconds more of flood, watched
                rss.append(probe_rss(monitor))
                unread.append(max(s.unread for s in mux.streams))
                await pilot.pause(0.2)
            rate = (sum(s.received for s in mux.streams) - carried) / (time.monotonic() - began)
            assert flood_client.floods >= 2 and not flood_client.closed  # held again and again, never dropped
            # Nothing of ours is left there but the one probe: a start given up on ends with its group.
            await wait_until(pilot, lambda: no_other_probe(monitor), f"no probe but the host's own ({[said(p) for p in pythons()]})", 15)
            return {"delays": delays, "rss": rss, "unread": max(unread), "rate": rate, "floods": flood_client.floods}

    seen = asyncio.run(scenario())
    delays, rss = seen["delays"], seen["rss"]
    assert isinstance(delays, list) and isinstance(rss, list)
    print(
        f"\nmenus seen under the flood after {', '.join(f'{d * 1000:.0f}' for d in delays)} ms; probe RSS {rss[0] >> 20}..{max(rss) >> 20} MB; "
        f"largest unread stream here {seen['unread']} B; carried {float(seen['rate']) / 1024:.0f} KiB/s; flood held {seen['floods']} times"  # type: ignore[arg-type]
    )
    assert max(delays) < 5.0, delays  # not starved by the flood: 5x the 1 s once asserted (a loaded CI box); the delays are printed above
    assert max(rss) - rss[0] < 16 << 20, rss  # flat: the probe holds a chunk per stream, never the flood
    assert int(seen["unread"]) <= LINE_LIMIT + WINDOW  # type: ignore[call-overload]


def test_a_stream_nobody_reads_is_stopped_by_its_window(private_tmux, box, tmp_path):  # noqa: F811 - fixtures
    """The bound itself: a flooding session's stream that headspace never reads.

    The probe sends it at most ``WINDOW`` bytes past what headspace took, and
    headspace takes no more once its unread bytes pass the line limit, so it
    holds at most ``LINE_LIMIT + WINDOW``: the rest waits in tmux, whose
    client there is no longer read.  Meanwhile another session's control
    client on the same channel answers a capture as usual.  (Whether tmux
    then sends ``%pause`` for the pane depends on whether it goes on reading
    the pane meanwhile: it did in 3 runs of 5, so it is not asserted.)
    """
    from headspace_tui.remote.host import RemoteHost
    from headspace_tui.remote.probe_tmux import CHUNK, WINDOW
    from headspace_tui.shared.config import HostSpec
    from headspace_tui.tmux.control import ControlClient
    from headspace_tui.tmux.control_pipe import LINE_LIMIT

    flood = private_tmux.new_session("flood", width=120, height=40, cwd=str(tmp_path), command=["yes", "flooding a stream nobody reads"])
    quiet = private_tmux.new_session("quiet", width=80, height=24, cwd=str(tmp_path), command=["cat"])
    session_of = {pane: private_tmux.run("display-message", "-p", "-t", pane, "#{session_id}").strip() for pane in (flood, quiet)}

    async def scenario() -> tuple[list[int], str]:
        host = RemoteHost(HostSpec("box", box.alias, socket_name=private_tmux.name, ssh_config=str(box.client_config)))
        await host.connect()
        try:
            mux = host.server.mux
            assert mux is not None
            unread = await mux.open(host.server.tmux_words(["-C", "attach-session", "-f", "ignore-size,pause-after=1", "-t", session_of[flood]]))
            received = []
            for _ in range(30):  # three seconds of flood, never read
                await asyncio.sleep(0.1)
                received.append(unread.received)
            client = ControlClient(host.server, session_of[quiet], on_output=lambda pane, size: None)
            await client.start()
            await client.send_keys(host.server.address(quiet), "still answering", literal=True)
            screen = ""
            for _ in range(50):
                screen = await client.capture(host.server.address(quiet), ansi=False)
                if "still answering" in screen:
                    break
                await asyncio.sleep(0.05)
            await client.close()
            await unread.end(2.0)
            return received, screen
        finally:
            await host.close()

    received, screen = asyncio.run(scenario())
    print(f"\nan unread stream received {received[-1]} B in 3 s (bound {LINE_LIMIT + WINDOW + CHUNK} B)")
    assert received[-1] > WINDOW  # it did flood
    assert max(received) <= LINE_LIMIT + WINDOW + CHUNK
    assert received[-1] == received[-10]  # stopped, not slowed: nothing more arrived in the last second
    assert "still answering" in screen
