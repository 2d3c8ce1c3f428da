"""How a state looks in the table: colour, glyph and word (readable without colour)."""

from __future__ import annotations

from rich.text import Text

from ...model import AgentState

LOOKS: dict[AgentState, tuple[str, str]] = {
    AgentState.PERMISSION: ("▲", "bold yellow"),
    AgentState.QUESTION: ("?", "bold magenta"),
    AgentState.PLAN: ("◆", "bold cyan"),
    AgentState.INPUT: ("✎", "bold blue"),
    AgentState.ERROR: ("✖", "bold red"),
    AgentState.WORKING: ("●", "green"),
    AgentState.STARTING: ("◌", "cyan"),
    AgentState.IDLE: ("○", "default"),
    AgentState.EXITED: ("■", "dim"),
    AgentState.UNKNOWN: ("·", "dim"),
}


def state_text(state: AgentState) -> Text:
    glyph, style = LOOKS[state]
    return Text(f"{glyph} {state.value}", style=style)
