"""The change a permission would make, under the preview: the file, its +/- counts and the first hunk rows, coloured.

Shown only while Claude's hook holds a file edit whose dialog is on screen
(the row's ``proposed``, made where the agent runs: answering/desk.py), so
the change is read before ``y``, even where the pane is too small to show
Claude's own diff.  Compact: at most ``ROWS`` rows of hunks, the rest
counted (``e`` shows it whole).  Hidden otherwise, taking no room.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...model import Agent, AgentState
from .change_text import change_text, diff_of


class ChangeBox(Static):
    DEFAULT_CSS = """
    ChangeBox { height: auto; max-height: 16; padding: 0 1; border-top: solid $primary-darken-2; display: none; }
    """

    ROWS = 12  # hunk rows shown (with the heading, the note and "… more" it stays within max-height)

    _shown: Text | None = None

    def show_agent(self, agent: Agent | None) -> None:
        """The change ``agent``'s permission would make, or nothing (hidden); the same text again repaints nothing."""
        diff = diff_of(agent.proposed) if agent is not None and agent.state is AgentState.PERMISSION else None
        text = change_text(diff, self.ROWS, more="e: all of it", folder=agent.cwd) if diff is not None and agent is not None else None
        self.display = text is not None
        if text is not None and text != self._shown:
            self._shown = text
            self.update(text)


__all__ = ["ChangeBox"]
