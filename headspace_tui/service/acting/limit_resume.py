"""Going on when a rate limit resets: the configured nudge, once, to an agent its limit stopped (off by default).

An agent that reads ``limited`` with a reset time (``Agent.limited_until``)
gets the config's ``nudge_text`` a moment after that time, through the one
answering policy and its guard, as if the user had pressed the nudge key:
never into a draft left in its box, never to a prompt other than the one its
row shows, and only if it still reads limited by the same limit.  One nudge
per limit: a limit read again later (another reset) is another.  With no
reset time (an API key's 429 names none) nothing is sent.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

from ...answering.policy import Intent, IntentKind
from ...events import AgentChanged, AgentRemoved, Event
from ...model import Agent

log = logging.getLogger(__name__)
SAID_KEPT = 20
AFTER_RESET = 5.0  # s after the named reset: its minute is the limit's, and clocks differ a little


class LimitResume:
    """Schedules, per limited agent, one nudge at its reset."""

    def __init__(self, agent: Callable[[str], Agent | None], answer: Callable[[Agent, Intent], str], text: str, clock: Callable[[], float]) -> None:
        self.agent = agent  # the agent as the service has it now, by pane address
        self.answer = answer
        self.text = text
        self.clock = clock
        self._timers: dict[str, tuple[float, asyncio.TimerHandle]] = {}  # per pane: the limit's reset, and its nudge's timer
        self._sent: dict[str, float] = {}  # per pane: the reset last nudged (one per pane, gone with it)
        self.said: deque[str] = deque(maxlen=SAID_KEPT)  # what the last nudges came to (the log has them all; for a test)

    def on_event(self, event: Event) -> None:
        if isinstance(event, AgentRemoved):
            self._cancel(event.pane_id)
            self._sent.pop(event.pane_id, None)
        elif isinstance(event, AgentChanged):
            agent = event.agent
            until = agent.limit_reset or 0.0
            held = self._timers.get(agent.pane_id)
            if held is not None and held[0] == until:
                return
            self._cancel(agent.pane_id)
            if until and self._sent.get(agent.pane_id) != until:
                delay = max(0.0, until + AFTER_RESET - self.clock())
                self._timers[agent.pane_id] = (until, asyncio.get_running_loop().call_later(delay, self._due, agent.pane_id, until))

    def _cancel(self, pane_id: str) -> None:
        held = self._timers.pop(pane_id, None)
        if held is not None:
            held[1].cancel()

    def _due(self, pane_id: str, until: float) -> None:
        self._timers.pop(pane_id, None)
        agent = self.agent(pane_id)
        if agent is None or agent.limit_reset != until:
            return  # it went on (or went) by itself meanwhile
        self._sent[pane_id] = until
        refusal = self.answer(agent, Intent(IntentKind.NUDGE, text=self.text))
        said = f"{agent.target}: its rate limit reset: " + (f"{self.text!r} sent" if not refusal else f"nothing sent ({refusal})")
        self.said.append(said)
        log.info("%s", said)

    def close(self) -> None:
        for pane_id in list(self._timers):
            self._cancel(pane_id)
