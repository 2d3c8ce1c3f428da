"""The change a permission would make, under the preview: the file, its +/- counts and the first hunk rows, coloured.

Shown only while Claude's hook holds a file edit whose dialog is on screen
(the row's ``proposed``, made where the agent runs: answering/desk.py), so
the change is read before ``y``, even where the pane is too small to show
Claude's own diff.  Compact: at most ``ROWS`` rows of hunks and about a
third of the terminal's height, the rest counted (``e`` shows it whole).
Hidden otherwise, taking no room, and in a terminal too short for the
preview (headspace.tcss: the table needs those rows).
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...model import Agent, AgentState
from .change_text import change_text, diff_of


class ChangeBox(Static):
    DEFAULT_CSS = """
    ChangeBox { height: auto; max-height: 75%; padding: 0 1; border-top: solid $primary-darken-2; display: none; }
    ChangeBox.-shown { display: block; }
    """

    ROWS = 12  # hunk rows shown at most
    FEWEST = 2  # ... and at least, however short the column

    _shown: Text | None = None

    def show_agent(self, agent: Agent | None) -> None:
        """The change ``agent``'s permission would make, or nothing (hidden); the same text again repaints nothing."""
        diff = diff_of(agent.proposed) if agent is not None and agent.state is AgentState.PERMISSION else None
        text = None
        if diff is not None and agent is not None:
            # About a third of the terminal, whatever the layout (the column's own height is not laid out yet when a row is selected).
            heading = len(diff.files) + (1 if diff.note else 0)
            rows = max(self.FEWEST, min(self.ROWS, self.app.size.height // 3 - heading - 1))
            text = change_text(diff, rows, more="e: all of it", folder=agent.cwd)
        self.set_class(text is not None, "-shown")
        if text is not None and text != self._shown:
            self._shown = text
            self.update(text)


__all__ = ["ChangeBox"]
