"""The main screen's ``[`` / ``]``: the preview pages back through the selected pane's tmux history.

A part the main screen holds and calls down into: the history is read
through the service's control client, off the UI's path, and shown only if
the user is still on that pane.
"""

from __future__ import annotations

from textual.screen import Screen

from ...api.facade import Facade, ServiceError
from ...model import Agent
from ...shared.safe_text import clean
from ..guard import ui_handler
from ..widgets.agent_table import AgentTable
from ..widgets.preview import PanePreview
from .asking import Asking


class Scrollback:
    """``[``, ``]`` and back to live, on ``screen``'s preview (found by type), for the agent the screen says."""

    HISTORY_LINES = 2000  # how far back ``[`` reads a pane's tmux history

    def __init__(self, screen: Screen, service: Facade, asking: Asking) -> None:
        self.screen = screen
        self.service = service
        self.asking = asking  # the calls that may wait on the service: off the UI loop

    # What ``ui_handler`` asks of what it guards: the screen's.
    @property
    def is_running(self) -> bool:
        return self.screen.is_running

    def notify(self, message: str, **kwargs) -> None:
        self.screen.notify(message, **kwargs)

    @property
    def preview(self) -> PanePreview:
        return self.screen.query_one(PanePreview)

    def back(self, agent: Agent | None) -> None:
        """A page back: the history read first if the preview is live."""
        preview = self.preview
        if preview.in_history:
            preview.scroll_history(1)
            return
        if agent is None:
            return
        # The app's worker, so that an error in it is reported where every worker's is (the app's on_worker_state_changed).
        self.screen.app.run_worker(self._fetch_history(agent.pane_id, f"{agent.target} ({agent.pane_id})"), name="_fetch_history", group="history", exclusive=True, exit_on_error=False)

    async def _fetch_history(self, pane_id: str, title: str) -> None:
        """The pane with its tmux history, through the session's control client."""
        width = await self.asking.asked(f"{title}'s width", lambda: self.service.width(pane_id))
        if width is None:
            return
        try:
            ansi = await self.service.history(pane_id, self.HISTORY_LINES)
        except ServiceError as exc:
            self.notify(clean(f"cannot read the history of {title}: {exc}"), severity="warning", markup=False)
            return
        self._show_history(pane_id, title, ansi, width)

    @ui_handler
    def _show_history(self, pane_id: str, title: str, ansi: str, width: int) -> None:
        if pane_id != self.screen.query_one(AgentTable).selected_pane_id:
            return  # the user moved on meanwhile
        preview = self.preview
        preview.show_history(pane_id, title, ansi, width)
        preview.scroll_history(1)

    def forward(self) -> None:
        """A page forward; at the bottom, live again."""
        preview = self.preview
        if not preview.in_history:
            return
        if preview.back == 0:
            self.live()
        else:
            preview.scroll_history(-1)

    def live(self) -> None:
        self.preview.live()
