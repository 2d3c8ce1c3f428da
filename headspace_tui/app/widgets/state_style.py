"""How a state looks: a glyph and a word (readable without colour), in the theme's colour for it.

The style comes from the running app's theme (``$state-<state>`` variables,
turned into one style per state by ``app.themes.state_style``): a state that
needs you is bold, and reversed where there is no colour at all (NO_COLOR).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from ...model import STATE_GLYPHS, AgentState

GLYPHS = STATE_GLYPHS


def state_text(state: AgentState, styles: dict[AgentState, Style]) -> Text:
    """``styles``: the app's ``state_styles``, made from its theme each time the theme changes."""
    return Text(f"{GLYPHS[state]} {state.value}", style=styles.get(state, ""))
