"""Once our control clients have attached, their status timers are lined up; the user's options stay as they were.

Every tmux client has a status timer that wakes tmux each
``status-interval``; attached one after another, 300 control clients woke
it 20 times a second at rest (tmux/status_timers.py).  Set to the value
it already has, ``status-interval`` restarts every timer at once, and they
fire together from then on.  tmux's own log (``tmux -v``) shows both: the
restart (``options_push_changes: status-interval``) and each timer's
firing, stamped to the microsecond (``client 0x…, status interval 1``).
The CPU it saves is measured by ``benchmarks/service.py``.

Real tmux (a private server started with ``-v`` in the test's folder, its
status-interval 1 s so that firings come quickly), the real detectors
with a threshold of nothing, so that five sessions are worth it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import subprocess
import time
from pathlib import Path

import pytest

from headspace_tui.service.watching.pane_watch import PaneWatch
from headspace_tui.service.watching.sessions import Sessions
from headspace_tui.service.watching.supervise import Supervisor
from headspace_tui.tmux import status_timers
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_client_cap import until
from tests.harness.tmux import tmux_binary

pytestmark = pytest.mark.e2e

RESTARTED = "options_push_changes: status-interval"  # tmux's log line when it restarts every client's status timer


def logged_server(private_tmux, folder: Path, sessions: int) -> list[Path]:
    """The private server started with tmux's log on (written in ``folder``), ``sessions`` sessions of ``cat``; its log files."""
    subprocess.run([tmux_binary(), "-L", private_tmux.name, "-v", "-f", "/dev/null", "new-session", "-d", "-s", "s0", "cat"], cwd=folder, env=private_tmux.env, check=True, timeout=20)
    for n in range(1, sessions):
        private_tmux.run("new-session", "-d", "-s", f"s{n}", "cat")
    return sorted(folder.glob("tmux-server-*.log"))


def restarts(folder: Path) -> int:
    return sum(path.read_text(errors="replace").count(RESTARTED) for path in folder.glob("tmux-server-*.log"))


FIRED = re.compile(r"^(\d+\.\d+) client (0x[0-9a-f]+), status interval \d+$", re.MULTILINE)


def firings_after_restart(folder: Path) -> list[tuple[float, str]]:
    """Each status timer's firing after the last restart of them all, as (tmux's time, client), from its log."""
    text = "".join(path.read_text(errors="replace") for path in folder.glob("tmux-server-*.log"))
    after = text.rfind(RESTARTED)
    return [(float(at), client) for at, client in FIRED.findall(text[after:])] if after >= 0 else []


def bursts(firings: list[tuple[float, str]], apart: float = 0.2) -> list[set[str]]:
    """The firings grouped where tmux's clock moved on by more than ``apart`` s: the clients of each turn of timers."""
    groups: list[set[str]] = []
    last = None
    for at, client in firings:
        if last is None or at - last > apart:
            groups.append(set())
        groups[-1].add(client)
        last = at
    return groups


def options(private_tmux) -> str:
    """Every option a user could have set: the server's, the global session and window ones, each session's own, and the hooks."""
    said = [private_tmux.run("show-options", "-s"), private_tmux.run("show-options", "-g"), private_tmux.run("show-options", "-gw"), private_tmux.run("show-hooks", "-g")]
    for session in private_tmux.run("list-sessions", "-F", "#{session_id}").split():
        said += [private_tmux.run("show-options", "-t", session), private_tmux.run("show-hooks", "-t", session)]
    return "\n".join(said)


def run_sessions(private_tmux, then, line_up_from: float = 0.001) -> dict:
    """The detectors of every session of the server (each pane watched), a line-up worth it at any cost unless ``line_up_from`` says otherwise; ``then(sessions)`` awaited; all ended after."""
    server = TmuxServer(socket_name=private_tmux.name)
    records = server.list_panes()
    panes = {r.pane_id: PaneWatch(r, f"key-{r.pane_id}") for r in records}

    async def read(pane_id, client):
        return None

    async def scenario() -> dict:
        sessions = Sessions(server, Supervisor(), panes, read=read, request_discovery=lambda: None, state_of=lambda pane: None, clock=time.monotonic)
        sessions.line_up_from = line_up_from
        sessions.start()
        try:
            await sessions.discovered(1, {r.session_id for r in records}, records)
            assert await until(lambda: len(sessions.clients) == len(records), 30.0), f"{len(sessions.clients)} of {len(records)} control clients attached"
            return await then(sessions)
        finally:
            await sessions.supervisor.stop()
            await sessions.stop()

    return asyncio.run(scenario())


