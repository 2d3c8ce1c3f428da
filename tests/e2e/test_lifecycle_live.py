"""Starting and stopping real Claude agents: ``headspace new`` in a fresh git worktree, the palette's Stop and Restart.

A private tmux server stands for the user's: its global environment holds
what the user's would (HOME, the API's address and key), so a window that
``headspace new`` makes gets it as any new window does; ``claude`` is found
on the PATH of whoever asks tmux for the window, as from a user's shell.
The app watches the same server; what counts is its table (the row appears,
is selected, goes) and the panes themselves.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from headspace_tui.api.timeouts import LIFECYCLE
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.agent_forms import KillPaneScreen, NewAgentScreen
from headspace_tui.events import AgentChanged
from headspace_tui.model import AgentState
from headspace_tui.service.watching.lifecycle import START_WAIT
from headspace_tui.service.watching.monitor import DISCOVERY_INTERVAL
from headspace_tui.shared.proctree import read_process_table
from headspace_tui.shared.worktree import worktree_path
from tests.harness import fake_api as api
from tests.harness.claude import claude_env, make_home
from tests.harness.git_repo import git, make_repo
from tests.harness.session import SHELL_PROMPT
from tests.ui.apps import make_app, screen_open, wait_until

pytestmark = pytest.mark.e2e

# A started agent's row comes from tmux's event, not from the full look every DISCOVERY_INTERVAL (30 s):
# waited for this long at most, a third of the safety net (how soon it is, is printed; 0.2-0.6 s alone, 2.1 s once in CI).
APPEARS_WITHIN = DISCOVERY_INTERVAL / 3
# A stop is Claude's screen held still, /exit typed, confirmed and Claude gone, each within EXIT_WAIT: the client waits
# LIFECYCLE for it (a busy CI run's report came after the 15 s this test once gave it).
STOPS_WITHIN = LIFECYCLE + 5
# A start (or a restart's new window) returns once Claude runs there (START_WAIT); its row then comes as above.
STARTS_WITHIN = START_WAIT + APPEARS_WITHIN


def user_server(private_tmux, claude_binary: str, fake_api, tmp_path: Path, trusted: list[Path]) -> dict[str, str]:
    """A session on the private server, whose global environment is the agents' (as a user's server has theirs); that environment."""
    home = tmp_path / "home"
    make_home(home, tmp_path)  # (make_home makes the folder it trusts: a worktree's must not exist yet)
    env = claude_env(home, fake_api.url, claude_binary, inline=False)
    config = (home / ".claude.json").read_text()
    for folder in trusted:  # trust every folder an agent will start in (no dialog)
        config = config.replace('"projects": {', f'"projects": {{"{folder}": {{"hasTrustDialogAccepted": true, "allowedTools": []}}, ', 1)
    (home / ".claude.json").write_text(config)
    private_tmux.new_session("main", width=120, height=40, cwd=str(tmp_path), command=["sleep", "3600"], env=env)
    for key, value in env.items():
        private_tmux.run("set-environment", "-g", key, value)
    return env


def headspace_new(socket: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """``headspace new`` as a user runs it from a shell whose PATH has claude (outside tmux: the session is named)."""
    own = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    own["PATH"] = env["PATH"]
    return subprocess.run([sys.executable, "-m", "headspace_tui", "-L", socket, "new", *args], capture_output=True, text=True, env=own, timeout=60)


def box(private_tmux, pane_id: str) -> str:
    """The pane's text, Claude's no-break space after its ❯ as a plain one."""
    return private_tmux.capture(pane_id).replace("\u00a0", " ")


def pane_ids(private_tmux) -> set[str]:
    return set(private_tmux.run("list-panes", "-a", "-F", "#{pane_id}").split())


def gone_or_shown(private_tmux, pane_id: str, app: HeadspaceApp) -> str:
    """For a failed wait: the screen open in the app, and whether the pane is gone or what it shows."""
    screen = type(app.screen).__name__ + (f" ({app.screen.why})" if isinstance(app.screen, KillPaneScreen) else "")
    if pane_id not in pane_ids(private_tmux):
        return f"{screen} open; the pane is gone"
    return f"{screen} open; the pane shows:\n{box(private_tmux, pane_id)}"


def test_headspace_new_in_a_fresh_worktree_then_stop(claude_binary, fake_api, private_tmux, tmp_path):
    repo = make_repo(tmp_path / "proj")
    tree = worktree_path(repo, "agent/one")
    env = user_server(private_tmux, claude_binary, fake_api, tmp_path, [tree])
    app = make_app(private_tmux.name, tmp_path, claude_home=Path(env["HOME"]))
    timings: dict[str, float] = {}

    async def scenario():
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_until(pilot, lambda: app.main.problem is None, "the first discovery")
            done = await asyncio.to_thread(headspace_new, private_tmux.name, env, str(repo), "--worktree", "agent/one", "--session", "main")
            started = time.monotonic()
            assert done.returncode == 0, done.stderr
            pane_id = done.stdout.split()[0]
            assert f"claude in {tree} (new worktree)" in done.stdout
            await wait_until(pilot, lambda: pane_id in app.table.agents, f"{pane_id}'s row", timeout=APPEARS_WITHIN, every=0.02)
            timings["appeared"] = time.monotonic() - started
            agent = app.table.agents[pane_id]
            assert agent.cwd == str(tree)
            await wait_until(pilot, lambda: app.table.agents[pane_id].state is AgentState.IDLE, "Claude idle at its input box", timeout=30)
            assert app.table.select(pane_id)
            await wait_until(pilot, lambda: (a := app.selected_agent()) is not None and a.pane_id == pane_id, "the cursor on it")
            titles = await palette_titles(pilot, app)
            assert {"New agent…", "Stop agent", "Restart agent"} <= titles
            app.lifecycle.stop_agent()
            await wait_until(pilot, lambda: pane_id not in app.table.agents, lambda: f"the row to go ({gone_or_shown(private_tmux, pane_id, app)})", timeout=STOPS_WITHIN)
            assert not screen_open(app, KillPaneScreen)  # Claude left by its own /exit: nothing to kill
            assert pane_id not in pane_ids(private_tmux)  # Claude was the window's program: the window closed with it

    asyncio.run(scenario())
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD").strip() == "agent/one"
    print(f"\nrow appeared {timings['appeared']:.2f}s after 'headspace new' returned")


async def palette_titles(pilot, app: HeadspaceApp) -> set[str]:
    return {command.title for command in app.get_system_commands(app.screen)}


def test_palette_new_agent_is_selected_and_a_working_one_is_killed_only_after_yes(claude_binary, fake_api, private_tmux, tmp_path, monkeypatch):
    folder = tmp_path / "work"
    folder.mkdir()
    env = user_server(private_tmux, claude_binary, fake_api, tmp_path, [folder])
    monkeypatch.setenv("PATH", env["PATH"] + ":" + os.environ["PATH"])  # the app asks tmux for the window: claude on its PATH
    monkeypatch.delenv("TMUX", raising=False)
    fake_api.set_script([api.text("a long answer, one rune at a time " * 40, seconds=120)])
    app = make_app(private_tmux.name, tmp_path, claude_home=Path(env["HOME"]))

    async def scenario():
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_until(pilot, lambda: app.main.problem is None, "the first discovery")
            before = pane_ids(private_tmux)
            app.lifecycle.new_agent()
            await wait_until(pilot, lambda: screen_open(app, NewAgentScreen), "the New agent form")
            form = app.screen.query_one("#folder")
            form.value = str(folder)  # type: ignore[attr-defined]
            form.focus()
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(pane_ids(private_tmux) - before) == 1, "a new pane")
            (pane_id,) = pane_ids(private_tmux) - before
            await wait_until(pilot, lambda: (a := app.selected_agent()) is not None and a.pane_id == pane_id, "the new agent selected", timeout=STARTS_WITHIN)
            # Outside tmux, with no agent selected: the documented session.
            assert private_tmux.run("display-message", "-p", "-t", pane_id, "#{session_name}").strip() == "headspace"
            await wait_until(pilot, lambda: app.table.agents[pane_id].state is AgentState.IDLE, "Claude idle", timeout=30)
            private_tmux.run("send-keys", "-t", pane_id, "-l", "explain")
            await wait_until(pilot, lambda: "❯ explain" in box(private_tmux, pane_id), "the draft in the input box")

            # A draft in the box: /exit would be sent on its end; the kill is offered instead, and n keeps all.
            app.lifecycle.stop_agent()
            await wait_until(pilot, lambda: screen_open(app, KillPaneScreen), "the kill confirmation")
            assert "holds text" in app.screen.why
            await pilot.press("n")
            await wait_until(pilot, lambda: not screen_open(app, KillPaneScreen), "the modal closed")
            assert "❯ explain" in box(private_tmux, pane_id) and "/exit" not in box(private_tmux, pane_id)

            private_tmux.run("send-keys", "-t", pane_id, "Enter")
            await wait_until(pilot, lambda: app.table.agents[pane_id].state is AgentState.WORKING, "Claude working", timeout=30)

            # Working: no /exit; the kill is offered, and n keeps the pane.
            app.lifecycle.stop_agent()
            await wait_until(pilot, lambda: screen_open(app, KillPaneScreen), "the kill confirmation")
            assert "working" in app.screen.why
            await pilot.press("n")
            await wait_until(pilot, lambda: not screen_open(app, KillPaneScreen), "the modal closed")
            assert pane_id in pane_ids(private_tmux)
            assert app.table.agents[pane_id].state is AgentState.WORKING

            app.lifecycle.stop_agent()
            await wait_until(pilot, lambda: screen_open(app, KillPaneScreen), "the kill confirmation again")
            await pilot.press("y")
            await wait_until(pilot, lambda: pane_id not in pane_ids(private_tmux), "the pane killed", timeout=10)
            await wait_until(pilot, lambda: pane_id not in app.table.agents, "the row to go", timeout=10)
            assert before <= pane_ids(private_tmux)  # every other pane is still there

    asyncio.run(scenario())


def test_restart_resumes_the_same_conversation_in_a_new_window(claude_binary, fake_api, private_tmux, tmp_path, monkeypatch):
    folder = tmp_path / "work"
    folder.mkdir()
    env = user_server(private_tmux, claude_binary, fake_api, tmp_path, [folder])
    monkeypatch.setenv("PATH", env["PATH"] + ":" + os.environ["PATH"])
    monkeypatch.delenv("TMUX", raising=False)
    # The first reply is held back a little, so the turn is seen working before it is seen over: a row still idle from
    # before the prompt, beside "Noted" already drawn, let a busy run press restart while the service saw the turn only then.
    fake_api.set_script([api.text("Noted: the word is PELICAN.", delay=2.0), api.text("You said PELICAN.")])
    app = make_app(private_tmux.name, tmp_path, claude_home=Path(env["HOME"]))
    done = headspace_new(private_tmux.name, env, str(folder), "--session", "main")
    assert done.returncode == 0, done.stderr
    old = done.stdout.split()[0]

    async def scenario():
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_until(pilot, lambda: old in app.table.agents and app.table.agents[old].state is AgentState.IDLE, "the agent idle", timeout=30)
            said: list[AgentState] = []  # every state the service said of it, not one sampled now and then
            app.service.subscribe(lambda event: isinstance(event, AgentChanged) and event.agent.pane_id == old and said.append(event.agent.state))
            private_tmux.run("send-keys", "-t", old, "-l", "remember PELICAN")
            private_tmux.run("send-keys", "-t", old, "Enter")
            await asyncio.to_thread(fake_api.wait_for, lambda r: "PELICAN" in r.user_text(), 30)
            await wait_until(pilot, lambda: AgentState.WORKING in said, "the turn seen", timeout=30)
            await wait_until(pilot, lambda: "Noted" in private_tmux.capture(old) and said[-1] is AgentState.IDLE and app.table.agents[old].state is AgentState.IDLE, "the answer shown", timeout=30)
            app.table.select(old)
            await wait_until(pilot, lambda: (a := app.selected_agent()) is not None and a.pane_id == old, "the cursor on it")
            before = pane_ids(private_tmux)
            app.lifecycle.restart_agent()
            await wait_until(pilot, lambda: bool(pane_ids(private_tmux) - before), "the resumed window", timeout=STOPS_WITHIN)  # the old one stopped first
            (new,) = pane_ids(private_tmux) - before
            assert old not in pane_ids(private_tmux)
            await wait_until(pilot, lambda: (a := app.selected_agent()) is not None and a.pane_id == new, "the resumed agent selected", timeout=STARTS_WITHIN)
            pid = int(private_tmux.run("display-message", "-p", "-t", new, "#{pane_pid}").strip())
            info = read_process_table().get(pid)
            assert info is not None and "--resume" in info.argv, info
            await wait_until(pilot, lambda: app.table.agents[new].state is AgentState.IDLE, "the resumed agent idle", timeout=30)
            private_tmux.run("send-keys", "-t", new, "-l", "what was the word")
            private_tmux.run("send-keys", "-t", new, "Enter")
            request = await asyncio.to_thread(fake_api.wait_for, lambda r: "what was the word" in r.user_text(), 30)
            # The resumed conversation carries the first turn: the same session, not a fresh one.
            assert "remember PELICAN" in str(request.body)

    asyncio.run(scenario())


def test_restart_with_claude_missing_from_the_new_windows_path_stops_nothing_and_says_how_to_resume_by_hand(claude_binary, fake_api, private_tmux, tmp_path, monkeypatch):
    """The trial's restart stopped the agent and then found no claude on the PATH new windows get, with no way back given."""
    folder = tmp_path / "work"
    folder.mkdir()
    env = user_server(private_tmux, claude_binary, fake_api, tmp_path, [folder])
    monkeypatch.delenv("TMUX", raising=False)
    fake_api.set_script([api.text("Noted.")])
    app = make_app(private_tmux.name, tmp_path, claude_home=Path(env["HOME"]))
    done = headspace_new(private_tmux.name, env, str(folder), "--session", "main")
    assert done.returncode == 0, done.stderr
    old = done.stdout.split()[0]
    private_tmux.run("set-environment", "-g", "PATH", "/usr/bin:/bin")  # from now on, new windows find no claude

    async def scenario():
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_until(pilot, lambda: old in app.table.agents and app.table.agents[old].state is AgentState.IDLE, "the agent idle", timeout=30)
            app.table.select(old)
            await wait_until(pilot, lambda: (a := app.selected_agent()) is not None and a.pane_id == old, "the cursor on it")
            app.lifecycle.restart_agent()

            def said() -> list[str]:
                return [str(n.message) for n in app._notifications]

            await wait_until(pilot, lambda: any("left running" in m for m in said()), "the restart's report", timeout=30)
            (report,) = [m for m in said() if "left running" in m]
            assert "claude is not on the PATH tmux gives new windows (PATH=/usr/bin:/bin)" in report, report
            assert f"resume it by hand: cd {folder} && claude --resume " in report, report
            assert not any("restarted as" in m for m in said()), said()
            await pilot.pause(0.5)
            assert app.table.agents[old].state is AgentState.IDLE  # Claude was never asked to exit
            assert "claude" in private_tmux.run("display-message", "-p", "-t", old, "#{pane_current_command}")

    asyncio.run(scenario())


