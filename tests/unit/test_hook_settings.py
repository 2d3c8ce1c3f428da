"""Installing headspace's hooks into a Claude settings.json and taking them out again.

Real files in a temporary folder; the CLI runs as a subprocess with a
temporary HOME, so nothing here reads or writes the real ~/.claude.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from headspace_tui.detect.families import CODEX
from headspace_tui.hooks.settings import (
    EVENTS,
    MARKER,
    PROGRAM,
    HooksError,
    backup_path,
    hook_command,
    install,
    status,
    uninstall,
)

USER_HOOK = {"type": "command", "command": "notify-send 'tool used'"}
USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [USER_HOOK]}],
        "PreCompact": [{"hooks": [{"type": "command", "command": "echo compacting"}]}],
    },
    "statusLine": {"type": "command", "command": "echo hi"},
}
# Formatted the way a person might keep it: 4 spaces, no trailing newline.
USER_BYTES = json.dumps(USER_SETTINGS, indent=4).encode()


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(USER_BYTES)
    path.chmod(0o640)
    return path


def ours(groups: list[dict]) -> list[dict]:
    return [g for g in groups if any(MARKER in h.get("command", "") for h in g["hooks"])]


def test_command_runs_the_program_without_site_and_carries_the_marker():
    command = hook_command()
    assert command == f"{shlex.quote(sys.executable)} -S {shlex.quote(str(PROGRAM))} # {MARKER}"
    quoted = hook_command("/opt/my python/bin/python3", "/srv/it's here/program.py")
    # sh must see exactly two words before the comment.
    out = subprocess.run(["sh", "-c", f"set -- {quoted.replace(' # ' + MARKER, '')}; printf '%s\\n' \"$@\""], capture_output=True, text=True)
    assert out.stdout.splitlines() == ["/opt/my python/bin/python3", "-S", "/srv/it's here/program.py"]


def test_install_keeps_user_hooks_and_every_other_key(settings_file: Path):
    assert install(settings_file) is True
    data = json.loads(settings_file.read_text())
    for key in ("model", "permissions", "statusLine"):
        assert data[key] == USER_SETTINGS[key]
    assert list(data) == list(USER_SETTINGS)  # key order kept
    assert data["hooks"]["PreToolUse"][0] == {"matcher": "Bash", "hooks": [USER_HOOK]}
    assert data["hooks"]["PreCompact"] == USER_SETTINGS["hooks"]["PreCompact"]
    for event in EVENTS:
        (group,) = ours(data["hooks"][event])
        (hook,) = group["hooks"]
        assert hook == {"type": "command", "command": hook_command(), "timeout": 5, "async": True}
        assert ("matcher" in group) is (event in ("PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse"))
    assert not ours(data["hooks"]["PreCompact"])
    assert stat.S_IMODE(settings_file.stat().st_mode) == 0o640
    assert status(settings_file).installed


def test_install_twice_leaves_the_file_byte_identical(settings_file: Path):
    install(settings_file)
    first = settings_file.read_bytes()
    mtime = settings_file.stat().st_mtime_ns
    assert install(settings_file) is False
    assert settings_file.read_bytes() == first
    assert settings_file.stat().st_mtime_ns == mtime
    assert backup_path(settings_file).read_bytes() == USER_BYTES


def test_install_backs_the_file_up_first(settings_file: Path):
    install(settings_file)
    backup = backup_path(settings_file)
    assert backup.name == "settings.json.headspace-backup"
    assert backup.read_bytes() == USER_BYTES
    assert stat.S_IMODE(backup.stat().st_mode) == 0o640


def test_install_replaces_a_stale_entry_of_ours_and_keeps_the_first_backup(settings_file: Path):
    install(settings_file, "/old/python -S /old/program.py # headspace-hook")
    assert status(settings_file).installed is False  # points elsewhere
    assert install(settings_file) is True
    data = json.loads(settings_file.read_text())
    for event in EVENTS:
        (group,) = ours(data["hooks"][event])
        assert group["hooks"][0]["command"] == hook_command()
    assert backup_path(settings_file).read_bytes() == USER_BYTES


@pytest.mark.parametrize(
    "content, words",
    [
        (b'{"hooks": {"Stop": [}', "not valid JSON"),
        (b'["a", "list"]', "JSON object"),
        (b'{"hooks": []}', '"hooks" is not an object'),
        (b'{"hooks": "none"}', '"hooks" is not an object'),
        (b'{"hooks": {"Stop": {"command": "x"}}}', '"hooks.Stop" is not a list'),
    ],
)
def test_malformed_settings_are_refused_and_left_untouched(tmp_path: Path, content: bytes, words: str):
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    for operation in (install, uninstall, status):
        with pytest.raises(HooksError) as caught:
            operation(path)
        message = str(caught.value)
        assert words in message and str(path) in message and "\n" not in message
        assert path.read_bytes() == content
    assert not backup_path(path).exists()


def test_uninstall_restores_the_users_file_byte_for_byte(settings_file: Path):
    install(settings_file)
    assert uninstall(settings_file) == "restored"
    assert settings_file.read_bytes() == USER_BYTES
    assert stat.S_IMODE(settings_file.stat().st_mode) == 0o640
    assert not backup_path(settings_file).exists()
    assert uninstall(settings_file) == "absent"
    assert settings_file.read_bytes() == USER_BYTES


def test_uninstall_after_the_user_edited_removes_exactly_our_entries(settings_file: Path):
    install(settings_file)
    data = json.loads(settings_file.read_text())
    data["theme"] = "dark"
    data["hooks"]["Stop"].insert(0, {"hooks": [{"type": "command", "command": "say done"}]})
    settings_file.write_text(json.dumps(data, indent=2))

    assert uninstall(settings_file) == "removed"
    after = json.loads(settings_file.read_text())
    expected = json.loads(USER_BYTES)
    expected["theme"] = "dark"
    expected["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "say done"}]}]
    assert after == expected
    assert MARKER not in settings_file.read_text()
    assert backup_path(settings_file).read_bytes() == USER_BYTES  # kept for reference


def test_a_missing_file_is_created_then_removed_again(tmp_path: Path):
    path = tmp_path / "config" / "settings.json"
    assert status(path).exists is False
    assert install(path) is True
    assert set(json.loads(path.read_text())["hooks"]) == set(EVENTS)
    assert not backup_path(path).exists()
    assert install(path) is False
    assert uninstall(path) == "deleted"
    assert not path.exists()


def test_user_empty_containers_survive_a_round_trip(tmp_path: Path):
    path = tmp_path / "settings.json"
    original = b'{"hooks": {"Stop": []}, "env": {}}\n'
    path.write_bytes(original)
    install(path)
    assert uninstall(path) == "restored"
    assert path.read_bytes() == original


def test_a_symlinked_settings_file_stays_a_link(tmp_path: Path):
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_bytes(USER_BYTES)
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    install(link)
    assert link.is_symlink() and MARKER in real.read_text()
    assert uninstall(link) == "restored"
    assert link.is_symlink() and real.read_bytes() == USER_BYTES


# -- the CLI ------------------------------------------------------------------


def run_cli(home: Path, *args: str, claude: str = "") -> subprocess.CompletedProcess:
    """``headspace hooks ARGS`` with HOME there and, on PATH, only a ``claude`` whose program holds ``claude`` (none when "")."""
    folder = home.parent / "bin"
    folder.mkdir(exist_ok=True)
    if claude:
        (folder / "claude").write_text(claude)
        (folder / "claude").chmod(0o755)
    env = {"HOME": str(home), "PATH": str(folder), "LANG": "C.UTF-8"}
    return subprocess.run([sys.executable, "-m", "headspace_tui", "hooks", *args], capture_output=True, text=True, env=env, timeout=60)


def test_cli_user_settings_round_trip(tmp_path: Path):
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_bytes(USER_BYTES)

    out = run_cli(home, "status")
    assert out.returncode == 0 and out.stdout.startswith("headspace hooks not installed in ")
    out = run_cli(home, "install")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\n") == 1 and "backup" in out.stdout
    assert run_cli(home, "install").stdout.startswith("headspace hooks already installed")
    out = run_cli(home, "status")
    assert out.stdout == f"headspace hooks installed in {settings} (9 events)\n"  # no Claude on PATH: not PermissionDenied
    out = run_cli(home, "uninstall")
    assert out.returncode == 0 and "restored" in out.stdout
    assert settings.read_bytes() == USER_BYTES


def test_cli_config_dir_and_project_mode(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    out = run_cli(home, "install", "--project", str(project))
    assert out.returncode == 0, out.stderr
    target = project / ".claude" / "settings.json"
    assert set(json.loads(target.read_text())["hooks"]) == set(EVENTS)
    assert not (home / ".claude").exists()
    assert "installed in" in run_cli(home, "status", "--project", str(project)).stdout
    assert "deleted" in run_cli(home, "uninstall", "--project", str(project)).stdout
    assert not target.exists()

    env_dir = tmp_path / "claude-config"
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "CLAUDE_CONFIG_DIR": str(env_dir)}
    out = subprocess.run([sys.executable, "-m", "headspace_tui", "hooks", "install"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and (env_dir / "settings.json").exists()


def test_install_with_no_claude_on_path_says_that_rather_than_that_claude_lacks_the_hook(tmp_path: Path):
    home, empty = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    empty.mkdir()
    env = {"HOME": str(home), "PATH": str(empty)}  # no claude anywhere on it
    out = subprocess.run([sys.executable, "-m", "headspace_tui", "hooks", "install"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "no claude on PATH to ask whether it has one" in out.stdout and "the claude on PATH has none" not in out.stdout, out.stdout
    fake = empty / "claude"
    fake.write_text("#!/bin/sh\necho 2.1.100 '(Claude Code)'\n")  # a Claude from before the PermissionDenied hook
    fake.chmod(0o755)
    again = subprocess.run([sys.executable, "-m", "headspace_tui", "hooks", "install"], capture_output=True, text=True, env=env, timeout=60)
    assert "the claude on PATH has none" in again.stdout, again.stdout


def test_cli_errors_are_one_line(tmp_path: Path):
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_bytes(b'{"hooks": ')
    for action in ("install", "uninstall", "status"):
        out = run_cli(home, action)
        assert out.returncode == 1 and out.stdout == ""
        assert out.stderr.count("\n") == 1 and out.stderr.startswith("headspace: ") and "not valid JSON" in out.stderr
    assert settings.read_bytes() == b'{"hooks": '
    out = run_cli(home, "install", "--project", str(tmp_path / "nowhere"))
    assert out.returncode == 1 and out.stderr == f"headspace: no such directory: {tmp_path / 'nowhere'}\n"


# -- the answer channel's hook ---------------------------------------------------------


def test_install_with_answer_adds_one_synchronous_permission_hook_and_is_idempotent(settings_file: Path):
    assert install(settings_file, answer_wait=45)
    data = json.loads(settings_file.read_text())
    ours = [h for g in data["hooks"]["PermissionRequest"] for h in g["hooks"] if h["command"].endswith(f"# {MARKER}")]
    assert len(ours) == 2
    spool, answer = ours
    assert spool["async"] is True and "answer" not in spool["command"]
    assert "async" not in answer and answer["timeout"] == 45 + 10
    assert shlex.split(answer["command"].rsplit("#", 1)[0])[-3:] == [str(PROGRAM), "answer", "45"]
    found = status(settings_file)
    assert found.installed and found.answer_wait == 45
    before = settings_file.read_bytes()
    assert not install(settings_file, answer_wait=45)
    assert settings_file.read_bytes() == before
    # Another wait replaces it; an install without --answer takes it out again.
    assert install(settings_file, answer_wait=5) and status(settings_file).answer_wait == 5
    assert install(settings_file) and status(settings_file).answer_wait is None
    assert not any("answer" in h["command"] for g in json.loads(settings_file.read_text())["hooks"]["PermissionRequest"] for h in g["hooks"])


def test_uninstall_after_an_answer_install_restores_the_file(settings_file: Path):
    original = settings_file.read_bytes()
    install(settings_file, answer_wait=60)
    assert uninstall(settings_file) == "restored"
    assert settings_file.read_bytes() == original


@pytest.mark.parametrize("wait", [0, 591, -3])
def test_an_answer_wait_out_of_range_is_refused_and_nothing_is_written(settings_file: Path, wait: int):
    before = settings_file.read_bytes()
    with pytest.raises(HooksError, match="between 1 and 590"):
        install(settings_file, answer_wait=wait)
    assert settings_file.read_bytes() == before


def test_cli_install_answer_says_so_and_status_shows_the_wait(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "headspace_tui", "hooks", *args], capture_output=True, text=True, env=env, timeout=60)

    out = cli("install", "--answer", "--wait", "20")
    assert out.returncode == 0 and "with the answer channel (waits 20s)" in out.stdout, out
    assert "answer channel on, waits 20s" in cli("status").stdout
    refused = cli("install", "--wait", "20")
    assert refused.returncode != 0 and "--wait goes with --answer" in refused.stderr


@pytest.mark.parametrize(
    ("program", "events"),
    [
        ('#!/bin/sh\n# Claude Code 2.1.330\nconst CK=["PermissionRequest","PermissionDenied","Setup"]\n', 10),
        ('#!/bin/sh\n# Claude Code 2.1.30\nconst CK=["PermissionRequest","Setup"]\n', 9),  # it refuses a file naming an event it lacks
    ],
)
def test_permission_denied_is_installed_only_for_a_claude_that_knows_it(tmp_path: Path, program: str, events: int):
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    assert run_cli(home, "install", claude=program).returncode == 0
    data = json.loads(settings.read_text())
    assert ("PermissionDenied" in data["hooks"]) is (events == 10)
    assert run_cli(home, "status", claude=program).stdout == f"headspace hooks installed in {settings} ({events} events)\n"


def test_codexs_hooks_json_gets_one_rules_hook_kept_apart_from_the_users_and_restored_exactly(tmp_path: Path):
    """``hooks install --codex``: Codex's own hooks.json (same format as Claude's settings), the user's hooks kept, then put back byte for byte."""
    home = tmp_path / "home"
    hooks = home / ".codex" / "hooks.json"
    hooks.parent.mkdir(parents=True)
    users = b'{\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}\n}\n'
    hooks.write_bytes(users)
    assert run_cli(home, "status", "--codex").stdout.startswith("headspace's rules hook for Codex not installed")
    out = run_cli(home, "install", "--codex")
    assert out.returncode == 0 and "trust it at its next start" in out.stdout, out.stderr
    data = json.loads(hooks.read_text())
    assert data["hooks"]["Stop"] == json.loads(users)["hooks"]["Stop"]
    (group,) = data["hooks"]["PermissionRequest"]
    (hook,) = group["hooks"]
    wait = CODEX.held_hook.wait if CODEX.held_hook is not None else -1  # the wait is Codex's own (detect/codex)
    assert group["matcher"] == "*" and hook["command"].endswith(f"answer {wait} codex # headspace-hook") and wait == 3
    assert "async" not in hook and hook["timeout"] > wait  # Codex reads its answer
    assert run_cli(home, "install", "--codex").stdout.startswith("headspace's rules hook for Codex already installed")
    assert run_cli(home, "status", "--codex").stdout.startswith("headspace's rules hook for Codex installed")
    refused = run_cli(home, "install", "--codex", "--answer")
    assert refused.returncode != 0 and refused.stderr.count("\n") == 1
    assert run_cli(home, "uninstall", "--codex").returncode == 0
    assert hooks.read_bytes() == users
