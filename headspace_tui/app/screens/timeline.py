"""The ``t`` screen: one agent's history — state changes, commands, outcomes — from the event log."""

from __future__ import annotations

import datetime as dt

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...api.facade import FIRST_SAYS
from ...events import ANSWERED_HOW
from ...model import Agent, AgentState, Blocked
from ...shared.safe_text import clean, cleaned
from ...state.eventlog import StoredEvent
from ..widgets.state_style import state_text


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def describe_event(event: StoredEvent, styles: dict[AgentState, Style]) -> Text | None:
    """One line for one event, or None for events the timeline does not show.

    The event log is a file on disk: every value is treated as data from
    outside (cleaned, never markup, numbers checked).
    """
    line = _describe(event, styles)
    return cleaned(line) if line is not None else None


# Who said the agent's state, in the user's words (the rule itself is in ``e``, why).
SOURCE_WORDS = {
    "screen": "seen on its screen",
    "status-file": "Claude's status file",
    "claude-agents": "claude agents",
    "hook": "Claude's hook",
    "transcript": "Claude's transcript",
    "process": "its process",
    "title": "its pane's title",
    "ssh": "ssh",
}
# The command's steps (state/machine.py), as what happened: (from, to) -> words.  A step to
# where it already was (Claude still working) says nothing new and is not shown.
COMMAND_WORDS = {
    ("idle", "commanded"): "you gave it a command",
    ("complete", "commanded"): "you gave it a command",
    ("awaiting_input", "commanded"): "you gave it a new command (the one it asked about was left)",
    ("commanded", "processing"): "it started on the command",
    ("commanded", "awaiting_input"): "it asked you something before starting",
    ("processing", "awaiting_input"): "it asked you something",
    ("awaiting_input", "processing"): "you answered; it went on",
    ("commanded", "complete"): "it finished the command at once",
    ("processing", "complete"): "it finished the command",
}
COMMAND_STATE_WORDS = {"idle": "no command", "commanded": "given", "processing": "being worked on", "awaiting_input": "waiting for your answer", "complete": "finished"}


def _describe(event: StoredEvent, styles: dict[AgentState, Style]) -> Text | None:
    p = event.payload if isinstance(event.payload, dict) else {}
    if event.kind == "agent_state":
        try:
            to = AgentState(p.get("to"))
        except ValueError:
            return None
        line = Text("state → ")
        line.append_text(state_text(to, styles))
        if p.get("source"):
            source = str(p["source"])
            line.append(f"  ({SOURCE_WORDS.get(source, source)})", style="dim")
        return line
    if event.kind == "state_transition":
        start, end = str(p.get("from")), str(p.get("to"))
        if start == end:
            return None
        return Text(COMMAND_WORDS.get((start, end), f"its command: {_command_state(start)} → {_command_state(end)}"), style="cyan")
    if event.kind == "conversation":
        resumed = p.get("how") == "resumed"
        return Text("resumed another conversation (/resume): its count starts" if resumed else "a new conversation (/clear): its count starts at zero", style="cyan")
    if event.kind == "agent_inactive":
        return Text(f"Claude ended with its command {_command_state(str(p.get('state')))}", style="yellow")
    if event.kind == "command_abandoned":
        return Text("command abandoned for a new one", style="yellow")
    if event.kind == "command_interrupted":
        return Text(f"command interrupted (Esc) while {p.get('from')}", style="yellow")
    if event.kind == "outcome":
        style = "red" if p.get("outcome") in ("error", "tests_failed") else "green"
        return Text(f"{str(p.get('outcome', '')).replace('_', ' ')}: {p.get('detail', '')}", style=style)
    if event.kind == "answer":
        how = ANSWERED_HOW.get(str(p.get("channel")), str(p.get("channel")))
        line = Text(f"{how}: {p.get('what', '')}", style="magenta" if p.get("delivered") is not False else "red")
        if p.get("delivered") is False:  # the keys reached the pane; nothing showed they landed
            line.append(f"  {p.get('outcome') or 'not delivered'}", style="red")
        if p.get("input"):
            line.append(f"  {str(p['input'])[:300]}", style="dim")
        return line
    if event.kind == "blocked":
        return Text(f"⊘ {clean(Blocked.from_json(p).words(), 500)}", style="red")
    if event.kind == "answer_evidence":
        first = str(p.get("first", ""))
        said = FIRST_SAYS.get(first, first)
        return Text(f"  Claude's transcript: {said} ({p.get('evidence', '')})", style="magenta" if first != "unconfirmed" else "dim")
    if event.kind == "transition_rejected":
        who = "your" if p.get("actor") == "user" else "its"
        return Text(f"{who} {p.get('intent')} not counted: the command was {_command_state(str(p.get('from')))}", style="dim")
    return None


def _command_state(value: str) -> str:
    return COMMAND_STATE_WORDS.get(value, value.replace("_", " "))


def _clock(ts: object) -> str:
    try:
        return dt.datetime.fromtimestamp(_number(ts)).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return "--:--:--"


def began(events: list[StoredEvent]) -> dict[int, float]:
    """Per state change (by its place in ``events``): when the state began, as its row counted it.

    A state is dated by its claim (``since``; detect/clock.py), which an
    ``agent_clock`` event may have moved earlier since; a log from before
    there were claims has only the time the change was seen.
    """
    times: dict[int, float] = {}
    last: int | None = None
    for i, event in enumerate(events):
        p = event.payload if isinstance(event.payload, dict) else {}
        if event.kind == "agent_state":
            times[i] = _number(p.get("since")) or _number(event.ts)
            last = i
        elif event.kind == "agent_clock" and last is not None and _number(p.get("since")):
            times[last] = _number(p.get("since"))
    return times


def timeline_table(events: list[StoredEvent], styles: dict[AgentState, Style]) -> Table:
    """Every shown event at the time it says, in time order.

    A state is dated by when it began (``began``), which can be before
    events logged ahead of it (Claude's word arrives after headspace saw the
    screen): ordered as logged, the times went backwards.  Equal times keep
    the log's order.
    """
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", no_wrap=True)
    table.add_column()
    dated = began(events)
    rows = []
    for i, event in enumerate(events):
        line = describe_event(event, styles)
        if line is not None:
            rows.append((dated.get(i, _number(event.ts)), i, line))
    for when, _, line in sorted(rows, key=lambda row: (row[0], row[1])):
        table.add_row(Text(_clock(when)), line)
    return table


class TimelineScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    TimelineScreen { align: center middle; }
    TimelineScreen > VerticalScroll { width: 90%; height: 90%; border: round $primary; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("escape,q,t", "dismiss", "close")]

    def __init__(self, agent: Agent, events: list[StoredEvent], styles: dict[AgentState, Style]) -> None:
        super().__init__()
        self.state_styles = styles  # the app's state styles (its theme)
        self.agent = agent
        self.events = events

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text.assemble(("Timeline of ", "bold"), (clean(self.agent.target), "bold")))
            if self.agent.command:
                yield Static(Text(f"command: {clean(self.agent.command)}", style="bold"))
            if self.agent.outcome:
                yield Static(Text(f"last outcome: {clean(self.agent.outcome)}"))
            yield Static("")
            if any(describe_event(e, self.state_styles) is not None for e in self.events):
                yield Static(timeline_table(self.events, self.state_styles))
            else:
                yield Static("Nothing recorded for this agent yet.", classes="dim")
            yield Static("\nEsc to close.", classes="dim")
