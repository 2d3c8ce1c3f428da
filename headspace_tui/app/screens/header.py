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

SPENT_EVERY = 5.0  # seconds between two questions of the service for the cost today
WAITED_EVERY = 1.0  # seconds between two questions of the service for the waits today (the journal answers from a copy it keeps for 5 s)


def header_styles(styles: dict[AgentState, Style]) -> dict[str, Style]:
    """The header's colours from the theme (its permission and error states'), so they have the theme's contrast."""
    if not styles:
        return {}
    need, error = styles[AgentState.PERMISSION], styles[AgentState.ERROR]
    return {"need_style": Style(color=need.color, bold=True), "problem_style": Style(color=error.color)}


def _who_waits(agents: dict[str, Agent]) -> frozenset[str]:
    """The panes that need you: the waits today change with them (a working agent's churn does not), so they are asked again when these do."""
    return frozenset(pane for pane, agent in agents.items() if agent.state.needs_you)


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
        self._waited_for: frozenset[str] = frozenset()  # the panes that needed you when they were asked
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
        """The waits today: asked of the service off the loop, at most once every ``WAITED_EVERY``, and again when who waits changed.

        The answer is drawn when it comes, so the total follows the rows
        within one question, never a timer's tick behind them.
        """
        now = self.clock()
        waiting = _who_waits(agents)
        if self._waited_asked != float("inf") and (time.monotonic() - self._waited_asked >= WAITED_EVERY or waiting != self._waited_for):
            self._waited_asked, self._waited_for = float("inf"), waiting
            asked = dict(agents)

            def answered(seconds: float | None) -> None:
                was, self._waited, self._waited_asked = self._waited, seconds, time.monotonic()
                if seconds != was or self._waited_for != _who_waits(self.screen.query_one(AgentTable).agents):
                    self.asking.changed()  # drawn now (and asked again if who waits changed meanwhile)

            self.asking.ask("waits today", lambda: self.service.waited_today(asked, now), answered, said=False)
        return self._waited

    def _spent_today(self) -> float | None:
        """The estimated cost of today's tokens (service/records/usage_ledger.py): asked as often as the waits, off the loop."""
        now = self.clock()
        if time.monotonic() - self._spent_asked >= SPENT_EVERY:
            self._spent_asked = float("inf")

            def answered(found: tuple | None) -> None:
                was, self._spent, self._spent_asked = self._spent, (found[0].cost_usd if found else None), time.monotonic()
                if self._spent != was:
                    self.asking.changed()

            self.asking.ask("spent today", lambda: self.service.spent(now, 0), answered, said=False)
        return self._spent

    def hosts_out(self, was: Sequence[tuple[str, str]], now: Sequence[tuple[str, str]]) -> None:
        """A remote host newly out of reach: a notice, in ssh's words (a host still on its first look has no problem)."""
        out = {host for host, text in was if text != "starting"}
        for host, text in now:
            if host != "local" and host not in out and text != "starting":
                self.screen.notify(clean(text, 300), severity="warning", timeout=15, markup=False)
