"""The palette's "New agent…", "Stop agent" and "Restart agent": the modals, then the service, one line back.

Stopping is Claude's own ``/exit`` first (the service types it only at an
empty input box, through the guarded send); only when that cannot be done
is killing the pane offered, in a modal that needs a ``y``, and the service
kills it only while it still runs that same agent.  A started or restarted
agent is selected as soon as its row appears.
"""

from __future__ import annotations

import asyncio
import os

from textual.app import App

from ..api.facade import ServiceError
from ..model import Agent, AgentState
from ..shared.safe_text import clean
from .screens.agent_forms import KillPaneScreen, NewAgentScreen
from .screens.main_screen import MainScreen


def can_stop(agent: Agent | None) -> bool:
    """An agent whose Claude still runs (an exited one has nothing to stop)."""
    return agent is not None and not agent.placeholder and not agent.offline and agent.state not in (AgentState.EXITED, AgentState.UNKNOWN)


class AgentLifecycle:
    """The palette's entries on the main screen's selection; the modals and the lines through its app (Textual's public API)."""

    def __init__(self, main: MainScreen) -> None:
        self.main = main
        self.service = main.service

    @property
    def app(self) -> App:
        return self.main.app

    def _say(self, text: str, severity: str = "information") -> None:
        self.app.notify(clean(text, 300), severity=severity, markup=False)  # type: ignore[arg-type]

    # -- the palette's entries ---------------------------------------------------------------
    def new_agent(self) -> None:
        self.app.run_worker(self._new(), group="lifecycle", name="new agent", exit_on_error=False)

    def stop_agent(self) -> None:
        self.app.run_worker(self._stop(), group="lifecycle", name="stop agent", exit_on_error=False)

    def restart_agent(self) -> None:
        self.app.run_worker(self._restart(), group="lifecycle", name="restart agent", exit_on_error=False)

    # -- the steps ---------------------------------------------------------------------------
    async def _new(self) -> None:
        near = self.main.selected_agent()
        folder = near.cwd if near is not None and near.cwd and near.host == "local" else os.getcwd()
        choice = await self.app.push_screen_wait(NewAgentScreen(folder))
        if choice is None:
            return
        try:
            pane_id = await asyncio.to_thread(self.service.start_agent, choice[0], choice[1], near)
        except ServiceError as exc:
            self._say(str(exc), "error")
            return
        self.main.select_when_seen(pane_id)
        self._say(f"started claude in {pane_id}" + (f" (new worktree {choice[1]})" if choice[1] else ""))

    async def _stop(self) -> None:
        agent = self.main.selected_agent()
        if not can_stop(agent):
            self._say("no running agent selected; nothing stopped", "warning")
            return
        assert agent is not None
        try:
            closed = await self.service.stop_agent(agent)
        except ServiceError as exc:
            why = str(exc)
        else:
            self._say(f"{agent.target}: Claude exited" + ("; its window closed" if closed else "; its pane (a shell) stays open"))
            return
        if not await self.app.push_screen_wait(KillPaneScreen(agent.target, agent.pane_id, why)):
            self._say(f"{agent.target}: kept running ({why})")
            return
        try:
            await asyncio.to_thread(self.service.close_pane, agent)
        except ServiceError as exc:
            self._say(str(exc), "error")
            return
        self._say(f"{agent.target}: pane {agent.pane_id} killed")

    async def _restart(self) -> None:
        agent = self.main.selected_agent()
        if not can_stop(agent):
            self._say("no running agent selected; nothing restarted", "warning")
            return
        assert agent is not None
        try:
            pane_id = await self.service.restart_agent(agent)
        except ServiceError as exc:
            self._say(str(exc), "error")
            return
        self.main.select_when_seen(pane_id)
        self._say(f"{agent.target}: restarted as {pane_id} (claude --resume)")
