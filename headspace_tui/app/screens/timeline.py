"""The ``t`` screen: one agent's history — state changes, commands, outcomes — from the event log."""

from __future__ import annotations

import datetime as dt

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...model import Agent, AgentState
from ...state.eventlog import StoredEvent
from ..widgets.state_style import state_text


def describe_event(event: StoredEvent) -> Text | None:
    """One line for one event, or None for events the timeline does not show."""
    p = event.payload
    if event.kind == "agent_state":
        try:
            to = AgentState(p.get("to"))
        except ValueError:
            return None
        line = Text("state → ")
        line.append_text(state_text(to))
        if p.get("source"):
            line.append(f"  ({p['source']}: {p.get('rule', '')})", style="dim")
        return line
    if event.kind == "state_transition":
        line = Text(f"command {p.get('from')} → {p.get('to')}", style="cyan")
        line.append(f"  ({p.get('intent')}, {p.get('confidence', 0):.2f})", style="dim")
        return line
    if event.kind == "agent_inactive":
        return Text(f"Claude ended with its command {p.get('state')}", style="yellow")
    if event.kind == "command_abandoned":
        return Text("command abandoned for a new one", style="yellow")
    if event.kind == "outcome":
        style = "red" if p.get("outcome") in ("error", "tests_failed") else "green"
        return Text(f"{p.get('outcome', '').replace('_', ' ')}: {p.get('detail', '')}", style=style)
    if event.kind == "transition_rejected":
        return Text(f"rejected {p.get('actor')} {p.get('intent')} in {p.get('from')}", style="dim")
    return None


def timeline_table(events: list[StoredEvent]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", no_wrap=True)
    table.add_column()
    for event in events:
        line = describe_event(event)
        if line is not None:
            table.add_row(dt.datetime.fromtimestamp(event.ts).strftime("%H:%M:%S"), line)
    return table


class TimelineScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    TimelineScreen { align: center middle; }
    TimelineScreen > VerticalScroll { width: 90%; height: 90%; border: round $primary; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("escape,q,t", "dismiss", "close")]

    def __init__(self, agent: Agent, events: list[StoredEvent]) -> None:
        super().__init__()
        self.agent = agent
        self.events = events

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text.assemble(("Timeline of ", "bold"), (self.agent.target, "bold")))
            if self.agent.command:
                yield Static(Text(f"command: {self.agent.command}", style="bold"))
            if self.agent.outcome:
                yield Static(Text(f"last outcome: {self.agent.outcome}"))
            yield Static("")
            if any(describe_event(e) is not None for e in self.events):
                yield Static(timeline_table(self.events))
            else:
                yield Static("Nothing recorded for this agent yet.", classes="dim")
            yield Static("\nEsc to close.", classes="dim")
