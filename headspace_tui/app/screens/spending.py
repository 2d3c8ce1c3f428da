"""The palette's "Spending by day": what each agent spent, day by day, from the event log (service/records/usage_ledger.py)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...shared.safe_text import clean
from ...usage.model import Spent, SpentRow
from ...usage.words import cost_words

DAYS = 14  # how far back the view goes


def spent_cost(spent: Spent) -> str:
    """ "$1.20 est.", with what had no price said beside it."""
    priced = cost_words(spent.cost_usd) if spent.cost_usd or not spent.unpriced else "no estimate"
    return priced + (f" (+{spent.unpriced:,} tokens unpriced)" if spent.unpriced and spent.cost_usd else "")


def spending_table(rows: list[SpentRow]) -> Table:
    """A day's total, then each agent's share of it, newest day first."""
    table = Table(box=None, padding=(0, 2), show_edge=False)
    table.add_column("Day", no_wrap=True)
    table.add_column("Agent")
    table.add_column("Tokens", justify="right", no_wrap=True)
    table.add_column("Cost", no_wrap=True)
    days: dict[str, list[SpentRow]] = {}
    for row in rows:
        days.setdefault(row.day, []).append(row)
    for day, agents in days.items():
        total = sum((r.spent for r in agents), Spent())
        table.add_row(Text(day, style="bold"), Text("all agents", style="bold"), Text(f"{total.tokens.total:,}", style="bold"), Text(spent_cost(total), style="bold"))
        for row in agents:
            table.add_row("", Text(clean(row.agent, 60)), f"{row.spent.tokens.total:,}", spent_cost(row.spent))
    return table


class SpendingScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    SpendingScreen { align: center middle; }
    SpendingScreen > VerticalScroll { width: 90%; height: 90%; border: round $primary; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("escape,q", "dismiss", "close")]

    def __init__(self, rows: list[SpentRow] | None) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text(f"Spending by day (the last {DAYS} days, at list prices; estimates)", style="bold"))
            yield Static("")
            if self.rows is None:
                yield Static("No event log: spending is kept only in it (see docs/usage.md).", classes="dim")
            elif self.rows:
                yield Static(spending_table(self.rows))
            else:
                yield Static("Nothing spent in these days, as far as the agents' own files told headspace.", classes="dim")
            yield Static("\nEsc to close.", classes="dim")
