"""Hooks make headspace know sooner: measured on live Claude, hooks against the screen alone.

Two monitors watch the same real session at once: one reads only the screen
(the status file is kept out of both, to compare just these two sources), the
other also reads the hook spool.  For each of three permission prompts we
note when each monitor's model first says ``permission``, counted from the
moment the prompt was submitted.  The numbers are printed (run with -s).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time

import pytest

from headspace_tui.events import AgentChanged
from headspace_tui.hooks.spool import spool_dir
from headspace_tui.model import AgentState
from headspace_tui.service.monitor import Monitor
from headspace_tui.tmux.server import TmuxServer
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU, TURN_DONE

pytestmark = pytest.mark.e2e
TRIALS = 3
SCHEDULING_JITTER_MS = 100


def test_hooks_report_a_permission_sooner_than_the_screen(claude_session, fake_api, private_tmux, tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    script = []
    for n in range(TRIALS):
        script += [api.bash(f"touch sooner{n}.txt", f"Create file {n}"), api.text(f"Created file {n}.")]
    session = claude_session(script, launch=False, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
    env = {"HOME": str(session.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    installed = subprocess.run([sys.executable, "-m", "headspace_tui", "hooks", "install"], env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    session.launch()

    first_permission: dict[str, float] = {}
    trial_start = [0.0]

    def watcher(name: str):
        def on_change(event):
            agent = event.agent if isinstance(event, AgentChanged) else None
            if agent is not None and agent.pane_id == session.pane_id and agent.state is AgentState.PERMISSION and name not in first_permission:
                first_permission[name] = time.monotonic() - trial_start[0]

        return on_change

    no_status = tmp_path / "no-claude-config"
    server = TmuxServer(socket_name=private_tmux.name)
    screen_only = Monitor(server, config_dir=no_status, hooks=False)
    with_hooks = Monitor(
        server,
        config_dir=no_status, spool=spool_dir({"XDG_RUNTIME_DIR": str(runtime)}),
    )

    screen_only.subscribe(watcher("screen"))
    with_hooks.subscribe(watcher("hooks"))

    async def measure() -> list[tuple[float, float]]:
        tasks = [asyncio.create_task(screen_only.run()), asyncio.create_task(with_hooks.run())]
        try:
            while session.pane_id not in screen_only.store.agents or session.pane_id not in with_hooks.store.agents:
                await asyncio.sleep(0.05)
            results = []
            for n in range(TRIALS):
                first_permission.clear()
                await asyncio.to_thread(session.wait_stable, quiet=0.5, timeout=5, strict=False)
                trial_start[0] = time.monotonic()
                await asyncio.to_thread(session.submit, f"create file {n}")
                deadline = time.monotonic() + 30
                while len(first_permission) < 2 and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                assert set(first_permission) == {"screen", "hooks"}, first_permission
                results.append((first_permission["hooks"], first_permission["screen"]))
                await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=10)
                await asyncio.to_thread(session.answer, "1")
                await asyncio.to_thread(session.wait_for, lambda s, n=n: f"Created file {n}." in s and TURN_DONE.search(s) is not None, timeout=30)
            return results
        finally:
            for task in tasks:
                task.cancel()

    results = asyncio.run(measure())
    hooks_ms = [h * 1000 for h, _ in results]
    screen_ms = [s * 1000 for _, s in results]
    print(f"\npermission known after submit: hooks {[round(x) for x in hooks_ms]} ms, screen alone {[round(x) for x in screen_ms]} ms")
    print(f"median: hooks {statistics.median(hooks_ms):.0f} ms, screen {statistics.median(screen_ms):.0f} ms")
    assert statistics.median(hooks_ms) < statistics.median(screen_ms)
    # The hooks monitor reads the screen too, so it is never later than the
    # screen alone except by scheduling: both share one event loop, and when
    # the dialog is drawn before the hook event lands (it happens under load)
    # whichever monitor is scheduled first sees it first. A strict h <= s
    # failed on that jitter (242 vs 226 ms in a CI run); more than a capture
    # round late would be a real regression.
    assert all(h <= s + SCHEDULING_JITTER_MS for h, s in zip(hooks_ms, screen_ms, strict=True)), (hooks_ms, screen_ms)
