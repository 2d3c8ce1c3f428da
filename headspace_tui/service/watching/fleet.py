"""Every host's monitor behind one face: the local tmux server and each remote host.

Each host has its own ``Monitor`` (its own detectors, store and problems);
the app talks to the fleet, which sends each request to the monitor that
owns the pane.  Pane addresses are unique across hosts (``%3`` here,
``%3@box`` there, ``@box`` for a host never reached), so the owner is read
off the address, and a key meant for one host's ``%3`` can never go to
another's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ...answering.desk import AnswerDesk
from ...model import LOCAL_HOST, PaneAddress
from ...tmux.control import ControlClient, ControlError
from ...tmux.server import PaneRecord, TmuxCommandError
from .monitor import Monitor
from .pane_watch import PaneWatch
from .sleep_watch import LOOK_EVERY, SleepWatch

log = logging.getLogger(__name__)


def host_of(address: str) -> str:
    """The host a pane address belongs to: ``%3`` → local, ``%3@box`` and ``@box`` → box."""
    return PaneAddress.parse(address).host


class Fleet:
    def __init__(self, monitors: list[Monitor], on_problem: Callable[[str | None, tuple[tuple[str, str], ...]], None] = lambda problem, hosts: None) -> None:
        if not monitors:
            raise ValueError("a fleet needs at least one host")
        self.monitors = {m.host.name: m for m in monitors}
        self._problems: dict[str, str] = {name: "starting" for name in self.monitors}
        self.on_problem = on_problem  # the fleet's problem, in one line, and each host's
        self._focused: str | None = None

    @property
    def first(self) -> Monitor:
        """The local monitor when there is one (replayed panes, tests), else the first host's."""
        return self.local or next(iter(self.monitors.values()))

    @property
    def local(self) -> Monitor | None:
        """This machine's monitor (None: a view of remote hosts only)."""
        return self.monitors.get(LOCAL_HOST)

    def monitor_for(self, address: str) -> Monitor | None:
        return self.monitors.get(host_of(address))

    def problem(self, host: str) -> str | None:
        """``host``'s problem now (None when all is well)."""
        return self._problems.get(host)

    def problem_of(self, host: str, problem: str | None) -> None:
        """One host's problem changed: tell the app the fleet's, in one line, and each host's.

        ``starting`` until every host has reported once; then each host's
        problem (a remote one names its host), or None when all are well,
        with each host still on its first look as (host, "starting") among
        the hosts: the counts leave out its agents, and the header says so.
        """
        if problem is None:
            self._problems.pop(host, None)
        else:
            self._problems[host] = problem
        if len(self._problems) == len(self.monitors) and all(p == "starting" for p in self._problems.values()):
            self.on_problem("starting", ())
            return
        problems = [(name, p) for name, p in self._problems.items() if p != "starting"]
        looking = [(name, p) for name, p in self._problems.items() if p == "starting"]
        self.on_problem("; ".join(p for _, p in problems) if problems else None, tuple(problems + looking))

    # -- running ---------------------------------------------------------------------
    async def run(self) -> None:
        remote = [m for m in self.monitors.values() if m.host.remote]
        sleeps = asyncio.create_task(self._watch_sleep(remote)) if remote else None
        try:
            await asyncio.gather(*(m.run() for m in self.monitors.values()))
        finally:
            if sleeps is not None:
                sleeps.cancel()
                await asyncio.gather(sleeps, return_exceptions=True)

    @staticmethod
    async def _watch_sleep(remote: list[Monitor]) -> None:
        """One look a second at whether this machine slept (sleep_watch.py): a machine's fact, told to every remote host."""
        watch = SleepWatch()
        while True:
            await asyncio.sleep(LOOK_EVERY)
            slept = watch.slept()
            if slept:
                log.info("this machine slept %.0f s; reconnecting %d remote host(s)", slept, len(remote))
                for monitor in remote:
                    monitor.woke(slept)

    async def stop(self) -> None:
        await asyncio.gather(*(m.stop() for m in self.monitors.values()))

    # -- one pane --------------------------------------------------------------------
    def watch(self, address: str) -> PaneWatch | None:
        monitor = self.monitor_for(address)
        return monitor.panes.get(address) if monitor is not None else None

    def client(self, address: str) -> ControlClient | None:
        watch = self.watch(address)
        monitor = self.monitor_for(address)
        if watch is None or monitor is None:
            return None
        client = monitor.client(watch.record.session_id)
        if client is None or client.closed:
            client = monitor.attached()  # every command names its pane: a session without a client of its own (beyond the cap) asks through another
        return client

    @property
    def focused(self) -> str | None:
        return self._focused

    @focused.setter
    def focused(self, address: str | None) -> None:
        """The previewed pane: its host's monitor reads it at the preview's pace; every other host has none."""
        self._focused = address
        owner = self.monitor_for(address) if address else None
        for monitor in self.monitors.values():
            monitor.focused = address if monitor is owner else None

    def refresh_soon(self, address: str) -> None:
        monitor = self.monitor_for(address)
        if monitor is not None:
            monitor.refresh_soon(address)

    def mark(self, address: str, delivery: str) -> None:
        monitor = self.monitor_for(address)
        if monitor is not None:
            monitor.mark(address, delivery)

    def renew(self, address: str, request: str) -> None:
        monitor = self.monitor_for(address)
        if monitor is not None:
            monitor.renew(address, request)

    def desk(self, address: str) -> AnswerDesk | None:
        """The answer desk of the host that owns ``address``."""
        monitor = self.monitor_for(address)
        return monitor.desk if monitor is not None else None

    def desks(self) -> list[AnswerDesk]:
        """Every host's answer desk (a batch approval spans hosts), this machine's first."""
        return [m.desk for m in self.monitors.values()]

    def server_key(self, address: str) -> str:
        monitor = self.monitor_for(address)
        return monitor.server.key if monitor is not None else ""


