"""``headspace doctor`` passes on a healthy setup and names what is broken on a broken one.

Real tmux (a private server), the real Claude Code binary on PATH, the real
``hooks install`` in a temporary HOME; never the user's own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.env import private_env
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e


def _env(home: Path, claude_binary: str) -> dict[str, str]:
    return private_env(home, claude_dir=home / ".claude", path=f"{Path(claude_binary).parent}:/usr/bin:/bin")


def _doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "headspace_tui", *args, "doctor"], capture_output=True, text=True, env=env, timeout=60)


def test_doctor_passes_on_a_healthy_setup(private_tmux, claude_binary, tmp_path):
    private_tmux.new_session("work", width=80, height=24, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])
    env = _env(tmp_path, claude_binary)
    (tmp_path / ".claude" / "sessions").mkdir(parents=True)
    installed = subprocess.run([sys.executable, "-m", "headspace_tui", "hooks", "install"], capture_output=True, text=True, env=env, timeout=60)
    assert installed.returncode == 0, installed.stderr
    result = _doctor(env, "-L", private_tmux.name)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for name in ("tmux", "tmux server", "control mode", "Claude Code", "status files", "hooks", "hook spool", "terminal colours", "notifications"):
        assert any(line.split("  ")[1:2] and line[6:].startswith(name) for line in lines), (name, result.stdout)
    assert not any(line.startswith("FAIL") for line in lines)
    assert "Claude Code" in result.stdout and "2." in result.stdout  # its version
    assert "healthy" in lines[-1]


def test_doctor_names_each_broken_part(private_tmux, claude_binary, tmp_path):
    env = _env(tmp_path, claude_binary)
    (tmp_path / "run" / "headspace").mkdir()
    os.chmod(tmp_path / "run" / "headspace", 0o777)  # anyone could forge hook events here
    result = _doctor(env, "-L", f"{private_tmux.name}-none")  # no server on that socket
    assert result.returncode == 1
    out = result.stdout
    assert "FAIL  tmux server" in out and "no tmux server" in out and "fix: start tmux" in out
    # The fix runs as written: this headspace by the name or path that starts it (here ``python -m headspace_tui``; no headspace on PATH).
    assert "hooks not installed" in out and f"fix: {sys.executable} -m headspace_tui hooks install" in out, out
    assert "FAIL  hook spool" in out and "writable by other users" in out and "chmod 700" in out
    assert "broken: 2 checks failed" in out


def test_doctor_checks_the_running_agents_config_dirs_on_the_server_named(claude_session, private_tmux, claude_binary, tmp_path):
    """The agent runs under a HOME of its own, doctor under another: the agent's hooks and status files are the ones that count.

    And ``-L`` is honoured throughout: the session count is that server's.
    """
    agent = claude_session([], name="elsewhere")
    agent_dir = agent.home / ".claude"
    installed = subprocess.run([sys.executable, "-m", "headspace_tui", "hooks", "install"], capture_output=True, text=True, env=_env(agent.home, claude_binary), timeout=60)
    assert installed.returncode == 0, installed.stderr
    poll(lambda: list((agent_dir / "sessions").glob("*.json")), bool, timeout=30)
    private_tmux.new_session("extra", width=80, height=24, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])
    own = tmp_path / "doctor-home"
    own.mkdir()
    result = _doctor(_env(own, claude_binary), "-L", private_tmux.name)
    out = result.stdout
    target = f"{agent.name}:0.0"
    assert "ok  hooks" in out and f"installed in {agent_dir / 'settings.json'} (for {target})" in out, out
    assert f"{agent_dir / 'sessions'}: 1 file (for {target})" in out, out
    assert str(own) not in out.replace(f"{own}/run", "")  # doctor's own HOME is not where the agent's files are
    count = len(private_tmux.run("list-sessions", "-F", "#{session_name}").split())
    assert count == 2 and f"{count} sessions on socket {private_tmux.name!r}" in out
