"""What the service tells the app, as Textual messages: each wraps one of the service's events.

The service is Textual-free and reports typed events (``events.py``); the
app wraps each in one of these messages, so the UI handles them in its own
message loop, in order, one at a time, and an error in a handler stays in
the UI (it is caught, logged and shown as one line) instead of travelling
back into the monitor.  An agent's messages go to the main screen, which
shows them (after its widgets exist: a screen handles its queue only once
composed and mounted), and then bubble up to the app, which keeps the
app-wide part (notifications); a notice goes to the app.

A burst of messages about one pane (a redraw storm, a reading, its answer
tag and its transcript's outcome one after another) is handled once: the
store changes an agent in place, so the newest message says all the older
ones said (``can_replace``).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from .. import events
from ..model import Agent


@dataclass
class AgentChanged(Message):
    """An agent appeared, or its row should show something new."""

    event: events.AgentChanged

    @property
    def agent(self) -> Agent:
        return self.event.agent

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AgentChanged) and message.agent is self.agent


@dataclass
class AgentRemoved(Message):
    """A pane is no longer watched (closed, or no longer running Claude)."""

    event: events.AgentRemoved

    @property
    def pane_id(self) -> str:
        return self.event.pane_id

    @property
    def key(self) -> str:
        """The agent's identity (``Agent.key``), which its notifications are kept under."""
        return self.event.key


@dataclass
class ProblemChanged(Message):
    """The server-wide problem ("no tmux server running ...") or None when all is well."""

    event: events.ProblemChanged

    @property
    def problem(self) -> str | None:
        return self.event.problem

    @property
    def hosts(self) -> tuple[tuple[str, str], ...]:
        return self.event.hosts

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ProblemChanged)  # only the newest problem matters


@dataclass
class PaneCaptured(Message):
    """A pane was read and its screen changed (the preview may repaint)."""

    event: events.PaneCaptured

    @property
    def pane_id(self) -> str:
        return self.event.pane_id

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, PaneCaptured) and message.pane_id == self.pane_id


@dataclass
class ServiceNotice(Message):
    """One line for the user about something that does not stop headspace."""

    text: str


# -- what the main screen's parts tell the screen and the app (messages up; calls go down) --


@dataclass
class Snoozed(Message):
    """The user snoozed ``agent``'s wait: the screen recounts its header (the service's ringer, which looks at the service's snoozes, stops saying that wait)."""

    agent: Agent


@dataclass
class Woken(Message):
    """``agent``'s snooze is over: taken back by the user, or (``ran_out``) its time is up and the service's ringer says its wait again."""

    agent: Agent
    ran_out: bool


@dataclass
class LayoutChosen(Message):
    """``l`` chose the next layout setting (auto, side, stacked): the app keeps the setting, the screen follows it."""

    mode: str


@dataclass
class InputModeEnded(Message):
    """Input mode on ``pane_id`` ended by itself (its link could not be made, or the pane stopped taking keys): the screen leaves it, and says why."""

    pane_id: str
    why: str
