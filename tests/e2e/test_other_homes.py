"""Agents whose Claude runs under another HOME or config dir than headspace's are still read fully.

headspace runs here with a HOME of its own that no Claude uses.  One agent
runs with a HOME of its own (its status file is under that HOME's .claude),
another with ``CLAUDE_CONFIG_DIR`` pointing elsewhere.  Both must be found
*with their status files* (read from each process's environment), with the
version of the binary they run, by ``headspace status`` as a user runs it
and by the live monitor.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from headspace_tui.detect.claude.agents_cli import list_agents
from headspace_tui.detect.claude.process import process_env
from headspace_tui.service.watching.monitor import Monitor
from headspace_tui.tmux.server import TmuxServer
from tests.harness import fake_api as api
from tests.harness.versions import CLAUDE_VERSION
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e


@pytest.fixture
def headspace_home(tmp_path, monkeypatch):
    """headspace's own HOME and XDG dirs: none of the agents use them."""
    home = tmp_path / "headspace-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(name, str(home / name.lower()))
    return home


def _two_agents(claude_session, tmp_path):
    by_home = claude_session([api.bash("touch marker.txt", "Create a marker file")], name="byhome")
    config_dir = tmp_path / "elsewhere" / "claude-config"
    by_config = claude_session([], name="byconfig", launch=False, extra_env={"CLAUDE_CONFIG_DIR": str(config_dir)})
    # With CLAUDE_CONFIG_DIR set, Claude keeps even its .claude.json there.
    config_dir.mkdir(parents=True)
    (config_dir / ".claude.json").write_text((by_config.home / ".claude.json").read_text())
    by_config.launch()
    by_home.submit("create the marker file")
    by_home.wait_for("Do you want to proceed?", what="the permission dialog")
    return by_home, by_config, config_dir


def _watched(server: TmuxServer, by_home, by_config) -> dict[str, tuple]:
    """The live monitor's reading of both agents once their status files say waiting and idle: by pane, (process, status, agent)."""

    async def run() -> dict[str, tuple]:
        monitor = Monitor(server, hooks=False)
        task = asyncio.create_task(monitor.run())
        try:
            for _ in range(200):
                await asyncio.sleep(0.1)
                pids = {s.pane_id: watch.agent_pid if (watch := monitor.panes.get(s.pane_id)) else None for s in (by_home, by_config)}
                read = {pane: (monitor.facts.processes.get(pid), monitor.facts.statuses.get(pid), monitor.store.agents.get(pane)) for pane, pid in pids.items() if pid}
                statuses = [read[s.pane_id][1].status if s.pane_id in read and read[s.pane_id][1] else None for s in (by_home, by_config)]
                if statuses == ["waiting", "idle"] and read[by_home.pane_id][2] is not None and read[by_home.pane_id][2].state.value == "permission":
                    return read
            raise AssertionError(f"the monitor did not read both agents: {statuses}")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await monitor.stop()

    return asyncio.run(run())


def test_each_status_file_is_found_through_the_process_environment(claude_session, private_tmux, tmp_path, headspace_home):
    by_home, by_config, config_dir = _two_agents(claude_session, tmp_path)
    found = _watched(TmuxServer(socket_name=private_tmux.name), by_home, by_config)
    (home_process, home_status, home_agent), (config_process, config_status, _) = found[by_home.pane_id], found[by_config.pane_id]
    assert home_process.config_dir == by_home.home / ".claude"
    assert config_process.config_dir == config_dir
    assert not (headspace_home / ".claude").exists(), "headspace's own config dir is not where they write"
    assert home_status.status == "waiting" and home_status.waiting_for == "permission prompt"
    assert config_status.status == "idle" and (config_dir / "sessions" / f"{config_process.pid}.json").is_file()
    assert home_agent.observation.tool == "Bash"
    assert any(e.rule == "status-file" for e in home_agent.observation.evidence)
    assert home_process.version == CLAUDE_VERSION == config_process.version


def test_status_command_reports_them_from_another_home(claude_session, private_tmux, tmp_path, headspace_home):
    by_home, by_config, _ = _two_agents(claude_session, tmp_path)
    env = {**os.environ, "HOME": str(headspace_home)}

    def rows():
        out = subprocess.run(
            [sys.executable, "-m", "headspace_tui", "status", "--json", "-L", private_tmux.name],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        return {row["pane_id"]: row for row in map(json.loads, out.stdout.splitlines())}

    found = poll(rows, lambda r: r.get(by_home.pane_id, {}).get("state") == "permission" and by_config.pane_id in r, timeout=20)
    assert found[by_home.pane_id]["tool"] == "Bash"
    assert found[by_home.pane_id]["claude_version"] == CLAUDE_VERSION
    assert found[by_config.pane_id]["state"] == "idle"


def test_the_monitor_watches_every_agents_own_config_dir(claude_session, private_tmux, tmp_path, headspace_home):
    by_home, by_config, config_dir = _two_agents(claude_session, tmp_path)
    server = TmuxServer(socket_name=private_tmux.name)

    async def run() -> tuple[dict, set]:
        monitor = Monitor(server, hooks=False)
        task = asyncio.create_task(monitor.run())
        try:
            for _ in range(200):
                await asyncio.sleep(0.1)
                pids = [watch.agent_pid if (watch := monitor.panes.get(s.pane_id)) else None for s in (by_home, by_config)]
                states = [monitor.facts.statuses[pid].status if pid in monitor.facts.statuses else None for pid in pids]
                if states == ["waiting", "idle"]:
                    break
            return dict(monitor.facts.statuses), set(monitor.facts._watchers)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await monitor.stop()

    statuses, watched = asyncio.run(run())
    assert {by_home.home / ".claude", config_dir} <= watched
    assert sorted(s.status for s in statuses.values()) == ["idle", "waiting"]


def test_claude_agents_json_reports_the_waiting_agent_of_its_own_home(claude_session, private_tmux, tmp_path, headspace_home):
    """The fallback source, against the real binary: run with the agent's own HOME, it lists that agent."""
    by_home, by_config, _ = _two_agents(claude_session, tmp_path)
    process = _watched(TmuxServer(socket_name=private_tmux.name), by_home, by_config)[by_home.pane_id][0]
    answers = asyncio.run(list_agents(process.binary, process_env(process.pid)))
    assert answers[process.pid].status == "waiting"
    assert answers[process.pid].waiting_for == "permission prompt"
    assert answers[process.pid].cwd == str(by_home.workdir)
    assert asyncio.run(list_agents(process.binary, {"HOME": str(headspace_home)})) == {}, "headspace's own HOME has no agents"
