"""The main screen's header: the summary line (counts, the hosts' problems) and what an empty table says.

A part the main screen holds and calls down into: the screen keeps the
state (its agents in the table, the problem, each host's problem, the
theme's styles); this builds the line and shows it, and says a remote host
newly out of reach once as a notice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from rich.style import Style
from textual.screen import Screen
from textual.widgets import Static

from ...api.facade import Facade
from ...model import Agent, AgentState
from ...shared.safe_text import clean
from ..widgets.agent_table import AgentTable
from ..widgets.summary import SummaryLine, empty_text, summary_text
from .asking import Asking
from .triage import Triage

SPENT_EVERY = 5.0  # seconds between two questions of a resident service for the cost today
WAITED_EVERY = 1.0  # seconds between two questions of a resident service for the waits today (it answers from a copy it keeps for 5 s)


def header_styles(styles: dict[AgentState, Style]) -> dict[str, Style]:
    """The header's colours from the theme (its permission and error states'), so they have the theme's contrast."""
    if not styles:
        return {}
    need, error = styles[AgentState.PERMISSION], styles[AgentState.ERROR]
    return {"need_style": Style(color=need.color, bold=True), "problem_style": Style(color=error.color)}


class Header:
    """The summary line and the empty table's words, on ``screen``."""

    def __init__(self, screen: Screen, service: Facade, triage: Triage, clock: Callable[[], float], asking: Asking) -> None:
        self.screen = screen
        self.service = service
        self.triage = triage
        self.clock = clock
        self.asking = asking  # the calls to the service out now: the header says when one keeps the user waiting
        self._waited: float | None = None  # the waits today, as last answered (a resident service's: asked off the loop)
        self._waited_asked = float("-inf")  # when they were last asked (monotonic), or +inf while asked
        self._spent: float | None = None  # the estimated cost today, as last answered
        self._spent_asked = float("-inf")

    def show(self, problem: str | None, hosts: Sequence[tuple[str, str]], styles: dict[AgentState, Style]) -> None:
        agents = self.screen.query_one(AgentTable).agents
        line = summary_text(agents.values(), problem, self._waited_today(agents), hosts, self.triage.snoozed_panes(), spent_today=self._spent_today(), **header_styles(styles))
        waiting = self.asking.waiting()
        if waiting:
            line.append("  ·  ")
            line.append(waiting, style="bold")
        self.screen.query_one("#summary", SummaryLine).show(line)
        empty = self.screen.query_one("#empty", Static)
        empty.display = not agents
        if not agents:
            empty.update(empty_text(problem))

    def _waited_today(self, agents: dict[str, Agent]) -> float | None:
        """The waits today: asked at once in-process; of a resident service, at most once a second, off the loop (shown from the next line on)."""
        now = self.clock()
        if not self.service.blocking:
            return self.service.waited_today(agents, now)
        if time.monotonic() - self._waited_asked >= WAITED_EVERY:
            self._waited_asked = float("inf")
            asked = dict(agents)

            def answered(seconds: float | None) -> None:
                self._waited, self._waited_asked = seconds, time.monotonic()

            self.asking.ask("waits today", lambda: self.service.waited_today(asked, now), answered, said=False)
        return self._waited

    def _spent_today(self) -> float | None:
        """The estimated cost of today's tokens (service/records/usage_ledger.py): as often as the waits, off the loop for a resident service."""
        now = self.clock()
        if not self.service.blocking:
            found = self.service.spent(now, 0)
            return found[0].cost_usd if found else None
        if time.monotonic() - self._spent_asked >= SPENT_EVERY:
            self._spent_asked = float("inf")

            def answered(found: tuple | None) -> None:
                self._spent, self._spent_asked = (found[0].cost_usd if found else None), time.monotonic()

            self.asking.ask("spent today", lambda: self.service.spent(now, 0), answered, said=False)
        return self._spent

    def hosts_out(self, was: Sequence[tuple[str, str]], now: Sequence[tuple[str, str]]) -> None:
        """A remote host newly out of reach: a notice, in ssh's words (a host still on its first look has no problem)."""
        out = {host for host, text in was if text != "starting"}
        for host, text in now:
            if host != "local" and host not in out and text != "starting":
                self.screen.notify(clean(text, 300), severity="warning", timeout=15, markup=False)
