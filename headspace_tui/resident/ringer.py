"""The service rings with no headspace open: once per wait, to every terminal of the tmux server it watches.

The same decisions as the table's (notifications/decide.py: which states,
one notification per wait, waits gathered, a quiet start), delivered the
way the table delivers to a client it cannot reach by passthrough: the OSC
and the bell written straight to each attached client's terminal, the words
in its status line where the terminal may not show the OSC
(notifications/direct.py), and the configured ``notify_command`` and
desktop notification.  The service has no terminal of its own, so every
client of its server gets it directly.

A snoozed wait is not rung (a client snoozes through the service); one
whose snooze runs out while it still waits is rung again.  While a service
rings, a headspace running on its own (the full-screen table in-process)
leaves the ringing to it (``app/main.py`` asks ``Service.rings_elsewhere``),
so a wait is rung once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace

from ..events import AgentChanged, AgentRemoved, CallBlocked, Event
from ..model import Agent
from ..notifications import deliver, direct
from ..notifications.command import CommandRunner
from ..notifications.decide import Notification, Notifier, osc_sequence, status_text
from ..service.facade import Service
from ..shared.config import Config

log = logging.getLogger(__name__)
SNOOZE_LOOK = 1.0  # seconds between two looks for snoozes that ran out


class Ringer:
    def __init__(self, service: Service, config: Config, socket_file: str, *, clock: Callable[[], float] = time.time, env: dict[str, str] | None = None) -> None:
        self.service = service
        self.mode = config.notify
        self.clock = clock
        # The watched server as the delivery asks for "the server headspace runs in": its socket, no pane of ours.
        self.env = {**(env or {}), "TMUX": f"{socket_file},0,0"}
        self.env.pop("TMUX_PANE", None)
        self.notifier = Notifier(config.notify_states, started=clock())
        self.notify_blocked = config.notify_blocked
        self.command = CommandRunner(config.notify_command, lambda line: log.warning("%s", line)) if config.notify_command else None
        self.notify_send: str | None = None
        if config.desktop_notify and not deliver.desktop_problem(self.env):
            self.notify_send = deliver.notify_send_path(self.env)
        self._wake = asyncio.Event()
        self.rung: list[Notification] = []  # what was rung, newest last (the last few; for the log and a test)
        self.page_link: Callable[[str], str] = lambda address: ""  # the web page of an agent, "" while the page is off (the service sets it)
        service.subscribe(self._event)

    def _event(self, event: Event) -> None:
        if isinstance(event, AgentChanged):
            agent = event.agent
            if self.notifier.observe(agent, self.clock()) is not None:
                if self.service.snooze_of(agent) is not None:
                    self.notifier.snooze(_key(agent))
                self._wake.set()
        elif isinstance(event, CallBlocked):
            if self.notify_blocked and self.notifier.blocked(event.agent, event.block, self.clock()) is not None:
                self._wake.set()
        elif isinstance(event, AgentRemoved):
            self.notifier.forget(event.key or event.pane_id)

    async def run(self) -> None:
        """Ring each due notification when the notifier says, until cancelled."""
        while True:
            self._remind(self.clock())
            when = self.notifier.next_due()
            wait = SNOOZE_LOOK if when is None else max(0.0, min(SNOOZE_LOOK, when - self.clock()))
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)
            note = self.notifier.due(self.clock())
            if note is not None:
                await asyncio.to_thread(self.ring, note)

    def _remind(self, now: float) -> None:
        ended = set(self.service.snoozes_ended(now))
        if not ended:
            return
        for agent in self.service.agents():
            if _key(agent) in ended and self.notifier.remind(agent, now) is not None:
                self._wake.set()

    def ring(self, note: Notification) -> None:
        """One notification out: every client's terminal, the command, the desktop (blocking: off the loop).

        While the web page is served, each carries the page of its (first)
        agent: at the end of the words, and in ``HEADSPACE_URL``.
        """
        link = self.page_link(note.alerts[0].address) if note.alerts and note.alerts[0].address else ""
        if link:
            note = replace(note, body=f"{note.body} {link}".strip(), link=link)
        self.rung = [*self.rung[-9:], note]
        if self.mode != "none":
            sent = direct.to_clients(self.env, osc_sequence(note, self.mode), ring=True, passthrough="", mode=self.mode, text=status_text(note))
            for problem in sent.problems:
                log.warning("%s", problem)
            log.info("rang %s to %d terminal(s)", note.title, len(sent.written))
        if self.command is not None:
            self.command.submit(note)
        if self.notify_send:
            problem = deliver.desktop_notify(note, self.notify_send)
            if problem:
                log.warning("%s", problem)


def _key(agent: Agent) -> str:
    return agent.key or agent.pane_id
