"""The agent's hooks and headspace with different XDG_RUNTIME_DIRs: no event lost, and doctor says so.

The real Claude Code runs with one XDG_RUNTIME_DIR, so the real hook program
writes its events under it; headspace runs with another (a tmux server
started without one, headspace run from another login).  Before, headspace
read only its own spool: every event was lost and doctor said ``ok hook
spool``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from headspace_tui.hooks.calls import allow
from headspace_tui.hooks.spool import HookEvent, read_spool, spool_dir
from headspace_tui.service.watching.monitor import Monitor
from headspace_tui.tmux.server import TmuxServer
from tests.harness import fake_api as api
from tests.harness.env import private_env
from tests.harness.scenarios import NUMBERED_MENU

pytestmark = pytest.mark.e2e


def _agent_with_hooks(claude_session, tmp_path: Path, *answer: str):
    """A real Claude whose XDG_RUNTIME_DIR is ``tmp_path/agent-run``, hooks installed by the CLI in its HOME.

    ``tmp_path``: a short folder (``short_tmp``): the answer hook's socket lives in the runtime folder, and a
    Unix socket's path ends at 108 bytes, which pytest's own tmp_path under xdist passes.
    """
    theirs = tmp_path / "agent-run"
    theirs.mkdir(mode=0o700)
    script = [api.bash("touch split.txt", "Create a file"), api.text("Created it.")]
    session = claude_session(script, launch=False, extra_env={"XDG_RUNTIME_DIR": str(theirs)})
    env = {"HOME": str(session.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    installed = subprocess.run([sys.executable, "-m", "headspace_tui", "hooks", "install", *answer], env=env, capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0, installed.stderr
    session.launch()
    return session, theirs


def _listing(folder: Path) -> list[str]:
    """Every path under ``folder`` (a failure's account of what the hooks and headspace made there)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_events_of_an_agent_under_another_xdg_runtime_dir_reach_headspace(claude_session, private_tmux, tmp_path, short_tmp):
    session, theirs = _agent_with_hooks(claude_session, short_tmp)
    ours = short_tmp / "headspace-run"
    ours.mkdir(mode=0o700)
    own_spool = spool_dir({"XDG_RUNTIME_DIR": str(ours)})
    monitor = Monitor(TmuxServer(socket_name=private_tmux.name), config_dir=tmp_path / "no-claude-config", spool=own_spool)
    seen: list[HookEvent] = []
    hook_event = monitor.intake.event

    def spy(event: HookEvent) -> None:  # the real handler, counted
        seen.append(event)
        hook_event(event)

    monitor.intake.event = spy  # type: ignore[method-assign]

    async def run() -> None:
        task = asyncio.create_task(monitor.run())
        try:
            while session.pane_id not in monitor.store.agents:
                await asyncio.sleep(0.05)
            await asyncio.to_thread(session.submit, "create the file")
            await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30, what="the Bash permission dialog")
            for _ in range(300):
                if any(e.event == "PermissionRequest" and e.pane_id == session.pane_id for e in seen):
                    return
                await asyncio.sleep(0.05)
            raise AssertionError(f"no PermissionRequest reached headspace; it saw {[e.event for e in seen]}")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(run())
    assert read_spool(spool_dir({"XDG_RUNTIME_DIR": str(theirs)})), "the hooks wrote under the agent's XDG_RUNTIME_DIR"
    assert read_spool(own_spool) == []  # ...and not into headspace's: the events came from the agent's spool
    request = next(e for e in seen if e.event == "PermissionRequest")
    assert request.tool_name == "Bash" and request.tool_input.get("command") == "touch split.txt"


def test_the_answer_hook_of_an_agent_under_another_xdg_runtime_dir_reaches_headspace(claude_session, private_tmux, tmp_path, short_tmp):
    """Its answer hook looks for headspace beside its own spool: headspace listens there too, and its decision reaches Claude."""
    session, theirs = _agent_with_hooks(claude_session, short_tmp, "--answer")
    ours = short_tmp / "headspace-run"
    ours.mkdir(mode=0o700)
    monitor = Monitor(TmuxServer(socket_name=private_tmux.name), config_dir=tmp_path / "no-claude-config", spool=spool_dir({"XDG_RUNTIME_DIR": str(ours)}), answers=True)

    async def run() -> None:
        task = asyncio.create_task(monitor.run())
        try:
            while session.pane_id not in monitor.store.agents:
                await asyncio.sleep(0.05)
            await asyncio.to_thread(session.submit, "create the file")
            await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30, what="the Bash permission dialog")
            channel = monitor.desk.channel
            assert channel is not None
            # The dialog is drawn: the hook's call is due. A deadline, not a duration (CI once saw none within
            # 300 short sleeps beside another busy run); a failure says what the channel held and how long it waited.
            asked = time.monotonic()
            while not channel.pending(session.pane_id) and time.monotonic() - asked < 30:
                await asyncio.sleep(0.05)
            pending = channel.pending(session.pane_id)
            assert len(pending) == 1, (
                f"the hook's call after {time.monotonic() - asked:.1f}s: {pending}; the pane shows the dialog; headspace's folder: {sorted(p.name for p in ours.iterdir())};"
                f" the agent's: {_listing(theirs)}; its hooks' events: {[e.event for e in read_spool(spool_dir({'XDG_RUNTIME_DIR': str(theirs)}))]}"
            )
            (call,) = pending
            assert call.tool_name == "Bash" and call.tool_input.get("command") == "touch split.txt"
            assert channel.decide(call.id, allow())
            await asyncio.to_thread(session.wait_for, "Created it.", timeout=30, what="Claude's turn after the hook allowed it")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(run())
    assert (session.workdir / "split.txt").exists()  # the command ran: allowed through the hook, no key typed
    assert not (theirs / "headspace" / "answer.sock").exists()  # closed with the monitor


def test_doctor_reports_the_split(claude_session, private_tmux, claude_binary, tmp_path, short_tmp):
    session, theirs = _agent_with_hooks(claude_session, short_tmp)
    session.wait_stable(quiet=0.5, timeout=15, strict=False)
    env = private_env(short_tmp / "doctor-home", path=f"{Path(claude_binary).parent}:/usr/bin:/bin")
    result = subprocess.run([sys.executable, "-m", "headspace_tui", "-L", private_tmux.name, "doctor"], capture_output=True, text=True, env=env, timeout=60)
    lines = result.stdout.splitlines()
    split = [line for line in lines if line.startswith("  ok  hook spool") and "split:" in line]
    assert split, result.stdout
    assert str(theirs / "headspace" / "spool") in split[0] and env["XDG_RUNTIME_DIR"] in split[0] and session.name in split[0]
    assert "headspace watches and answers there too" in split[0]

    same = {**env, "XDG_RUNTIME_DIR": str(theirs)}  # doctor with the agent's own: no split
    result = subprocess.run([sys.executable, "-m", "headspace_tui", "-L", private_tmux.name, "doctor"], capture_output=True, text=True, env=same, timeout=60)
    assert "ok  hook spool" in result.stdout and "split:" not in result.stdout, result.stdout