def test_the_timers_are_lined_up_once_the_clients_have_attached_and_no_option_changes(private_tmux, tmp_path):
    assert logged_server(private_tmux, tmp_path, 5), "tmux wrote no log"
    private_tmux.run("set-option", "-g", "status-interval", "1")  # the test's own server: firings every second
    before = options(private_tmux)
    assert restarts(tmp_path) == 1  # that set

    async def then(sessions) -> dict:
        lined = await until(lambda: sessions.lined_up >= 1, 30.0)
        restarted = restarts(tmp_path)
        # Three more seconds of firings: the five clients' timers, each second.
        fired = await until(lambda: len(firings_after_restart(tmp_path)) >= 5 * 4, 30.0)
        return {"lined": lined, "restarts": restarted, "fired": fired, "clients": {c.session_id for c in sessions.clients.values()}}

    got = run_sessions(private_tmux, then)
    assert got["lined"], "the status timers were never lined up"
    assert got["restarts"] == 2, f"tmux restarted the timers {got['restarts'] - 1} times for our line-up"
    assert got["fired"], "tmux's log shows no firings after the line-up"
    groups = bursts(firings_after_restart(tmp_path))
    # The restart itself fires every timer once; then each turn fires all of them together, once a second.
    assert len(groups) >= 3 and all(len(group) == len(groups[0]) for group in groups[:-1]), f"the timers fire apart: {[len(g) for g in groups]}"
    assert len(groups[0]) >= 5, f"fewer timers fired together than our five clients: {[len(g) for g in groups]}"
    assert options(private_tmux) == before, "an option or hook of the user's server changed"
    assert private_tmux.run("show-options", "-gv", "status-interval").strip() == "1"


def test_a_users_hook_on_set_option_leaves_the_timers_as_they_are_and_never_runs(private_tmux, tmp_path, caplog):
    logged_server(private_tmux, tmp_path, 4)
    ran = tmp_path / "hook-ran"
    private_tmux.run("set-hook", "-g", "after-set-option", f"run-shell -b 'echo x >> {ran}'")
    before = options(private_tmux)
    caplog.set_level(logging.INFO, logger="headspace_tui.service.watching.sessions")

    async def then(sessions) -> bool:
        return await until(lambda: "left as they are" in caplog.text, 30.0)

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


def test_sessions_with_an_interval_of_their_own_are_passed_over_for_one_without(private_tmux, tmp_path):
    """The command's check reads the interval of the session it runs in: it goes through a session that has none of its own."""
    logged_server(private_tmux, tmp_path, 5)
    for n in range(1, 5):
        private_tmux.run("set-option", "-t", f"s{n}", "status-interval", "7")
    before, restarted = options(private_tmux), restarts(tmp_path)  # each set restarted the timers too

    async def then(sessions) -> bool:
        return await until(lambda: sessions.lined_up >= 1, 30.0)

    assert run_sessions(private_tmux, then), "the timers were not lined up through the session without an interval of its own"
    assert restarts(tmp_path) == restarted + 1
    assert options(private_tmux) == before


def test_a_handful_of_sessions_is_never_worth_a_question_to_tmux(private_tmux, tmp_path):
    """Five sessions at the real threshold: not worth a line-up at any interval, so tmux is asked nothing about its options or hooks."""
    logged_server(private_tmux, tmp_path, 5)

    async def then(sessions) -> bool:
        return await until(lambda: sessions._line_up is not None and sessions._line_up.done(), 30.0)

    assert run_sessions(private_tmux, then, status_timers.LINE_UP_FROM), "the line-up never decided"
    asked = "".join(path.read_text(errors="replace") for path in tmp_path.glob("tmux-server-*.log"))
    assert "cmd_parse_build_commands: show-hooks" not in asked and "cmd_parse_build_commands: show-options" not in asked, "tmux was asked about a line-up not worth it"
    assert restarts(tmp_path) == 0
