"""The ``r`` modal: type a reply for the selected agent, kept until it is delivered.

Enter hands the text to ``send`` (the main screen's, which asks the
service, off the UI loop, and hands back its refusal or "").  A refusal at once, or a report later that it was not
delivered, leaves the box open with the text and the reason, ready to send
again or to cancel; the box closes itself only when the reply landed.  Esc
closes it at any time and hands back what is typed (the main screen keeps
it as the agent's draft for the next ``r``), so a reply is never lost.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from ...shared.safe_text import clean


class ReplyScreen(ModalScreen[str | None]):
    """Dismissed with the unsent text (Esc), or None once the reply was delivered."""

    DEFAULT_CSS = """
    ReplyScreen { align: center middle; }
    ReplyScreen > Vertical { width: 80%; max-width: 100; height: auto; border: round $primary; padding: 1 2; background: $surface; }
    ReplyScreen #reason { color: $warning; height: auto; }
    ReplyScreen #reason.-sending { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, target: str, pane_id: str, send: Callable[[str, Callable[[str], None]], None], *, question: str = "", hint: str = "", text: str = "", reason: str = "") -> None:
        super().__init__()
        self.target = target
        self.pane_id = pane_id
        self.send = send
        self.question = question
        self.hint = hint
        self.text = text
        self.reason = reason
        self.sending = ""  # the text on its way, until its report comes

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text.assemble("Reply to ", (clean(self.target), "bold")))
            if self.question:
                yield Label(Text(clean(self.question)), classes="dim")
            if self.hint:
                yield Label(Text(clean(self.hint)), classes="dim")
            yield Input(value=self.text, placeholder="type your answer, Enter to send, Esc to cancel", id="reply")
            reason = Static(Text(clean(self.reason)), id="reason")
            reason.display = bool(self.reason)  # shown once there is something to say
            yield reason

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.sending:
            return  # one at a time: the first is still on its way
        text = event.value
        if not text.strip():
            self.dismiss(None)
            return
        self.sending = text
        self._say("sending…", sending=True)
        self.send(text, self._sent)  # its refusal, "" when it went, comes back to _sent (later, from a resident service)

    def _sent(self, refusal: str) -> None:
        if refusal and self.sending and self.is_running:
            self.sending = ""
            self.refused(refusal)

    def reported(self, delivered: bool, text: str) -> None:
        """How the reply sent from this box went: close when it landed, else keep the text and say why."""
        if not self.sending:
            return
        self.sending = ""
        if delivered:
            self.dismiss(None)
        else:
            self.refused(text)

    def refused(self, reason: str) -> None:
        self._say(f"not sent: {reason}. Enter tries again, Esc keeps the text for later.")
        self.query_one("#reply", Input).focus()

    def _say(self, line: str, *, sending: bool = False) -> None:
        reason = self.query_one("#reason", Static)
        reason.set_class(sending, "-sending")
        reason.display = True
        reason.update(Text(clean(line, 500)))

    def action_cancel(self) -> None:
        self.dismiss(self.query_one("#reply", Input).value or None)
