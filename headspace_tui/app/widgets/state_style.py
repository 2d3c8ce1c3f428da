"""How a state looks: a glyph and a word (readable without colour), in the theme's colour for it.

The colour comes from the running app's theme (``$state-<state>`` variables,
see app/themes.py); a state that needs you is bold, and reversed where
there is no colour at all (NO_COLOR).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from ...model import AgentState

GLYPHS: dict[AgentState, str] = {
    AgentState.PERMISSION: "▲",
    AgentState.QUESTION: "?",
    AgentState.PLAN: "◆",
    AgentState.INPUT: "✎",
    AgentState.ERROR: "✖",
    AgentState.WORKING: "●",
    AgentState.STARTING: "◌",
    AgentState.IDLE: "○",
    AgentState.EXITED: "■",
    AgentState.UNKNOWN: "·",
}


def current_styles() -> dict[AgentState, Style]:
    """The running app's style per state (plain bold/reverse outside an app, e.g. in a test)."""
    from textual._context import active_app

    from ..themes import state_style

    try:
        app = active_app.get()
    except LookupError:
        return {state: state_style({}, state, no_color=True) for state in AgentState}
    cached = getattr(app, "state_styles", None)
    return cached if cached else {state: state_style(app.theme_variables, state, no_color=app.no_color) for state in AgentState}


def state_text(state: AgentState, styles: dict[AgentState, Style] | None = None) -> Text:
    style = (styles or current_styles())[state]
    return Text(f"{GLYPHS[state]} {state.value}", style=style)
