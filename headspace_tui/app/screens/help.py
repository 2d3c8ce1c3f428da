"""The ``?`` screen: every key, as currently bound (remapped keys included)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...safe_text import clean

ACTION_HELP = (
    ("approve", "approve: choose the first 'Yes' of a permission or plan"),
    ("deny", "deny: choose the 'No' option (found by its label)"),
    ("reply", "reply with free text at Claude's input box"),
    ("nudge", "nudge an idle agent (the configured text, default 'continue')"),
    ("interrupt", "interrupt a working agent (sends Esc to its pane)"),
    ("jump", "jump to the pane (inside tmux), or print the attach command"),
    ("filter", "filter the table"),
    ("toggle_layout", "preview beside or under the table"),
    ("why", "why: every source's verdict, its age and evidence"),
    ("timeline", "timeline: the agent's states, commands and outcomes"),
    ("help", "this help"),
    ("quit", "quit"),
)


def _key(key: str) -> str:
    return {"escape": "Esc", "enter": "Enter", "slash": "/", "question_mark": "?"}.get(key, key)


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 76; height: auto; max-height: 90%; border: round $primary; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]

    def __init__(self, keys: dict[str, str]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        for action, text in ACTION_HELP:
            table.add_row(Text(clean(_key(self.keys[action]))), Text(text))
        table.add_row(Text("1-9"), Text("pick that option of a numbered menu"))
        table.add_row(Text("↑ ↓"), Text("select an agent"))
        with VerticalScroll():
            yield Static(Text("headspace keys\n", style="bold"))
            yield Static(table)
            yield Static(
                Text(
                    "\nKeys go only to the selected pane, and only if it still shows the prompt you saw."
                    "\nRemap keys in ~/.config/headspace/config.toml under [keys].\n\nEsc to close."
                ),
                classes="dim",
            )