def test_stop_leaves_the_shell_claude_was_started_from(claude_session, private_tmux, tmp_path):
    """A Claude typed at a shell prompt: /exit ends Claude, the user's shell stays, and nothing is killed."""
    session = claude_session([], name="byhand")
    app = make_app(private_tmux.name, session.root, claude_home=session.home)

    async def scenario():
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_until(pilot, lambda: session.pane_id in app.table.agents and app.table.agents[session.pane_id].state is AgentState.IDLE, "the agent idle", timeout=30)
            app.table.select(session.pane_id)
            await wait_until(pilot, lambda: (a := app.selected_agent()) is not None and a.pane_id == session.pane_id, "the cursor on it")
            app.lifecycle.stop_agent()
            reported = lambda: any("stays open" in str(n.message) for n in app._notifications)  # noqa: E731
            await wait_until(pilot, lambda: reported() or screen_open(app, KillPaneScreen), lambda: f"the report ({gone_or_shown(private_tmux, session.pane_id, app)})", timeout=STOPS_WITHIN)
            assert not screen_open(app, KillPaneScreen), gone_or_shown(private_tmux, session.pane_id, app)  # /exit worked: nothing to kill
            await wait_until(pilot, lambda: app.table.agents[session.pane_id].state is AgentState.EXITED, "the row to say exited", timeout=10)

    asyncio.run(scenario())
    assert session.pane_id in pane_ids(private_tmux)
    session.wait_for(SHELL_PROMPT, what="the shell prompt back")


def test_headspace_new_passes_the_permission_mode_to_the_real_claude(claude_binary, fake_api, private_tmux, tmp_path):
    """docs/agents.md: ``headspace new -- --permission-mode plan`` starts Claude in plan mode (it says so under its box)."""
    folder = tmp_path / "proj"
    folder.mkdir()
    env = user_server(private_tmux, claude_binary, fake_api, tmp_path, [folder])
    done = headspace_new(private_tmux.name, env, str(folder), "--session", "main", "--", "--permission-mode", "plan")
    assert done.returncode == 0, done.stderr
    pane_id = done.stdout.split()[0]
    deadline = time.monotonic() + 30
    while "plan mode on" not in box(private_tmux, pane_id).lower():
        assert time.monotonic() < deadline, box(private_tmux, pane_id)
        time.sleep(0.1)
