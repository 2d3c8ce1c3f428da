"""The main screen's ``d``: the diff view of an agent, the remarks kept per agent, and their sending through the reply's path.

A part the main screen holds and calls down into, with the agent the key
acts on.  The remarks outlive the view (closing it, or the agent's turn
going on, keeps them for the next ``d``) and go with the agent's row.
Sending them is ``Typing.send_text``, the one path typed text takes to an
agent, against the agent's row as it is when ``s`` is pressed (the view
may have been open for minutes); one refusal is added before it: a
question open in the pane would take the prompt as its answer (a reply
types into a question's own free-text option on purpose; remarks must not).
"""

from __future__ import annotations

from collections.abc import Callable

from textual.screen import Screen

from ...changes.remarks import Remark
from ...model import Agent, AgentState
from ..widgets.agent_table import AgentTable
from .diff_view import DiffScreen, Fetch
from .typing_actions import Typing


class Diffs:
    """``d`` over ``screen``: the diff view, and each agent's remarks."""

    def __init__(self, screen: Screen, typing: Typing) -> None:
        self.screen = screen
        self.typing = typing
        self.remarks: dict[str, list[Remark]] = {}  # per pane: the remarks not sent yet

    def open(self, agent: Agent, fetch: Fetch) -> None:
        """The diff view of ``agent``; ``fetch(scope)`` gets its diff (off the UI loop)."""
        pane_id = agent.pane_id
        remarks = self.remarks.setdefault(pane_id, [])

        def send(text: str, sent: Callable[[str], None], heard: Callable[[bool, str], None]) -> None:
            now = self.screen.query_one(AgentTable).agents.get(pane_id)
            if now is None:
                sent("the agent is no longer in the table")
                return
            if now.state is AgentState.QUESTION:
                sent("a question is open in its pane (the remarks would answer it); answer it first")
                return

            def told(delivered: bool, said: str) -> None:
                heard(delivered, said)
                shown = self.screen.app.screen
                if isinstance(shown, DiffScreen) and shown.pane_id == pane_id and shown.is_mounted:
                    shown.show_remarks()  # a view opened again meanwhile shows the list as it is now

            self.typing.send_text(now, now.observation, text, sent, told, what="remarks")

        self.screen.app.push_screen(DiffScreen(agent.target, pane_id, fetch, send, remarks))

    def forget(self, pane_id: str) -> None:
        """The agent's row is gone: its remarks go with it (pane ids are used again)."""
        self.remarks.pop(pane_id, None)
