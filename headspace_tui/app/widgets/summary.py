"""The summary line at the top, and what the table says when it is empty.

Pure text builders, and one widget that repaints only when its line reads
differently (a repaint sends the whole line to the terminal, over ssh too).
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.widgets import Static

from ...model import Agent, AgentState
from ...shared.safe_text import clean, safe
from .agent_table import elapsed


def summary_text(agents: Iterable[Agent], problem: str | None, waited_today: float | None) -> Text:
    """``headspace  7 agents · 3 need you · 2 working · waited on you today: 4m``, or the hosts' problem.

    The total is the sum of the waits the rows show (those closed today and
    those still open, each from the same claim: detect/clock.py), to the
    minute: a header ticking every second would be one more line sent to the
    terminal each second (tests/ui/test_repaint.py).
    """
    if problem and problem != "starting":
        return Text.assemble(("headspace", "bold"), "  ", safe(problem, "red"))
    agents = list(agents)
    needing = sum(1 for a in agents if a.state.needs_you)
    working = sum(1 for a in agents if a.state is AgentState.WORKING)
    waited = f"  ·  waited on you today: {elapsed(waited_today, precise=False)}" if waited_today is not None else ""
    return Text.assemble(
        ("headspace", "bold"),
        f"  {len(agents)} agent{'s' if len(agents) != 1 else ''}  ·  ",
        (f"{needing} need{'s' if needing == 1 else ''} you", "bold yellow"),
        f"  ·  {working} working{waited}",
    )


def empty_text(problem: str | None) -> Text:
    """What an empty table says: still looking, why nothing can be watched, or how to start an agent."""
    if problem == "starting":
        return Text("Looking for Claude Code agents…")
    if problem:
        return Text(f"{clean(problem)}.\nStart tmux, or point headspace at a server with -L NAME / -S PATH.")
    return Text("No Claude Code agents found.\nStart `claude` in a tmux pane; it shows up here within seconds.")


class SummaryLine(Static):
    """One line that repaints only when it reads differently."""

    _shown: Text | None = None

    def show(self, text: Text) -> None:
        if text != self._shown:
            self._shown = text
            self.update(text)
