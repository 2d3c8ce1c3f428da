"""The ``r`` modal: type a reply for the selected agent."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from ...shared.safe_text import clean


class ReplyScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    ReplyScreen { align: center middle; }
    ReplyScreen > Vertical { width: 80%; max-width: 100; height: auto; border: round $primary; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, target: str, question: str = "") -> None:
        super().__init__()
        self.target = target
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text.assemble("Reply to ", (clean(self.target), "bold")))
            if self.question:
                yield Label(Text(clean(self.question)), classes="dim")
            yield Input(placeholder="type your answer, Enter to send, Esc to cancel", id="reply")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value if event.value.strip() else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
