"""What the service tells the app, as Textual messages.

The service is Textual-free and reports through callbacks; the app turns
each report into one of these messages, so the UI handles them in its own
message loop, in order, one at a time, and an error in a handler stays in
the UI (it is caught, logged and shown as one line) instead of travelling
back into the monitor.  An agent's messages go to the main screen, which
shows them (after its widgets exist: a screen handles its queue only once
composed and mounted), and then bubble up to the app, which keeps the
app-wide part (notifications); a notice goes to the app.
"""

from __future__ import annotations

from textual.message import Message

from ..model import Agent


class AgentChanged(Message):
    """An agent appeared, or its row should show something new."""

    def __init__(self, agent: Agent) -> None:
        super().__init__()
        self.agent = agent


class AgentRemoved(Message):
    """A pane is no longer watched (closed, or no longer running Claude)."""

    def __init__(self, pane_id: str, key: str = "") -> None:
        super().__init__()
        self.pane_id = pane_id
        self.key = key  # the agent's identity (``Agent.key``), which its notifications are kept under


class ProblemChanged(Message):
    """The server-wide problem ("no tmux server running ...") or None when all is well."""

    def __init__(self, problem: str | None) -> None:
        super().__init__()
        self.problem = problem


class PaneCaptured(Message):
    """A pane was read and its screen changed (the preview may repaint)."""

    def __init__(self, pane_id: str) -> None:
        super().__init__()
        self.pane_id = pane_id


class ServiceNotice(Message):
    """One line for the user about something that does not stop headspace."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
