"""The modals of starting and stopping agents: a folder (and an optional worktree branch), and a yes/no before a pane is killed."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from ...shared.safe_text import clean


class NewAgentScreen(ModalScreen[tuple[str, str] | None]):
    """Where to start Claude: a folder, and a branch for a fresh git worktree (empty: none). Enter starts, Esc cancels."""

    DEFAULT_CSS = """
    NewAgentScreen { align: center middle; }
    NewAgentScreen > Vertical { width: 80%; max-width: 110; height: auto; border: round $primary; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, folder: str) -> None:
        super().__init__()
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text("New agent: claude in a new tmux window", style="bold"))
            yield Input(value=self.folder, placeholder="folder", id="folder")
            yield Input(placeholder="new git worktree on branch… (empty: none)", id="branch")
            yield Label(Text("Enter starts · Tab next field · Esc cancels", style="dim"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        folder = self.query_one("#folder", Input).value
        if folder.strip():
            self.dismiss((folder.strip(), self.query_one("#branch", Input).value.strip()))

    def action_cancel(self) -> None:
        self.dismiss(None)


class KillPaneScreen(ModalScreen[bool]):
    """The last resort of "Stop agent": kill the agent's pane by its id, after the user reads why and says yes."""

    DEFAULT_CSS = """
    KillPaneScreen { align: center middle; }
    KillPaneScreen > Vertical { width: 80%; max-width: 100; height: auto; border: round $error; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("y", "answer(True)", "kill the pane"), Binding("n,escape,q", "answer(False)", "keep it")]

    def __init__(self, target: str, pane_id: str, why: str) -> None:
        super().__init__()
        self.target = target
        self.pane_id = pane_id
        self.why = why

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble(("Kill the pane of ", "bold"), (clean(self.target), "bold"), f" ({clean(self.pane_id)})?"))
            yield Static(Text(clean(self.why, 300)))
            yield Static(Text("\nClaude ends at once, without its own /exit.  y kill the pane · n / Esc keep it", style="dim"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
