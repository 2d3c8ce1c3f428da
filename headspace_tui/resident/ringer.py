"""The service rings: once per wait, to every terminal of the tmux server it watches, in both modes.

The one ringer: a resident service runs it (``headspace serve``), and so
does the service a headspace runs in its own process (``--no-service``,
beside the same ``Service``: transport.py ``InProcess``).  The decisions
are notifications/decide.py's (which states, one notification per wait,
waits gathered, a quiet start); the delivery is the one for a client it
cannot reach by passthrough: the OSC and the bell written straight to each
attached client's terminal, the words in its status line where the
terminal may not show the OSC (notifications/direct.py), and the configured
``notify_command`` and desktop notification.  Each ring is told to the
front ends as a ``Rung`` event: one whose own terminal is none of those
clients (outside tmux) says it there.

A snoozed wait is not rung (a snooze made after the wait was seen drops
what was about to be said); one whose snooze runs out while it still
waits is rung again.  The ringer of a service in a front end's own process
leaves the ringing to a resident service of the same tmux server
(``elsewhere``: ``Service.rings_elsewhere``, asked before each ring), so a
wait is rung once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import replace

from ..events import AgentChanged, AgentRemoved, CallBlocked, Event, Notice, Rung
from ..model import Agent
from ..notifications import deliver, direct
from ..notifications.command import CommandRunner
from ..notifications.decide import Notification, Notifier, osc_sequence, status_text
from ..notifications.snooze import Snooze
from ..service.facade import Service
from ..shared.config import Config

log = logging.getLogger(__name__)
SNOOZE_LOOK = 1.0  # seconds between two looks for snoozes that ran out
TMUX_ANSWER = 15.0  # seconds a ring waits for one tmux command (the service's own wait, then a forked client's)


class Ringer:
    def __init__(
        self,
        service: Service,
        config: Config,
        socket_file: str,
        *,
        clock: Callable[[], float] = time.time,
        env: dict[str, str] | None = None,
        elsewhere: Callable[[], bool] = lambda: False,
    ) -> None:
        self.service = service
        self.mode = config.notify
        self.clock = clock
        self.socket_file = socket_file
        self.elsewhere = elsewhere  # a resident service rings this server's waits (asked from a thread, before each ring)
        # The watched server as the delivery asks for "the server headspace runs in": its socket, no pane of ours.
        self.env = {**(env or {}), "TMUX": f"{socket_file},0,0"}
        self.env.pop("TMUX_PANE", None)
        self.notifier = Notifier(config.notify_states, started=clock())
        self.notify_blocked = config.notify_blocked
        self.command = CommandRunner(config.notify_command, self._say) if config.notify_command else None
        self.notify_send: str | None = None
        if config.desktop_notify and not deliver.desktop_problem(self.env):
            self.notify_send = deliver.notify_send_path(self.env)
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None  # the service's, once running: a problem found in a thread is told from it
        self._told_direct = False  # a terminal that could not be written to is said once (the rest in the log)
        self.rung: list[Notification] = []  # what was rung, newest last (the last few; for the log and a test)
        self._snoozes: dict[str, Snooze] = {}  # the service's snoozes at the last look: one gone when its time was up ran out
        self.page_link: Callable[[str], str] = lambda address: ""  # the web page of an agent, "" while the page is off (the service sets it)
        self.also: Callable[[Notification], None] = lambda note: None  # each ring, on the loop, to the page's phones too (web/push.py; the service sets it)
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
        """Ring each due notification when the notifier says, until cancelled; an error in one pass is logged and the next pass goes on."""
        self._loop = asyncio.get_running_loop()
        while True:
            when = self.notifier.next_due()
            wait = SNOOZE_LOOK if when is None else max(0.0, min(SNOOZE_LOOK, when - self.clock()))
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)
            try:
                await self._ring_due()
            except Exception:
                log.exception("ringing failed; the next wait is rung as usual")
                await asyncio.sleep(SNOOZE_LOOK)  # never a busy loop on an error that repeats

    async def _ring_due(self) -> None:
        note = self.due(self.clock())
        if note is None:
            return
        if await asyncio.to_thread(self.elsewhere):
            log.info("not rung here: the resident service of this tmux server rings it (%s)", note.title)
            return
        rung = await asyncio.to_thread(self.ring, note)
        self.service.tell(Rung(rung.title, rung.body, rung.link, self.socket_file))
        self.also(note)

    def _say(self, line: str) -> None:
        """A problem of the delivery (a notify_command that failed, a terminal not written to), from any thread: one line on every front end (logged where found)."""
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is left to tell
            loop.call_soon_threadsafe(self.service.tell, Notice(line))

    def due(self, now: float) -> Notification | None:
        """What is to be rung at ``now``, the snoozes looked at first: one made while this waited drops what it put off."""
        self._remind(now)
        return self.notifier.due(now)

    def _remind(self, now: float) -> None:
        """Snoozes on now drop what was about to be said of their waits; one that ran out (whoever ended it) says its wait again."""
        self.service.snoozes_ended(now)  # the snoozes whose time is up end now, if no front end ended them first
        snoozes = self.service.snoozes()
        ran_out = {key for key, snooze in self._snoozes.items() if key not in snoozes and snooze.until <= now}
        self._snoozes = snoozes
        for key in snoozes:
            self.notifier.snooze(key)
        if not ran_out:
            return
        for agent in self.service.agents():
            if _key(agent) in ran_out and self.notifier.remind(agent, now) is not None:
                self._wake.set()

    def _tmux(self) -> direct.Run | None:
        """How the ring (in its thread) asks tmux: the service, on its loop, through a control client it has attached."""
        return direct.asked_on(self._loop, self.service.tmux_run, TMUX_ANSWER) if self._loop is not None else None

    def ring(self, note: Notification) -> Notification:
        """One notification out: every client's terminal, the command, the desktop (blocking: off the loop); what was rung.

        While the web page is served, each carries the page of its (first)
        agent: at the end of the words, and in ``HEADSPACE_URL``.
        """
        link = self.page_link(note.alerts[0].address) if note.alerts and note.alerts[0].address else ""
        if link:
            note = replace(note, body=f"{note.body} {link}".strip(), link=link)
        self.rung = [*self.rung[-9:], note]
        if self.mode != "none" and os.path.exists(self.socket_file):  # no server here (a view of remote hosts only): no client to reach
            sent = direct.to_clients(self.env, osc_sequence(note, self.mode), ring=True, passthrough="", mode=self.mode, text=status_text(note), run=self._tmux())
            for problem in sent.problems:
                log.warning("%s", problem)
            if sent.problems and not self._told_direct:
                self._told_direct = True
                self._say(f"{sent.problems[0]}: that terminal gets only what tmux passes on (said once; more in the log)")
            log.info("rang %s to %d terminal(s)", note.title, len(sent.written))
        if self.command is not None:
            self.command.submit(note)
        if self.notify_send:
            problem = deliver.desktop_notify(note, self.notify_send)
            if problem:
                log.warning("%s", problem)
        return note


def _key(agent: Agent) -> str:
    return agent.key or agent.pane_id
