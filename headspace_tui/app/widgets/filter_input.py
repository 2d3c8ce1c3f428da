"""The ``/`` filter box over the table: hidden until opened, and Esc in it never reaches an agent."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class FilterInput(Input):
    """The filter; Esc clears and closes it (its screen then gives the keys back to the table)."""

    BINDINGS = [Binding("escape", "close", "close filter")]

    class Closed(Message):
        """Esc in the filter: it is empty and hidden again."""

    def on_mount(self) -> None:
        self.hide()

    def open(self) -> None:
        self.display = True
        self.cursor_blink = True
        self.focus()

    def hide(self) -> None:
        self.display = False
        self.cursor_blink = False  # a hidden input must not keep a blink timer busy

    def action_close(self) -> None:
        self.value = ""
        self.post_message(self.Closed())
