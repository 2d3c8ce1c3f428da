"""What /proc tells about a Claude process: its config dir (environment) and version (install)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from headspace_tui.detect.claude.agents_cli import agents_env, parse_agents, runnable, supports_agents
from headspace_tui.detect.claude.process import _package_version, claude_process, config_dir_of, process_env, version_of
from headspace_tui.shared.proctree import ProcessInfo, read_process_table


def _sleeper(env: dict[str, str]) -> subprocess.Popen:
    """``sleep`` with ``env``, returned once its exec is complete.

    Until the exec, /proc shows the parent's environment; and the kernel names
    the new program (``comm``) before the loader records where its
    environment is, so for a moment ``environ`` is empty (seen once under load).
    """
    proc = subprocess.Popen(["sleep", "30"], env=env)
    deadline = time.monotonic() + 5
    while Path(f"/proc/{proc.pid}/comm").read_text().strip() != "sleep" or not Path(f"/proc/{proc.pid}/environ").read_bytes():
        assert time.monotonic() < deadline, "sleep did not start"
        time.sleep(0.005)
    return proc


@pytest.fixture
def child(tmp_path):
    """A real process with an environment of our choosing."""
    proc = _sleeper({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "their-home"), "OTHER": "x"})
    yield proc
    proc.kill()
    proc.wait()


def test_the_environment_of_another_process_is_read(child, tmp_path):
    assert process_env(child.pid) == {"HOME": str(tmp_path / "their-home")}
    assert config_dir_of(child.pid) == tmp_path / "their-home" / ".claude"


def test_claude_config_dir_wins_over_home(tmp_path):
    proc = _sleeper({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
    try:
        assert config_dir_of(proc.pid) == tmp_path / "cfg"
    finally:
        proc.kill()
        proc.wait()


def test_the_runtime_folder_its_hooks_write_under_follows_its_own_xdg_runtime_dir(tmp_path):
    """Not headspace's: a hook writes where the Claude that runs it says (the monitor watches that spool too)."""
    theirs = _sleeper({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(tmp_path / "their-run")})
    without = _sleeper({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    try:
        table = read_process_table()
        assert claude_process(theirs.pid, table).runtime == tmp_path / "their-run" / "headspace"
        assert claude_process(without.pid, table).runtime == Path(f"/tmp/headspace-{os.getuid()}")
        assert str(tmp_path) not in os.environ.get("XDG_RUNTIME_DIR", "")
    finally:
        for proc in (theirs, without):
            proc.kill()
            proc.wait()


def test_a_gone_process_has_no_environment():
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert process_env(proc.pid) == {} and config_dir_of(proc.pid) is None


def _package(folder: Path, name: str, version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({"name": name, "version": version}))


def test_version_from_the_native_installer_name():
    info = ProcessInfo(pid=999999, ppid=1, comm="2.1.330", argv=("/home/u/.local/share/claude/versions/2.1.330",))
    assert version_of(info) == "2.1.330"


def test_version_from_the_package_next_to_cli_js(tmp_path):
    _package(tmp_path / "node_modules/@anthropic-ai/claude-code", "@anthropic-ai/claude-code", "2.0.60")
    cli = tmp_path / "node_modules/@anthropic-ai/claude-code/cli.js"
    info = ProcessInfo(pid=999999, ppid=1, comm="claude", argv=("node", str(cli)))
    assert version_of(info) == "2.0.60"


def test_version_from_the_package_above_the_native_binary(tmp_path):
    _package(tmp_path / "claude-code", "@anthropic-ai/claude-code", "2.1.160")
    info = ProcessInfo(pid=999999, ppid=1, comm="claude", argv=(str(tmp_path / "claude-code/bin/claude.exe"),))
    assert version_of(info) == "2.1.160"


def test_a_package_json_of_something_else_or_a_hostile_one_gives_no_version(tmp_path):
    _package(tmp_path / "a", "left-pad", "1.0.0")
    assert _package_version(str(tmp_path / "a")) is None
    (tmp_path / "b").mkdir()
    (tmp_path / "b/package.json").write_text("[" * 200_000)
    assert _package_version(str(tmp_path / "b")) is None
    (tmp_path / "c").mkdir()
    os.mkfifo(tmp_path / "c/package.json")  # must not block
    assert _package_version(str(tmp_path / "c")) is None


def test_claude_agents_output_is_parsed_defensively():
    real = json.dumps(
        [
            {"pid": 31781, "cwd": "/w", "kind": "interactive", "sessionId": "e15f", "name": "work-3b", "status": "waiting", "waitingFor": "permission prompt"},
            {"pid": "nope"},
            "garbage",
        ]
    )
    found = parse_agents(real)
    assert list(found) == [31781] and found[31781].waiting_for == "permission prompt" and found[31781].name == "work-3b"
    assert parse_agents("not json") == {} and parse_agents("{}") == {} and parse_agents("[" * 100_000) == {}


def test_claude_agents_is_asked_only_where_it_exists_and_only_with_the_agents_own_home(tmp_path):
    assert not supports_agents("2.1.30") and not supports_agents(None) and supports_agents("2.1.145") and supports_agents("2.1.330")
    env = agents_env({"HOME": "/their/home", "CLAUDE_CONFIG_DIR": "/their/cfg"})
    assert env["HOME"] == "/their/home" and env["CLAUDE_CONFIG_DIR"] == "/their/cfg"
    assert "ANTHROPIC_API_KEY" not in env and env["DISABLE_AUTOUPDATER"] == "1"
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\necho []\n")
    script.chmod(0o755)
    assert runnable(str(script))
    script.chmod(0o777)
    assert not runnable(str(script)), "a binary anyone may rewrite is never run"
    assert not runnable(str(tmp_path))
