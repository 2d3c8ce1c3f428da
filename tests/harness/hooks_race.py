"""Hooks against the screen alone, on one live Claude: when each first says ``permission``.

Two monitors watch the same real session at once: one reads only the screen
(the status file is kept out of both, to compare just these two sources), the
other also reads the hook spool.  For each permission prompt we note, counted
from the moment the prompt was submitted, when Claude started its
PermissionRequest hook, when that event reached the hooks monitor, what that
monitor said right after handling it, and when each monitor's model first
said ``permission``.

Used by ``tests/e2e/test_hooks_sooner.py`` (what must hold on every run) and
``benchmarks/hooks_sooner.py`` (how much sooner, over many trials).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from headspace_tui.events import AgentChanged
from headspace_tui.hooks.spool import HookEvent, spool_dir
from headspace_tui.model import AgentState
from headspace_tui.service.watching.monitor import Monitor
from headspace_tui.tmux.server import TmuxServer
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU, TURN_DONE
from tests.harness.session import ClaudeSession


@dataclass
class Trial:
    """One permission prompt; every time in seconds after the prompt was submitted (None: never)."""

    hook_started: float | None = None  # Claude started its PermissionRequest hook (the hook's own ts)
    hook_arrived: float | None = None  # that event reached the hooks monitor's intake
    state_after_hook: AgentState | None = None  # the hooks monitor's state right after handling it
    hooks: float | None = None  # the hooks monitor first said permission
    screen: float | None = None  # the screen-only monitor first said permission


def script(trials: int) -> list[api.Step]:
    """What the scripted API answers: ``trials`` Bash permissions, one per prompt."""
    steps: list[api.Step] = []
    for n in range(trials):
        steps += [api.bash(f"touch sooner{n}.txt", f"Create file {n}"), api.text(f"Created file {n}.")]
    return steps


def install_hooks(session: ClaudeSession) -> None:
    """``headspace hooks install`` into the session's HOME, as a user would (before Claude starts)."""
    env = {"HOME": str(session.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    installed = subprocess.run([sys.executable, "-m", "headspace_tui", "hooks", "install"], env=env, capture_output=True, text=True)
    if installed.returncode != 0:
        raise RuntimeError(f"hooks install failed: {installed.stderr}")


def race(session: ClaudeSession, tmux_name: str, runtime: Path, no_status: Path, trials: int) -> list[Trial]:
    """Submit ``trials`` prompts to the launched ``session`` (hooks installed, spool under ``runtime``) and time both monitors."""
    server = TmuxServer(socket_name=tmux_name)
    screen_only = Monitor(server, config_dir=no_status, hooks=False)
    with_hooks = Monitor(server, config_dir=no_status, spool=spool_dir({"XDG_RUNTIME_DIR": str(runtime)}))
    started = [0.0, 0.0]  # the current trial's start: monotonic, wall clock (a hook's ts is wall clock)
    current = [Trial()]

    def watcher(which: str) -> Callable[[object], None]:
        def on_change(event: object) -> None:
            agent = event.agent if isinstance(event, AgentChanged) else None
            trial = current[0]
            if agent is not None and agent.pane_id == session.pane_id and agent.state is AgentState.PERMISSION and getattr(trial, which) is None:
                setattr(trial, which, time.monotonic() - started[0])

        return on_change

    screen_only.subscribe(watcher("screen"))
    with_hooks.subscribe(watcher("hooks"))
    intake = with_hooks.intake  # a test's spy on the one way hook events come in (setup only)
    handle = intake.event

    def spied(event: HookEvent) -> None:
        handle(event)
        trial = current[0]
        if event.event == "PermissionRequest" and event.pane_id == session.pane_id and trial.hook_arrived is None:
            trial.hook_arrived = time.monotonic() - started[0]
            trial.hook_started = event.ts - started[1] if event.ts else None
            agent = with_hooks.store.agents.get(session.pane_id)
            trial.state_after_hook = agent.state if agent is not None else None

    intake.event = spied  # type: ignore[method-assign]

    async def measure() -> list[Trial]:
        tasks = [asyncio.create_task(screen_only.run()), asyncio.create_task(with_hooks.run())]
        try:
            while session.pane_id not in screen_only.store.agents or session.pane_id not in with_hooks.store.agents:
                await asyncio.sleep(0.05)
            results = []
            for n in range(trials):
                await asyncio.to_thread(session.wait_stable, quiet=0.5, timeout=5, strict=False)
                current[0] = trial = Trial()
                started[:] = [time.monotonic(), time.time()]
                await asyncio.to_thread(session.submit, f"create file {n}")
                deadline = time.monotonic() + 30
                while (trial.hooks is None or trial.screen is None or trial.hook_arrived is None) and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                results.append(trial)
                await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=10)
                await asyncio.to_thread(session.answer, "1")
                await asyncio.to_thread(session.wait_for, lambda s, n=n: f"Created file {n}." in s and TURN_DONE.search(s) is not None, timeout=30)
            return results
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    return asyncio.run(measure())


def ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)
