"""The main screen's ``[`` / ``]``: the preview pages back through the selected pane's tmux history.

A base of ``MainScreen`` (kept apart so that the screen class stays one
screenful of concerns): the history is read through the service's control
client, off the UI's path, and shown only if the user is still on that pane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen

from ...model import Agent
from ...service.facade import Service, ServiceError
from ...shared.safe_text import clean
from ..guard import ui_handler
from ..widgets.agent_table import AgentTable
from ..widgets.preview import PanePreview


class ScrollbackActions(Screen):
    """``[``, ``]`` and back to live; ``MainScreen`` provides the service, the table and the selection."""

    HISTORY_LINES = 2000  # how far back ``[`` reads a pane's tmux history

    service: Service

    if TYPE_CHECKING:  # provided by MainScreen; declared only for the type checker, so that they never shadow the real ones in the MRO

        @property
        def table(self) -> AgentTable:
            ...

        def selected_agent(self) -> Agent | None:
            ...

    def action_scroll_back(self) -> None:
        preview = self.query_one(PanePreview)
        if preview.in_history:
            preview.scroll_history(1)
            return
        agent = self.selected_agent()
        width = self.service.width(agent.pane_id) if agent else None
        if agent is None or width is None:
            return
        # The app's worker, so that an error in it is reported where every worker's is (the app's on_worker_state_changed).
        self.app.run_worker(self._fetch_history(agent.pane_id, f"{agent.target} ({agent.pane_id})", width), name="_fetch_history", group="history", exclusive=True, exit_on_error=False)

    async def _fetch_history(self, pane_id: str, title: str, width: int) -> None:
        """The pane with its tmux history, through the session's control client."""
        try:
            ansi = await self.service.history(pane_id, self.HISTORY_LINES)
        except ServiceError as exc:
            self.notify(clean(f"cannot read the history of {title}: {exc}"), severity="warning", markup=False)
            return
        self._show_history(pane_id, title, ansi, width)

    @ui_handler
    def _show_history(self, pane_id: str, title: str, ansi: str, width: int) -> None:
        if pane_id != self.table.selected_pane_id:
            return  # the user moved on meanwhile
        preview = self.query_one(PanePreview)
        preview.show_history(pane_id, title, ansi, width)
        preview.scroll_history(1)

    def action_scroll_forward(self) -> None:
        preview = self.query_one(PanePreview)
        if not preview.in_history:
            return
        if preview.back == 0:
            self.action_preview_live()
        else:
            preview.scroll_history(-1)

    def action_preview_live(self) -> None:
        self.query_one(PanePreview).live()
