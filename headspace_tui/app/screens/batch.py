"""The ``A`` modal: approve every waiting request identical to the selected one, after reading the list.

Each line is one agent with its folder and the exact command (or file) its
hook handed over, and its host when the batch spans another machine
(``box:alpha:0.0``); nothing that is not listed is approved.  ``y`` approves
them, ``n`` or Esc approves nothing.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...api.facade import PendingCall
from ...model import Agent
from ...shared.safe_text import clean, clean_block


def batch_table(pairs: list[tuple[Agent, PendingCall]]) -> Table:
    table = Table(expand=True, show_edge=False, pad_edge=False)
    table.add_column("agent", style="bold", no_wrap=True)
    table.add_column("folder", no_wrap=True)
    table.add_column("approve exactly")
    remote = any(agent.host != "local" for agent, _ in pairs)
    for agent, call in pairs:
        name = f"{agent.host}:{agent.target}" if remote else agent.target
        table.add_row(Text(clean(name)), Text(clean(call.cwd or agent.cwd, 60)), Text(clean_block(call.describe(), 2000)))
    return table


class BatchApproveScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    BatchApproveScreen { align: center middle; }
    BatchApproveScreen > VerticalScroll { width: 90%; height: auto; max-height: 90%; border: round $warning; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("y", "answer(True)", "approve all"), Binding("n,escape,q", "answer(False)", "cancel")]

    def __init__(self, pairs: list[tuple[Agent, PendingCall]]) -> None:
        super().__init__()
        self.pairs = pairs

    def compose(self) -> ComposeResult:
        tool = self.pairs[0][1].tool_name
        with VerticalScroll():
            yield Static(Text.assemble(("Approve ", "bold"), (f"{len(self.pairs)} identical {clean(tool)} requests", "bold"), " through Claude's hook?"))
            yield Static(batch_table(self.pairs))
            yield Static(Text("\nOnly these exact calls are approved; each agent's own dialog closes.  y approve all · n / Esc cancel", style="dim"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
