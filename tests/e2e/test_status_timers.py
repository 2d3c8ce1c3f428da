"""Once our control clients have attached, their status timers are lined up; the user's options stay as they were.

Every tmux client has a status timer that wakes tmux each
``status-interval``; attached one after another, 300 control clients woke
it 20 times a second at rest (tmux/status_timers.py).  Set to the value
it already has, ``status-interval`` restarts every timer at once, and they
fire together from then on.  What a test can see of that without a clock:
tmux's own log (``tmux -v``) says when it restarted the timers
(``options_push_changes: status-interval``).  The CPU it saves is
measured by ``benchmarks/service.py``.

Real tmux (a private server started with ``-v`` in the test's folder),
the real detectors with a threshold of nothing, so that five sessions are
worth it.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time
from pathlib import Path

import pytest

from headspace_tui.service.watching.pane_watch import PaneWatch
from headspace_tui.service.watching.sessions import Sessions
from headspace_tui.service.watching.supervise import Supervisor
from headspace_tui.tmux import status_timers
from headspace_tui.tmux.server import TmuxServer
from tests.harness.tmux import tmux_binary

pytestmark = pytest.mark.e2e

RESTARTED = "options_push_changes: status-interval"  # tmux's log line when it restarts every client's status timer


async def until(check, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return bool(check())


def logged_server(private_tmux, folder: Path, sessions: int) -> list[Path]:
    """The private server started with tmux's log on (written in ``folder``), ``sessions`` sessions of ``cat``; its log files."""
    subprocess.run([tmux_binary(), "-L", private_tmux.name, "-v", "-f", "/dev/null", "new-session", "-d", "-s", "s0", "cat"], cwd=folder, env=private_tmux.env, check=True, timeout=20)
    for n in range(1, sessions):
        private_tmux.run("new-session", "-d", "-s", f"s{n}", "cat")
    return sorted(folder.glob("tmux-server-*.log"))


def restarts(folder: Path) -> int:
    return sum(path.read_text(errors="replace").count(RESTARTED) for path in folder.glob("tmux-server-*.log"))


def options(private_tmux) -> str:
    """Every option a user could have set: the server's, the global session and window ones, each session's own, and the hooks."""
    said = [private_tmux.run("show-options", "-s"), private_tmux.run("show-options", "-g"), private_tmux.run("show-options", "-gw"), private_tmux.run("show-hooks", "-g")]
    for session in private_tmux.run("list-sessions", "-F", "#{session_id}").split():
        said += [private_tmux.run("show-options", "-t", session), private_tmux.run("show-hooks", "-t", session)]
    return "\n".join(said)


def run_sessions(private_tmux, then) -> dict:
    """The detectors of every session of the server (each pane watched), a line-up worth it at any cost; ``then(sessions)`` awaited; all ended after."""
    server = TmuxServer(socket_name=private_tmux.name)
    records = server.list_panes()
    panes = {r.pane_id: PaneWatch(r, f"key-{r.pane_id}") for r in records}

    async def read(pane_id, client):
        return None

    async def scenario() -> dict:
        sessions = Sessions(server, Supervisor(), panes, read=read, request_discovery=lambda: None, state_of=lambda pane: None, clock=time.monotonic)
        sessions.line_up_from = 0.001
        sessions.start()
        try:
            await sessions.discovered(1, {r.session_id for r in records}, records)
            assert await until(lambda: len(sessions.clients) == len(records)), f"{len(sessions.clients)} of {len(records)} control clients attached"
            return await then(sessions)
        finally:
            await sessions.supervisor.stop()
            await sessions.stop()

    return asyncio.run(scenario())


def test_the_timers_are_lined_up_once_the_clients_have_attached_and_no_option_changes(private_tmux, tmp_path):
    assert logged_server(private_tmux, tmp_path, 5), "tmux wrote no log"
    before = options(private_tmux)
    assert restarts(tmp_path) == 0

    async def then(sessions) -> dict:
        lined = await until(lambda: sessions.lined_up >= 1)
        # No attach since: nothing more out of line, nothing done again.
        await asyncio.sleep(status_timers.LINE_UP_QUIET + 1)
        return {"lined": lined, "count": sessions.lined_up, "restarts": restarts(tmp_path)}

    got = run_sessions(private_tmux, then)
    assert got["lined"], "the status timers were never lined up"
    assert got["count"] == 1 and got["restarts"] == 1, got
    assert options(private_tmux) == before, "an option or hook of the user's server changed"
    assert private_tmux.run("show-options", "-gv", "status-interval").strip() == "15"


def test_a_users_hook_on_set_option_leaves_the_timers_as_they_are_and_never_runs(private_tmux, tmp_path, caplog):
    logged_server(private_tmux, tmp_path, 4)
    ran = tmp_path / "hook-ran"
    private_tmux.run("set-hook", "-g", "after-set-option", f"run-shell -b 'echo x >> {ran}'")
    before = options(private_tmux)
    caplog.set_level(logging.INFO, logger="headspace_tui.service.watching.sessions")

    async def then(sessions) -> bool:
        return await until(lambda: "left as they are" in caplog.text)

    assert run_sessions(private_tmux, then), "the line-up never decided"
    assert restarts(tmp_path) == 0, "the timers were restarted under a user's hook"
    assert not ran.exists(), "the user's after-set-option hook ran"
    assert options(private_tmux) == before


def test_the_command_changes_nothing_when_the_value_moved_since_it_was_read(private_tmux, tmp_path):
    """A user who sets status-interval between our read and our set keeps their value: the set is made only if the value is still the one read."""
    logged_server(private_tmux, tmp_path, 1)
    private_tmux.run("set-option", "-g", "status-interval", "30")
    restarted = restarts(tmp_path)
    private_tmux.run(*status_timers.line_up(15))  # read as 15 a moment before
    assert private_tmux.run("show-options", "-gv", "status-interval").strip() == "30"
    assert restarts(tmp_path) == restarted
    private_tmux.run(*status_timers.line_up(30))
    assert private_tmux.run("show-options", "-gv", "status-interval").strip() == "30"
    assert restarts(tmp_path) == restarted + 1, "the value still read: the timers are restarted"
