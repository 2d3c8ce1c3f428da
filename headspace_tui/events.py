"""What the monitor tells its subscribers: typed events, in the order things happened.

The monitor is the only writer of the agent model; everyone else (the
journal, the app, a test) subscribes and reads.  An error in a subscriber
is logged and does not reach the monitor.  No Textual here: the app turns
these into its own messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Agent, AgentState, Blocked, Channel


@dataclass(frozen=True)
class AgentChanged:
    """An agent appeared (``old_state`` None) or its row reads differently; ``at`` is when."""

    agent: Agent
    old_state: AgentState | None
    at: float

    @property
    def state_changed(self) -> bool:
        return self.old_state is not self.agent.state


@dataclass(frozen=True)
class TurnBegan:
    """The agent's user submitted a prompt (store.turn): a new turn, from ``at`` (this clock's)."""

    agent: Agent
    at: float


@dataclass(frozen=True)
class AgentRemoved:
    pane_id: str
    key: str = ""  # the agent's identity (``Agent.key``): its history is kept under it


@dataclass(frozen=True)
class PaneCaptured:
    """A pane was read and its screen is not what it was."""

    pane_id: str


@dataclass(frozen=True)
class ProblemChanged:
    """The server-wide problem, or None when all is well.

    ``hosts``: each host's own problem, (host, problem), so that the app can
    say briefly which hosts are out ("box unreachable") and keep ssh's
    words for where there is room for them.
    """

    problem: str | None
    hosts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Notice:
    """One line for the user about something that does not stop headspace."""

    text: str


# How each channel answered, in the words the row, the why view and the timeline use.
ANSWERED_HOW: dict[str, str] = {Channel.HOOK: "via hook", Channel.KEYS: "by keys", Channel.PANE: "answered in the pane"}


@dataclass(frozen=True)
class Answered:
    """An agent's prompt was answered: by headspace (through the hook or keys) or in the pane itself.

    ``tool_input`` is the exact input Claude asked about, as JSON with sorted
    keys, when the hook handed it over ("" when only the screen is known).
    Keys are recorded once the pane shows Claude moved on; ``began`` is when
    they began to go and ``shown`` what their dialog showed: which call
    they answered.
    """

    agent: Agent
    channel: Channel  # hook, keys or pane
    what: str  # "Bash: rm -rf build → allow", for people
    tool: str
    tool_input: str
    at: float
    began: float = 0.0  # when headspace began answering (0: at ``at``)
    shown: str = ""  # keys: the command, file or URL the dialog they answered showed
    # Keys: whether the pane showed they landed, and the report saying how it went. A key
    # that reached the pane is audited either way ("not delivered: still shows ...").
    delivered: bool = True
    outcome: str = ""
    dialog: bool = True  # they answered a dialog (not a line at the input box, not an Esc): Claude's transcript can confirm it
    # What was decided, as data (never read back from ``what``): "allow", "deny", or "" when neither is known
    # (an option that is neither, a dialog answered in the pane); and the rule(s) that answered ("" for a person).
    decision: str = ""
    rule: str = ""

    @property
    def started(self) -> float:
        """When headspace began answering: ``began`` for keys, else when it was recorded."""
        return self.began or self.at

    @property
    def host(self) -> str:
        """The machine the agent runs on ("local", or a remote host's name): a batch may span several."""
        return self.agent.host

    @property
    def first(self) -> str:
        """Who answered first: headspace, or the person at the pane."""
        return "pane" if self.channel == Channel.PANE else "headspace"


@dataclass(frozen=True)
class CallBlocked:
    """A call the agent wanted to make was refused by its permission mode's check (Claude's auto mode), unseen by the user."""

    agent: Agent
    block: Blocked
    at: float


@dataclass(frozen=True)
class Rung:
    """The service rang a wait (resident/ringer.py) to every client of the tmux server whose socket is ``server``.

    A front end whose own terminal is not one of those (outside tmux, or in
    another tmux server's pane) says it there too; the words are already
    safe for a terminal (notifications/decide.py).
    """

    title: str
    body: str
    link: str
    server: str


Event = AgentChanged | AgentRemoved | PaneCaptured | ProblemChanged | Notice | Answered | CallBlocked | TurnBegan | Rung
