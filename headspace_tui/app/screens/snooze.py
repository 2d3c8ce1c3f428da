"""The ``z`` chooser: how long to put an agent's wait off.

A few fixed lengths and "until it changes", picked with its number key or
the arrows and Enter; Esc puts nothing off.  It answers with seconds
(``UNTIL_IT_CHANGES`` for the last), or None.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...notifications.snooze import UNTIL_IT_CHANGES
from ...shared.safe_text import clean

CHOICES: tuple[tuple[str, float], ...] = (
    ("5 minutes", 5 * 60.0),
    ("15 minutes", 15 * 60.0),
    ("1 hour", 3600.0),
    ("until it changes", UNTIL_IT_CHANGES),
)


class SnoozeScreen(ModalScreen[float | None]):
    DEFAULT_CSS = """
    SnoozeScreen { align: center middle; }
    SnoozeScreen > Vertical { width: 52; max-width: 100%; height: auto; border: round $primary; padding: 0 1; background: $surface; }
    SnoozeScreen OptionList, SnoozeScreen OptionList:focus { height: auto; border: none; padding: 0; }
    """
    BINDINGS = [
        Binding("escape,q,z", "dismiss(None)", "cancel"),
        *[Binding(str(n), f"choose({n - 1})", show=False) for n in range(1, len(CHOICES) + 1)],
    ]

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble("Snooze ", (clean(self.target, 60), "bold"), "'s wait:"))
            yield OptionList(*[Option(Text(f"{n}  {label}"), id=str(n - 1)) for n, (label, _) in enumerate(CHOICES, 1)])
            yield Static(Text("It stays in the table, greyed, and rings again when the time is up or a new wait starts. Esc: cancel", style="dim"))

    def action_choose(self, index: int) -> None:
        self.dismiss(CHOICES[index][1])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(CHOICES[int(event.option.id or 0)][1])
