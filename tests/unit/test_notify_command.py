"""``notify_command``: a real program gets the notification in its environment, never through a shell; slow or failing ones are contained."""

from __future__ import annotations

import json
import os
import re
import sys
import time

import pytest

from headspace_tui.model import AgentState
from headspace_tui.notifications.command import CommandRunner, run_command
from headspace_tui.notifications.decide import Alert, Notification, notification
from headspace_tui.shared.config import ConfigError, parse_config

ONE = notification((Alert("k1", "api:0.1 (shop)", AgentState.PERMISSION, "Bash: python -c 'import time; time.sleep(1)' $(touch PWNED)", 1.0),))


def program(tmp_path, body: str = "", name: str = "notify") -> str:
    """A real program that appends its argv and HEADSPACE_* environment to seen.jsonl, then runs ``body``."""
    path = tmp_path / name
    path.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"with open({str(tmp_path / 'seen.jsonl')!r}, 'a') as out:\n"
        "    out.write(json.dumps({'argv': sys.argv[1:], 'env': {k: v for k, v in os.environ.items() if k.startswith('HEADSPACE_') or k == 'KEEP'}}) + '\\n')\n"
        f"{body}\n"
    )
    path.chmod(0o755)
    return str(path)


def seen(tmp_path) -> list[dict]:
    path = tmp_path / "seen.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_text_arrives_in_the_environment_and_the_arguments_are_the_configs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_command([program(tmp_path), "publish", "$HOME; topic"], ONE) == ""
    (got,) = seen(tmp_path)
    assert got["argv"] == ["publish", "$HOME; topic"]  # no shell: as written
    assert got["env"]["HEADSPACE_TITLE"] == "api:0.1 (shop) needs permission"
    assert got["env"]["HEADSPACE_BODY"] == "Bash: python -c 'import time; time.sleep(1)' $(touch PWNED)"  # ';' kept
    assert got["env"]["HEADSPACE_TEXT"] == f"{ONE.title}: {ONE.body}"
    assert json.loads(got["env"]["HEADSPACE_AGENTS"]) == [{"name": "api:0.1 (shop)", "state": "permission", "what": ONE.alerts[0].what}]
    assert not (tmp_path / "PWNED").exists()


def test_a_failing_missing_or_hanging_program_is_one_line(tmp_path):
    failing = program(tmp_path, "sys.stderr.write('topic not found'); sys.exit(4)", name="failing")
    assert run_command([failing], ONE) == f"notify_command {failing!r} failed (exit status 4: topic not found)"
    missing = str(tmp_path / "missing")
    assert run_command([missing], ONE).startswith(f"notify_command {missing!r} could not start (No such file")
    # A script that starts a child which would outlive it: both are stopped at the timeout.
    hanging = program(tmp_path, "import subprocess, time; subprocess.Popen(['sleep', '30']); time.sleep(30)", name="hanging")
    started = time.monotonic()
    assert run_command([hanging], ONE, timeout=0.5) == f"notify_command {hanging!r} ran longer than 0.5s and was stopped"
    assert time.monotonic() - started < 3


def test_one_run_at_a_time_and_what_waits_is_sent_as_one(tmp_path):
    slow = program(tmp_path, "import time; time.sleep(1)")
    said: list[str] = []
    runner = CommandRunner([slow], said.append)
    others = [notification((Alert(f"k{i}", f"w:{i}.0", AgentState.QUESTION, "", 2.0),)) for i in range(2, 6)]
    runner.submit(ONE)
    for note in others:  # due while the first runs: they wait, together
        runner.submit(note)
    assert runner.idle(10)
    assert runner.runs == 2 and said == []
    first, second = seen(tmp_path)
    assert first["env"]["HEADSPACE_TITLE"] == ONE.title
    assert second["env"]["HEADSPACE_TITLE"] == "4 agents need you"
    assert [a["name"] for a in json.loads(second["env"]["HEADSPACE_AGENTS"])] == ["w:2.0", "w:3.0", "w:4.0", "w:5.0"]


def test_failures_are_said_once_and_the_runner_goes_on(tmp_path):
    failing = program(tmp_path, "sys.exit(2)")
    said: list[str] = []
    runner = CommandRunner([failing], said.append)
    for _ in range(3):
        runner.submit(ONE)
        assert runner.idle(10)
    assert runner.runs == 3 and len(seen(tmp_path)) == 3
    assert len(said) == 1 and "exit status 2" in said[0] and "said once" in said[0]


def test_notify_command_setting():
    assert parse_config({}).notify_command == ()
    assert parse_config({"notify_command": ["ntfy", "publish", "t"]}).notify_command == ("ntfy", "publish", "t")


@pytest.mark.parametrize(
    "value",
    ["ntfy publish t", ["ntfy", 3], [""], [" "], ["ntfy", "a\0b"], ["x"] * 65, {"program": "ntfy"}],
)
def test_a_bad_notify_command_is_one_clear_error(value):
    with pytest.raises(ConfigError, match=re.escape("cfg.toml: notify_command must be a list of words, the program first")):
        parse_config({"notify_command": value}, "cfg.toml")


def test_the_environment_is_the_users_plus_the_text(tmp_path):
    # The base is given whole (not os.environ, which holds CI's own HEADSPACE_* settings); a stale HEADSPACE_TITLE in it is replaced.
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "KEEP": "1", "HEADSPACE_TITLE": "stale"}
    assert run_command([program(tmp_path)], Notification("t", "", ()), env=base) == ""
    (got,) = seen(tmp_path)
    assert got["env"] == {"KEEP": "1", "HEADSPACE_TITLE": "t", "HEADSPACE_BODY": "", "HEADSPACE_TEXT": "t", "HEADSPACE_AGENTS": "[]", "HEADSPACE_URL": ""}
