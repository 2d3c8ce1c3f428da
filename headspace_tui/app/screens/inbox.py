"""The main screen's answers, as an inbox: an answer goes to the service; once its keys went the selection moves on; the final word is one line.

A part the main screen holds and calls down into, with the agent its key
acts on (the screen decides that: its reaction-time guard).  When an
answer did not land after the selection moved on, ``back`` (``-``) returns
to that agent.
"""

from __future__ import annotations

from textual.screen import Screen

from ...api.facade import Facade, Intent, PendingCall, Report
from ...model import Agent
from ...shared.safe_text import clean
from ..widgets.agent_table import AgentTable
from .asking import Asking
from .batch import BatchApproveScreen
from .flash import flash, key_for
from .triage import Triage
from .typing_actions import Typing

BACK_NOTICE_SECONDS = 12.0  # a "not delivered" line that says how to go back stays long enough to be read and acted on


class Inbox:
    """Answers sent, their reports heard, and the selection moved on like an inbox."""

    def __init__(self, screen: Screen, service: Facade, triage: Triage, typing: Typing, asking: Asking) -> None:
        self.screen = screen
        self.service = service
        self.triage = triage
        self.typing = typing
        self.asking = asking  # the calls that may wait on the service: off the UI loop
        self._back_to: str | None = None  # an agent whose answer was not delivered after the inbox moved on from it
        # Per pane: the prompt (its ``request``) last answered from here.  Its row can still show that prompt after the
        # answer's final report (the row's update and the report travel apart): it is no wait to move on to.
        self._answered: dict[str, str] = {}

    @property
    def table(self) -> AgentTable:
        return self.screen.query_one(AgentTable)

    def answer(self, agent: Agent, intent: Intent) -> None:
        """``intent`` to ``agent``, through the service's one answering policy; a refusal in one line."""

        def refused(refusal: str) -> None:
            if refusal:
                self.screen.notify(clean(f"{agent.target}: {refusal}; nothing sent"), severity="warning", markup=False)

        if agent.observation.request:
            self._answered[agent.pane_id] = agent.observation.request
        self.asking.answer(agent, intent.describe(), lambda: self.service.answer(agent, intent), refused)

    def waits(self, agent: Agent) -> bool:
        """Does ``agent``'s row, as it is now, need the user (and not show a prompt already answered from here)?"""
        request = agent.observation.request
        return self.triage.needing(agent) and not (request and self._answered.get(agent.pane_id) == request)

    def approve_all(self, agent: Agent) -> None:
        """Approve every waiting request identical to ``agent``'s, after a list the user confirms."""

        def listed(batch: tuple[list[tuple[Agent, PendingCall]], str]) -> None:
            pairs, reason = batch
            if reason:
                self.screen.notify(clean(f"{agent.target}: {reason}"), severity="warning", markup=False)
                return

            def done(yes: bool | None) -> None:
                if yes:
                    self.asking.ask("approving the batch", lambda: self.service.approve_batch(pairs), lambda line: self.screen.notify(clean(line), markup=False))

            self.screen.app.push_screen(BatchApproveScreen(pairs), done)

        self.asking.ask(f"the batch like {clean(agent.target)}'s", lambda: self.service.batch(agent), listed)

    def reported(self, report: Report) -> None:
        """An answer's progress, as the service reports it.

        Its keys went (``final`` off): the inbox moves on at once, if the
        answer says so, while the pane is still to show what they did.  The
        final word: one line; when the answer did not land and the selection
        has moved on from that agent, the line says how to go back (the
        ``back`` key), and the agent's row says "not delivered".
        """
        if report.move_on:
            self.answered(report.pane_id)
        if not report.final:
            return
        self.typing.reported(report)
        text = clean(report.text)
        table = self.table
        if not report.delivered and report.pane_id != table.selected_pane_id and report.pane_id in table.agents:
            self._back_to = report.pane_id
            self.screen.notify(f"{text} — {key_for(self.screen, 'back')} goes back to it", severity="error", timeout=BACK_NOTICE_SECONDS, markup=False)
            return
        self.screen.notify(text, severity=report.severity, markup=False)  # type: ignore[arg-type]

    def answered(self, pane_id: str) -> None:
        """An answer went: like an inbox, select the next agent that needs you (if the answered one is still selected).

        Not one whose own answer is still on its way: its row may still show
        the prompt just answered (the keys go before Claude redraws).
        """
        table = self.table
        if pane_id != table.selected_pane_id or self.typing.input_mode.active:
            return  # in input mode the selection stays on the pane the keys go to
        needing = [agent for other in table.order if other != pane_id and self.waits(agent := table.agents[other])]
        if not needing:
            return

        def move_on(pending: list[bool]) -> None:
            table = self.table
            if pane_id != table.selected_pane_id or self.typing.input_mode.active:
                return  # the user moved meanwhile (a resident service's answer took a while)
            for agent, on_its_way in zip(needing, pending, strict=True):
                # Its row as it is now: while the service was asked, an answer may have landed and its row moved on.
                now = table.agents.get(agent.pane_id)
                if not on_its_way and now is not None and self.waits(now):
                    table.select(agent.pane_id, by_itself=True)
                    return

        self.asking.ask("answers on their way", lambda: [self.service.answer_pending(agent) for agent in needing], move_on, said=False)

    def back(self) -> None:
        """Back to the agent whose answer did not land after the inbox moved on from it."""
        pane_id, self._back_to = self._back_to, None
        if pane_id is None or not self.table.select(pane_id):
            flash(self.screen, f"{key_for(self.screen, 'back')}: no answer that failed to go back to")