class ControlPaneIO:
    """The guarded answers' view of tmux, for the app: no forks where a control client exists.

    Captures, keys and the pane record (copy mode, current command, once per
    answer) go through the pane's own host's control client on this loop;
    only a pane whose session has no control client (yet) is read by a
    forked ``display-message`` (through ssh for a remote host), in a thread.
    A pane of a host the fleet does not have is refused.
    """

    WAIT = 10.0  # seconds for tmux to answer through a control client

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet

    def _server(self, address: str):
        monitor = self.fleet.monitor_for(address)
        if monitor is None:
            raise TmuxCommandError(f"no host for pane {address}")
        return monitor.server

    async def _through(self, coroutine):
        try:
            return await asyncio.wait_for(coroutine, self.WAIT)
        except ControlError as exc:
            raise TmuxCommandError(str(exc)) from None
        except TimeoutError:
            raise TmuxCommandError("tmux did not answer through the control client in time") from None

    async def pane(self, pane_id: str) -> PaneRecord:
        server, client = self._server(pane_id), self.fleet.client(pane_id)
        if client is None:
            return await asyncio.to_thread(server.pane, pane_id)
        return server.pane_read(pane_id, "\n".join(await self._through(client.command(*server.pane_query(pane_id)))))

    async def capture(self, pane_id: str, ansi: bool = True, history: int = 0) -> str:
        client = self.fleet.client(pane_id)
        if client is None:
            return await asyncio.to_thread(self._server(pane_id).capture, pane_id, ansi, history)
        return await self._through(client.capture(pane_id, ansi, history))

    async def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None:
        client = self.fleet.client(pane_id)
        if client is None:
            server = self._server(pane_id)
            await asyncio.to_thread(lambda: server.send_keys(pane_id, *keys, literal=literal))
            return
        await self._through(client.send_keys(pane_id, *keys, literal=literal))
