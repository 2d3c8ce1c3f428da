"""headspace's hooks in the real Claude Code 2.1.330: installed by the CLI, fired by Claude, read back.

The session's HOME is a temporary folder, so ``headspace hooks install`` run
with that HOME writes the session's own ``.claude/settings.json``; the pane
gets its own XDG_RUNTIME_DIR, so the spool is private to the test too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from headspace_tui.detect.claude.transcript import TranscriptTail, encoded_project_dir, transcript_path
from headspace_tui.hooks import settings as hook_settings
from headspace_tui.hooks.spool import HookEvent, hook_observation, read_spool, spool_dir
from headspace_tui.model import AgentState
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU, QUESTION_DB, TURN_DONE
from tests.harness.session import READY, SHELL_PROMPT
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e

# The user's own settings, with a hook of their own that must keep working.
USER_SETTINGS = {
    "cleanupPeriodDays": 30,
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": 'touch "$HOME/user-stop-hook-ran"'}]}]},
}


def headspace(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    return subprocess.run([sys.executable, "-m", "headspace_tui", *args], capture_output=True, text=True, env=env, timeout=60)


def named(events: list[HookEvent], name: str) -> list[HookEvent]:
    return [e for e in events if e.event == name]


def test_hooks_fire_for_a_bash_permission_and_uninstall_restores_the_file(claude_session, fake_api, tmp_path, capsys):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    folder = spool_dir({"XDG_RUNTIME_DIR": str(runtime)})
    session = claude_session(
        [api.bash("touch marker.txt && echo headspace-ok", "Create a marker file"), api.text("Created the marker file.")],
        launch=False,
        extra_env={"XDG_RUNTIME_DIR": str(runtime)},
    )
    settings_path = session.home / ".claude" / "settings.json"
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    original = json.dumps(USER_SETTINGS, indent=4).encode()
    settings_path.write_bytes(original)

    out = headspace(session.home, "hooks", "install")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"installed headspace hooks in {settings_path}")
    assert headspace(session.home, "hooks", "status").stdout.startswith("headspace hooks installed in")

    started = time.time()
    session.launch()
    poll(lambda: named(read_spool(folder), "SessionStart"), bool, timeout=15)
    session.type("create the marker file")
    session.wait_for("create the marker file", what="the typed prompt")
    submitted = time.time()
    session.press("Enter")
    session.wait_for(NUMBERED_MENU, timeout=30, what="the Bash permission dialog")
    dialog = time.time()

    # Each hook is a process of its own (async): wait for all four lines, in whatever order they were spooled.
    firsts = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest")
    events = poll(lambda: read_spool(folder), lambda ev: all(named(ev, n) for n in firsts), timeout=15)
    for name in firsts:
        (event,) = named(events, name)
        assert event.pane_id == session.pane_id, name
    prompt, pre, request = (named(events, n)[0] for n in ("UserPromptSubmit", "PreToolUse", "PermissionRequest"))
    # Each hook is a process of its own (async) stamping its own start, so their stamps are not the events' order: a
    # loaded machine has stamped PermissionRequest 16 ms before PreToolUse, and the prompt's hook, spawned first,
    # 0.8 ms after PreToolUse's (a clean-clone run, six live workers). What holds is that each came after the launch.
    assert started <= min(prompt.ts, pre.ts, request.ts), (started, prompt.ts, pre.ts, request.ts)
    assert prompt.raw["prompt"] == "create the marker file"
    assert pre.tool_name == request.tool_name == "Bash"
    assert request.tool_input["command"] == "touch marker.txt && echo headspace-ok"

    observation = hook_observation(request)
    assert observation.state is AgentState.PERMISSION
    assert (observation.tool, observation.prompt.detail) == ("Bash", "touch marker.txt && echo headspace-ok")
    assert (observation.source, observation.confidence) == ("hook", 0.95)

    # The pid is Claude's (its status file is named after it), not the /bin/sh that ran the hook.
    (status_file,) = (session.home / ".claude" / "sessions").glob("*.json")
    claude_pid = json.loads(status_file.read_text())["pid"]
    assert {e.pid for e in events} == {claude_pid}

    # Where Claude keeps the transcript is where transcript_path says.
    cwd = str(session.workdir)
    assert request.cwd == cwd
    expected = transcript_path(session.home / ".claude", cwd, request.session_id)
    assert Path(request.transcript_path) == expected
    turns = poll(lambda: TranscriptTail(expected).read_new(), lambda t: any(u[0] == "Bash" for turn in t for u in turn.tool_uses), timeout=10)
    talk = [t for t in turns if t.role != "mode"]  # Claude's permission-mode lines are turns of their own: the mode it ran in
    assert talk[0].role == "user" and talk[0].text == "create the marker file"
    assert {t.text for t in turns if t.role == "mode"} <= {"default"}

    # Left alone, the dialog is announced again a few seconds later.
    events = poll(lambda: read_spool(folder), lambda ev: bool(named(ev, "Notification")), timeout=20)
    (notice,) = named(events, "Notification")
    assert notice.notification_type == "permission_prompt"
    assert hook_observation(notice).state is AgentState.PERMISSION

    session.answer("1")
    events = poll(lambda: read_spool(folder), lambda ev: bool(named(ev, "Stop")) and bool(named(ev, "PostToolUse")), timeout=30)
    assert hook_observation(named(events, "PostToolUse")[0]).state is AgentState.WORKING
    assert hook_observation(named(events, "Stop")[0]).state is AgentState.IDLE
    session.wait_for(lambda s: "Created the marker file." in s and TURN_DONE.search(s) and READY.search(s), timeout=30, what="idle")
    session.submit("/exit")
    session.wait_for(lambda s: SHELL_PROMPT.search(s.rstrip()) is not None and "--resume" in s, timeout=30, what="the shell again")
    events = poll(lambda: read_spool(folder), lambda ev: bool(named(ev, "SessionEnd")), timeout=15)
    assert hook_observation(named(events, "SessionEnd")[0]).state is AgentState.EXITED
    assert (session.home / "user-stop-hook-ran").exists()  # the user's own hook ran beside ours

    with capsys.disabled():
        print(f"\nhook events for a Bash permission (seconds after Enter on the prompt; dialog drawn at {dialog - submitted:+.3f}):")
        for event in sorted(events, key=lambda e: e.ts):
            extra = event.tool_name or event.notification_type or event.raw.get("source") or event.raw.get("reason") or ""
            print(f"  {event.ts - submitted:+8.3f}  {event.event:<18} {extra}")
        print(f"  (claude launched at {started - submitted:+.3f})")
    # Every event once; in the order Claude causes them (its stamps are each hook process's own: pairs Claude fires
    # together, PreToolUse/PermissionRequest and PostToolUse/Stop, may be stamped either way round under load).
    order = [e.event for e in sorted(events, key=lambda e: e.ts)]
    assert sorted(order) == sorted(["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "Notification", "PostToolUse", "Stop", "SessionEnd"])
    assert order[:2] == ["SessionStart", "UserPromptSubmit"] and order[-1] == "SessionEnd"
    assert order.index("Notification") > max(order.index("PreToolUse"), order.index("PermissionRequest"))
    assert min(order.index("PostToolUse"), order.index("Stop")) > order.index("Notification")

    out = headspace(session.home, "hooks", "uninstall")
    assert out.returncode == 0, out.stderr
    assert "restored" in out.stdout
    assert settings_path.read_bytes() == original
    assert not hook_settings.backup_path(settings_path).exists()


def test_transcript_path_of_a_long_working_directory(claude_session, fake_api, tmp_path):
    """Past 200 characters Claude cuts the folder name and adds a hash; ours must agree."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    name = "long-" + "x" * 170
    session = claude_session([api.text("Hello from a long path.")], launch=False, name=name, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
    cwd = str(session.workdir)
    assert len(encoded_project_dir(cwd)) > 200
    hook_settings.install(session.home / ".claude" / "settings.json")
    session.launch()
    session.submit("say hello")
    session.wait_for("Hello from a long path.", timeout=30, what="the reply")
    folder = spool_dir({"XDG_RUNTIME_DIR": str(runtime)})
    (start,) = poll(lambda: named(read_spool(folder), "SessionStart"), bool, timeout=15)
    expected = transcript_path(session.home / ".claude", cwd, start.session_id)
    assert Path(start.transcript_path) == expected
    turns = poll(lambda: TranscriptTail(expected).read_new(), lambda t: any(turn.role == "agent" for turn in t), timeout=10)
    assert [t.text for t in turns if t.role == "user"] == ["say hello"]


def test_a_question_dialog_arrives_as_a_permission_request_for_ask_user_question(claude_session, fake_api, tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    session = claude_session([api.ask(QUESTION_DB), api.text("SQLite it is.")], launch=False, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
    hook_settings.install(session.home / ".claude" / "settings.json")
    session.launch()
    session.submit("pick a database")
    session.wait_for("Enter to select", timeout=30, what="the question dialog")
    folder = spool_dir({"XDG_RUNTIME_DIR": str(runtime)})
    events = poll(lambda: read_spool(folder), lambda ev: bool(named(ev, "PermissionRequest")), timeout=15)
    (request,) = named(events, "PermissionRequest")
    assert request.tool_name == "AskUserQuestion" and request.pane_id == session.pane_id
    observation = hook_observation(request)
    assert observation.state is AgentState.QUESTION
    assert (observation.question, observation.option_labels) == ("Which database should we use?", ["Postgres", "SQLite"])
    session.answer("2")
    # Each hook is a process of its own: under load the Stop hook's line can be spooled before PostToolUse's.
    events = poll(lambda: read_spool(folder), lambda ev: bool(named(ev, "Stop")) and bool(named(ev, "PostToolUse")), timeout=30)
    assert [e.tool_name for e in named(events, "PostToolUse")] == ["AskUserQuestion"]
