"""The hook program, run exactly as Claude runs it: ``python -S program.py`` with the event on stdin.

Every run gets a temporary XDG_RUNTIME_DIR; the one test of the fallback
(XDG_RUNTIME_DIR unset) removes exactly the file and folders it caused.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from headspace_tui.hooks.settings import PROGRAM, hook_command

NAME = re.compile(r"^\d{20}-\d+-[0-9a-f]{8}\.json$")
EVENT = {
    "session_id": "5396ed06-b043-49b1-8c29-4e253ccccacd",
    "transcript_path": "/home/u/.claude/projects/-work/5396ed06.jsonl",
    "cwd": "/work",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "touch marker.txt", "description": "Make a marker ✓"},
}


def run(stdin: bytes | None, env: dict[str, str], *, via_shell: bool = False) -> subprocess.CompletedProcess:
    base = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    if via_shell:  # as Claude does: /bin/sh -c '<the installed command>'
        args = ["/bin/sh", "-c", hook_command()]
    else:
        args = [sys.executable, "-S", str(PROGRAM)]
    return subprocess.run(
        args,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        env={**base, **env},
        timeout=10,
    )


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    return folder


def spooled(runtime: Path) -> list[Path]:
    folder = runtime / "headspace" / "spool"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_writes_one_private_file_with_pane_time_and_pid(runtime: Path):
    before = time.time()
    out = run(json.dumps(EVENT).encode(), {"XDG_RUNTIME_DIR": str(runtime), "TMUX_PANE": "%7"})
    after = time.time()
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")
    (path,) = spooled(runtime)
    assert NAME.match(path.name)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for folder in (runtime / "headspace", runtime / "headspace" / "spool"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    record = json.loads(path.read_text())
    assert {k: record[k] for k in EVENT} == EVENT
    assert record["tmux_pane"] == "%7"
    assert before <= record["ts"] <= after
    assert record["pid"] == os.getpid()  # its parent: here, this test
    assert abs(int(path.name.split("-")[0]) / 1e9 - record["ts"]) < 1e-3


def test_through_sh_the_pid_is_the_shells_parent(runtime: Path):
    """Claude runs hooks as ``/bin/sh -c``; the recorded pid skips that shell."""
    out = run(json.dumps(EVENT).encode(), {"XDG_RUNTIME_DIR": str(runtime), "TMUX_PANE": "%3"}, via_shell=True)
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")
    (path,) = spooled(runtime)
    assert json.loads(path.read_text())["pid"] == os.getpid()


@pytest.mark.parametrize(
    "stdin",
    [b"not json at all \xff\xfe", b'["a", "list"]', b'{"half": ', b"[" * 100_000, b"", None],
    ids=["garbage", "not-an-object", "truncated", "too-deep", "empty", "no-stdin"],
)
def test_anything_on_stdin_is_kept_raw(runtime: Path, stdin: bytes | None):
    out = run(stdin, {"XDG_RUNTIME_DIR": str(runtime)})
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")
    (path,) = spooled(runtime)
    record = json.loads(path.read_text())
    assert record["raw"] == (stdin or b"").decode("utf-8", "replace")
    assert record["tmux_pane"] == ""  # not in tmux


def test_input_is_bounded_to_one_megabyte(runtime: Path):
    huge = b'{"hook_event_name": "Stop", "pad": "' + b"x" * (3 << 20) + b'"}'
    out = run(huge, {"XDG_RUNTIME_DIR": str(runtime)})
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")
    (path,) = spooled(runtime)
    assert len(json.loads(path.read_text())["raw"]) == 1 << 20


def test_a_spool_it_cannot_create_is_skipped_silently(runtime: Path, tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    (runtime / "headspace").write_text("a file where the folder should be")
    for folder in (runtime, blocker / "run", runtime / "does-not-exist"):
        out = run(json.dumps(EVENT).encode(), {"XDG_RUNTIME_DIR": str(folder)})
        assert (out.returncode, out.stdout, out.stderr) == (0, b"", b""), folder
    assert not (runtime / "does-not-exist").exists()  # XDG_RUNTIME_DIR is never created
    assert (runtime / "headspace").is_file()


def test_an_unwritable_spool_is_skipped_silently(runtime: Path, tmp_path: Path):
    """Mode 0500 stops anyone but root; as root, the spool lies under a regular file."""
    if os.geteuid() == 0:
        blocker = tmp_path / "not-a-dir"
        blocker.write_text("")
        env = {"XDG_RUNTIME_DIR": str(blocker / "run")}
        check = blocker
    else:
        spool = runtime / "headspace" / "spool"
        spool.mkdir(parents=True, mode=0o700)
        spool.chmod(0o500)
        env = {"XDG_RUNTIME_DIR": str(runtime)}
        check = spool
    try:
        out = run(json.dumps(EVENT).encode(), env)
    finally:
        if check.is_dir():
            check.chmod(0o700)
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")
    assert check.is_file() or list(check.iterdir()) == []


@pytest.mark.parametrize("kind", ["group-writable", "symlink", "foreign-owner"])
def test_an_unsafe_spool_is_refused(runtime: Path, tmp_path: Path, kind: str):
    base = runtime / "headspace"
    spool = base / "spool"
    if kind == "group-writable":
        spool.mkdir(parents=True)
        spool.chmod(0o777)
        target = spool
    elif kind == "symlink":
        base.mkdir(mode=0o700)
        target = tmp_path / "elsewhere"
        target.mkdir(mode=0o700)
        spool.symlink_to(target)
    else:
        if os.geteuid() != 0:
            pytest.skip("only root can give a folder to another user")
        spool.mkdir(parents=True, mode=0o700)
        os.chown(spool, 65534, 65534)
        target = spool
    out = run(json.dumps(EVENT).encode(), {"XDG_RUNTIME_DIR": str(runtime)})
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")
    assert list(target.iterdir()) == []


def test_without_xdg_runtime_dir_it_falls_back_to_tmp():
    base = Path(f"/tmp/headspace-{os.getuid()}")
    spool = base / "spool"
    created = [p for p in (base, spool) if not p.exists()]
    marker = f"headspace-test-{uuid.uuid4().hex}"
    event = {"hook_event_name": "Notification", "session_id": marker, "message": "test"}
    try:
        out = run(json.dumps(event).encode(), {})  # no XDG_RUNTIME_DIR at all
        assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")
        mine = [p for p in spool.glob("*.json") if marker in p.read_text(errors="replace")]
        assert len(mine) == 1
        assert stat.S_IMODE(spool.stat().st_mode) == 0o700
    finally:
        for path in spool.glob("*.json") if spool.is_dir() else []:
            if marker in path.read_text(errors="replace"):
                path.unlink()
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                pass


def test_every_run_spools_its_event(runtime: Path):
    """Twenty runs in a row, each its own file.  How fast: benchmarks/hook_program.py (a timing is not gated here)."""
    payload = json.dumps(EVENT).encode()
    for _ in range(20):
        out = run(payload, {"XDG_RUNTIME_DIR": str(runtime), "TMUX_PANE": "%1"})
        assert out.returncode == 0
    assert len(spooled(runtime)) == 20


def test_the_program_is_standalone():
    """Standard library only, and nothing in headspace imports it."""
    tree = ast.parse(PROGRAM.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
    assert imported <= {"os", "time", "json", "sys", "socket"}  # socket: the answer channel only
    package = PROGRAM.parents[1]
    for path in package.rglob("*.py"):
        if path != PROGRAM:
            text = path.read_text()
            assert "hooks.program" not in text and "import program" not in text, path
    assert shlex.split(hook_command())[1] == "-S"


# -- reading the spool back ---------------------------------------------------
# The files the program writes, read by headspace.  Payloads are shaped like the
# ones the real 2.1.330 sent in tests/e2e/test_hooks_live.py.

BASH_INPUT = {"command": "touch marker.txt && echo ok", "description": "Create a marker"}
PAYLOADS = {
    "SessionStart": {"source": "startup", "model": "claude-opus-5-5"},
    "UserPromptSubmit": {"prompt": "create the marker file", "permission_mode": "default"},
    "PreToolUse": {"tool_name": "Bash", "tool_input": BASH_INPUT, "tool_use_id": "toolu_000002"},
    "PermissionRequest": {"tool_name": "Bash", "tool_input": BASH_INPUT, "permission_suggestions": []},
    "Notification": {"message": "Claude needs your permission", "notification_type": "permission_prompt"},
    "PostToolUse": {"tool_name": "Bash", "tool_input": BASH_INPUT, "tool_response": {"stdout": "ok"}},
    "Stop": {"stop_hook_active": False, "last_assistant_message": "Created."},
    "SubagentStop": {"stop_hook_active": False},
    "SessionEnd": {"reason": "prompt_input_exit"},
}


def spool_event(runtime: Path, name: str, pane: str = "%4", **extra) -> None:
    payload = {"session_id": "s-1", "cwd": "/work", "transcript_path": "/t.jsonl", "hook_event_name": name, **PAYLOADS.get(name, {}), **extra}
    out = run(json.dumps(payload).encode(), {"XDG_RUNTIME_DIR": str(runtime), "TMUX_PANE": pane})
    assert out.returncode == 0


def test_spool_dir_follows_the_programs_rule(runtime: Path):
    from headspace_tui.hooks.spool import spool_dir

    assert spool_dir({"XDG_RUNTIME_DIR": str(runtime)}) == runtime / "headspace" / "spool"
    fallback = Path(f"/tmp/headspace-{os.getuid()}/spool")
    assert spool_dir({}) == fallback
    assert spool_dir({"XDG_RUNTIME_DIR": "relative/dir"}) == fallback


def test_read_spool_returns_events_in_order_and_skips_garbage(runtime: Path):
    from headspace_tui.hooks.spool import read_spool, spool_dir

    folder = spool_dir({"XDG_RUNTIME_DIR": str(runtime)})
    assert read_spool(folder) == []  # not even created yet
    for name in PAYLOADS:
        spool_event(runtime, name)
    run(b"garbage", {"XDG_RUNTIME_DIR": str(runtime)})  # a record without hook_event_name
    (folder / "99999999999999999999-1-deadbeef.json").write_text('{"hook_event_name": "Stop", "ts"')  # half a file
    (folder / ".tmp-00000000000000000001-1-aa").write_text("in progress")
    events = read_spool(folder)
    assert [e.event for e in events] == list(PAYLOADS)
    pre = events[2]
    assert (pre.pane_id, pre.pid, pre.session_id, pre.tool_name, pre.tool_input) == ("%4", os.getpid(), "s-1", "Bash", BASH_INPUT)
    assert (pre.cwd, pre.transcript_path, pre.raw["tool_use_id"]) == ("/work", "/t.jsonl", "toolu_000002")
    assert events[4].message == "Claude needs your permission" and events[4].notification_type == "permission_prompt"
    assert [e.ts for e in events] == sorted(e.ts for e in events)
    assert read_spool(folder, since_name=events[6].name) == events[7:]
    assert read_spool(folder, since_name="99999999999999999999-1-deadbeef.json") == []


def test_read_spool_deletes_consumed_files_when_asked(runtime: Path):
    from headspace_tui.hooks.spool import read_spool, spool_dir

    folder = spool_dir({"XDG_RUNTIME_DIR": str(runtime)})
    for name in ("Stop", "SessionEnd"):
        spool_event(runtime, name)
    old, new = sorted(folder.iterdir())
    stale_tmp = folder / ".tmp-00000000000000000001-1-aa"
    stale_tmp.write_text("a killed hook")
    long_ago = time.time() - 3600
    for path in (old, stale_tmp):
        os.utime(path, (long_ago, long_ago))
    assert [e.event for e in read_spool(folder, delete_older_than=600)] == ["Stop", "SessionEnd"]
    assert sorted(folder.iterdir()) == [new]  # the old one and the orphan are gone
    assert [e.event for e in read_spool(folder)] == ["SessionEnd"]


def test_hook_observation_mapping(runtime: Path):
    from headspace_tui.hooks.spool import hook_observation, read_spool, spool_dir

    for name in PAYLOADS:
        spool_event(runtime, name)
    spool_event(runtime, "Notification", message="Claude is waiting for your input", notification_type="idle_prompt")
    spool_event(runtime, "Notification", message="Claude needs your permission to use Write", notification_type="")
    spool_event(runtime, "Notification", message="Claude Code login successful", notification_type="auth_success")
    spool_event(runtime, "SessionStart", source="compact")
    spool_event(runtime, "PreCompact")
    spool_event(runtime, "SessionEnd", reason="clear")  # /clear: the conversation ends, Claude goes on
    spool_event(runtime, "SessionStart", source="clear")
    events = read_spool(spool_dir({"XDG_RUNTIME_DIR": str(runtime)}))
    observations = [hook_observation(e) for e in events]
    states = [o.state.value if o else None for o in observations]
    assert states == [
        "idle",
        "working",
        "working",
        "permission",
        "permission",
        "working",
        "idle",
        "working",
        "exited",
        "idle",
        "permission",
        None,
        None,
        None,
        None,
        "idle",
    ]
    permission = observations[3]
    assert (permission.tool, permission.prompt.detail, permission.prompt.kind) == ("Bash", BASH_INPUT["command"], "permission")
    assert (permission.source, permission.confidence) == ("hook", 0.95)
    (evidence,) = permission.evidence
    assert (evidence.rule, evidence.line) == ("hook:PermissionRequest", -1) and "touch marker.txt" in evidence.text
    assert observations[10].tool == "Write"
    assert all(o.source == "hook" and o.evidence[0].rule == f"hook:{e.event}" for e, o in zip(events, observations, strict=True) if o)


def test_permission_requests_for_dialogs_are_question_and_plan():
    from headspace_tui.hooks.spool import HookEvent, hook_observation
    from headspace_tui.model import AgentState

    questions = {
        "questions": [
            {"question": "Which database should we use?", "header": "Database", "multiSelect": False, "options": [{"label": "Postgres", "description": "x"}, {"label": "SQLite", "description": "y"}]},
            {"question": "Which features?", "header": "F", "multiSelect": True, "options": [{"label": "Auth"}]},
        ]
    }
    ask = hook_observation(HookEvent(name="1.json", event="PermissionRequest", tool_name="AskUserQuestion", tool_input=questions))
    assert ask.state is AgentState.QUESTION
    assert (ask.question, ask.option_labels, ask.prompt.question_count) == ("Which database should we use?", ["Postgres", "SQLite"], 2)
    plan = hook_observation(HookEvent(name="2.json", event="PermissionRequest", tool_name="ExitPlanMode", tool_input={"plan": "# Plan"}))
    assert plan.state is AgentState.PLAN and plan.tool == "ExitPlanMode"


def test_watch_spool_yields_events_as_they_arrive(tmp_path: Path):
    import asyncio

    from headspace_tui.service.watching.folder_watch import watch_spool

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    folder = runtime / "headspace" / "spool"
    early = {"hook_event_name": "SessionStart", "source": "startup"}
    late = {"hook_event_name": "Stop"}

    async def scenario() -> list[tuple[str, float]]:
        seen: list[tuple[str, float]] = []
        stream = watch_spool(folder, rescan=30.0)  # long rescan: the file watcher must do it

        async def collect() -> None:
            async for event in stream:
                seen.append((event.event, time.monotonic()))
                if len(seen) == 2:
                    return

        task = asyncio.create_task(collect())
        for _ in range(200):  # the watcher's first step makes the folder: waited for, not assumed done after a fixed time
            if folder.is_dir():
                break
            await asyncio.sleep(0.05)
        assert folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) == 0o700  # created by the watcher
        await asyncio.to_thread(run, json.dumps(early).encode(), {"XDG_RUNTIME_DIR": str(runtime)})
        await asyncio.sleep(0.3)
        sent = time.monotonic()
        await asyncio.to_thread(run, json.dumps(late).encode(), {"XDG_RUNTIME_DIR": str(runtime)})
        await asyncio.wait_for(task, timeout=20)
        await stream.aclose()
        return [(name, at - sent) for name, at in seen]

    events = asyncio.run(scenario())
    assert [name for name, _ in events] == ["SessionStart", "Stop"]
    assert events[1][1] < 10.0  # well before the 30 s rescan (a 5x slower machine too; usually ~0.1 s)


def test_watch_spool_reports_a_late_file_with_an_earlier_name(tmp_path: Path):
    """Concurrent hooks: a file may land after one with a later name; it is still reported."""
    import asyncio

    from headspace_tui.service.watching.folder_watch import watch_spool

    folder = tmp_path / "spool"

    def put(name: str, event: str) -> None:
        (folder / f".tmp-{name}").write_text(json.dumps({"hook_event_name": event}))
        os.replace(folder / f".tmp-{name}", folder / name)

    async def scenario() -> list[str]:
        stream = watch_spool(folder, rescan=0.2)
        got = []
        folder.mkdir(mode=0o700)
        put("00000000000000000002-1-bb.json", "PermissionRequest")
        got.append((await asyncio.wait_for(anext(stream), 5)).event)
        put("00000000000000000001-1-aa.json", "PreToolUse")
        got.append((await asyncio.wait_for(anext(stream), 5)).event)
        await stream.aclose()
        return got

    assert asyncio.run(scenario()) == ["PermissionRequest", "PreToolUse"]


def test_watch_spool_of_an_agent_elsewhere_makes_nothing_and_reads_once_its_hook_made_the_folder(tmp_path: Path):
    """An agent's spool under another XDG_RUNTIME_DIR: its hook makes the folder (the real program here), not headspace."""
    import asyncio

    from headspace_tui.service.watching.folder_watch import watch_spool

    runtime = tmp_path / "agent-run"
    runtime.mkdir(mode=0o700)
    folder = runtime / "headspace" / "spool"

    async def scenario() -> str:
        stream = watch_spool(folder, rescan=0.1, create=False)
        first = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.5)
        assert not (runtime / "headspace").exists() and not first.done()  # nothing made, nothing read
        await asyncio.to_thread(run, json.dumps({"hook_event_name": "SessionStart", "source": "startup"}).encode(), {"XDG_RUNTIME_DIR": str(runtime)})
        event = await asyncio.wait_for(first, 5)
        await stream.aclose()
        return event.event

    assert asyncio.run(scenario()) == "SessionStart"


def test_watch_spool_of_an_agent_elsewhere_refuses_a_folder_others_can_write(tmp_path: Path):
    import asyncio

    from headspace_tui.hooks.spool import SpoolRefused
    from headspace_tui.service.watching.folder_watch import watch_spool

    folder = tmp_path / "headspace" / "spool"
    folder.mkdir(parents=True)
    os.chmod(folder, 0o777)

    async def scenario() -> None:
        await anext(watch_spool(folder, rescan=0.1, create=False))

    with pytest.raises(SpoolRefused):
        asyncio.run(scenario())
