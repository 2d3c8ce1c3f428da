"""The main screen's header: the summary line (counts, the hosts' problems) and what an empty table says.

A part the main screen holds and calls down into: the screen keeps the
state (its agents in the table, the problem, each host's problem, the
theme's styles); this builds the line and shows it, and says a remote host
newly out of reach once as a notice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.style import Style
from textual.screen import Screen
from textual.widgets import Static

from ...model import AgentState
from ...service.facade import Facade
from ...shared.safe_text import clean
from ..widgets.agent_table import AgentTable
from ..widgets.summary import SummaryLine, empty_text, summary_text
from .triage import Triage


def header_styles(styles: dict[AgentState, Style]) -> dict[str, Style]:
    """The header's colours from the theme (its permission and error states'), so they have the theme's contrast."""
    if not styles:
        return {}
    need, error = styles[AgentState.PERMISSION], styles[AgentState.ERROR]
    return {"need_style": Style(color=need.color, bold=True), "problem_style": Style(color=error.color)}


class Header:
    """The summary line and the empty table's words, on ``screen``."""

    def __init__(self, screen: Screen, service: Facade, triage: Triage, clock: Callable[[], float]) -> None:
        self.screen = screen
        self.service = service
        self.triage = triage
        self.clock = clock

    def show(self, problem: str | None, hosts: Sequence[tuple[str, str]], styles: dict[AgentState, Style]) -> None:
        agents = self.screen.query_one(AgentTable).agents
        self.screen.query_one("#summary", SummaryLine).show(
            summary_text(agents.values(), problem, self.service.waited_today(agents, self.clock()), hosts, self.triage.snoozed_panes(), **header_styles(styles))
        )
        empty = self.screen.query_one("#empty", Static)
        empty.display = not agents
        if not agents:
            empty.update(empty_text(problem))

    def hosts_out(self, was: Sequence[tuple[str, str]], now: Sequence[tuple[str, str]]) -> None:
        """A remote host newly out of reach: a notice, in ssh's words (a host still on its first look has no problem)."""
        out = {host for host, text in was if text != "starting"}
        for host, text in now:
            if host != "local" and host not in out and text != "starting":
                self.screen.notify(clean(text, 300), severity="warning", timeout=15, markup=False)
