"""The palette's New / Stop / Restart agent on a private tmux server, without Claude.

A plain shell pane stands for a pane that does not run Claude (shown with
``include_all``): New agent is offered, Stop and Restart are not, and the
service refuses to kill it even when asked directly.  The live tests
(tests/e2e/test_lifecycle_live.py) do the rest with the real Claude.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Input

from headspace_tui.api.facade import ServiceError
from headspace_tui.app.screens.agent_forms import NewAgentScreen
from tests.ui.apps import make_app, screen_open, wait_until


def highlighted(app) -> str:
    if not isinstance(app.screen, CommandPalette):
        return ""
    options = app.screen.query_one(CommandList)
    index = options.highlighted
    return str(options.get_option_at_index(index).prompt).split("\n")[0] if index is not None else ""


def windows(private_tmux) -> list[str]:
    return private_tmux.run("list-windows", "-a", "-F", "#{window_id}").split()


@pytest.fixture
def shell_pane(private_tmux, tmp_path, monkeypatch):
    monkeypatch.delenv("TMUX", raising=False)
    folder = tmp_path / "plain"
    folder.mkdir()
    return private_tmux.new_session("plain", width=80, height=24, cwd=str(folder), command=["bash", "--norc", "--noprofile", "-i"]), folder


def test_new_agent_is_offered_and_a_refused_worktree_starts_nothing(private_tmux, tmp_path, shell_pane):
    pane_id, folder = shell_pane
    app = make_app(private_tmux.name, tmp_path, include_all=True)

    async def scenario():
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_until(pilot, lambda: pane_id in app.table.agents, "the shell's row")
            # A loaded machine can read the pane before tmux lists its folder (its shell not started yet):
            # the form offers the row's folder once the row knows it (a later discovery tells it).
            await wait_until(pilot, lambda: app.table.agents[pane_id].cwd == str(folder), "the shell's folder in its row", timeout=45)
            app.table.select(pane_id)
            await wait_until(pilot, lambda: app.table.selected_pane_id == pane_id, "the shell selected")
            titles = {c.title for c in app.get_system_commands(app.screen)}
            assert "New agent…" in titles
            assert not {"Stop agent", "Restart agent"} & titles  # no Claude runs there: nothing to stop

            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"new agent")
            await wait_until(pilot, lambda: highlighted(app).startswith("New agent"), "the palette to offer New agent")
            await pilot.press("enter")
            await wait_until(pilot, lambda: screen_open(app, NewAgentScreen), "the New agent form")
            assert app.screen.query_one("#folder", Input).value == str(folder)  # the selected agent's folder
            app.screen.query_one("#branch", Input).focus()
            await pilot.press(*"try-1", "enter")
            await wait_until(pilot, lambda: any("not in a git repository" in str(n.message) for n in app._notifications), "the refusal")
            assert not screen_open(app, NewAgentScreen)
            assert windows(private_tmux) == ["@0"]  # no window was made
            assert not (tmp_path / "plain-worktrees").exists()

            app.lifecycle.new_agent()
            await wait_until(pilot, lambda: screen_open(app, NewAgentScreen), "the form again")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not screen_open(app, NewAgentScreen), "the form closed")
            assert windows(private_tmux) == ["@0"]
            assert app.is_running

    asyncio.run(scenario())


def test_a_pane_that_does_not_run_that_agent_is_never_killed(private_tmux, tmp_path, shell_pane):
    pane_id, _ = shell_pane
    app = make_app(private_tmux.name, tmp_path, include_all=True)

    async def scenario():
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_until(pilot, lambda: pane_id in app.table.agents, "the shell's row")
            agent = app.table.agents[pane_id]
            with pytest.raises(ServiceError, match="no longer runs that agent"):
                await asyncio.to_thread(app.service.close_pane, agent)  # a shell: no Claude in it (asked from a thread, as the app asks it)
            with pytest.raises(ServiceError, match="no longer runs that agent"):
                await asyncio.to_thread(app.service.close_pane, dataclasses.replace(agent, key=agent.key + "-an-earlier-one"))
            app.lifecycle.stop_agent()  # the palette hides it here; asked anyway, it refuses in one line
            await wait_until(pilot, lambda: any("nothing stopped" in str(n.message) for n in app._notifications), "the refusal")
            assert pane_id in private_tmux.run("list-panes", "-a", "-F", "#{pane_id}").split()

    asyncio.run(scenario())
