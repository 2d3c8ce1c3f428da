"""A remote host's answer channel, on headspace's side: the hooks there, as the desk knows them here.

The hooks wait at the probe (remote/probe_answers.py), which holds their
socket there.  This object gives the answer desk (answering/desk.py) the
same interface as the local ``AnswerChannel`` (``calls``, ``pending``,
``decide``, ``release``, ``start``, ``close``), so its matching rules (same
pane, same Claude process, same tool and exact input on screen) apply
unchanged.  Calls carry the pane's address here (``%3@box``) and an id of
this channel's own; each remembers the probe that holds it and its id there,
so a decision can never reach another probe's call.

* ``start`` asks the host to open the socket there as soon as it knows where
  (the spool of its Claudes' environment) and again on every new probe;
  another headspace holding it there is asked about again every few seconds;
* a pushed request is offered to the desk's ``accept``; a refused one is let
  go there at once;
* while calls wait, a heartbeat (``answer_beat``, every BEAT s) tells the
  probe headspace is still there (it lets them go after SILENCE s without a
  word: a half-open link) and says which calls still wait there;
* when the link or the probe is lost, every call is gone at once (the hooks
  there are let go by the probe, or by their ended connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from ..hooks.calls import PendingCall
from .probe_client import ProbeClient, ProbeError
from .ssh import SshTmuxServer

BEAT = 2.0  # seconds between two heartbeats while calls wait (the probe waits SILENCE = 6 s)
BEAT_WAIT = 4.0  # a heartbeat not answered in this long: the link is as good as gone
RETRY = 5.0  # while another headspace holds the socket there, ask again this often

log = logging.getLogger(__name__)


class AnswerHost(Protocol):
    """What the channel needs of its host (``RemoteHost``, host.py, which makes the channel and so cannot be imported here).

    Its name and tmux (for the pane addresses of pushed calls), where to
    say a problem, and the slot the host keeps its channel in (``start``
    fills it, ``close`` empties it) with a way to open the socket there.
    """

    name: str
    server: SshTmuxServer
    answers: RemoteAnswerChannel | None
    on_notice: Callable[[str], None]

    async def open_answers(self) -> None: ...


class RemoteAnswerChannel:
    def __init__(
        self,
        host: AnswerHost,
        *,
        accept: Callable[[PendingCall], bool],
        on_gone: Callable[[PendingCall], None] = lambda call: None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.host = host
        self.accept = accept
        self.on_gone = on_gone
        self.clock = clock
        self.calls: dict[int, PendingCall] = {}
        self.path = ""  # the socket there, while open
        self._held: dict[int, tuple[ProbeClient, int]] = {}  # our id -> the probe holding the call, and its id there
        self._next_id = 0
        self._open_on: ProbeClient | None = None
        self._said = ""  # the last problem told to the user (said once)
        self._tasks: set[asyncio.Task] = set()
        self._beat: asyncio.Task | None = None
        self._retry: asyncio.Task | None = None
        self.closed = False

    # -- opening and closing ------------------------------------------------------------
    async def start(self) -> None:
        """Hand this channel to the host; the socket there opens once the host knows where (never raises)."""
        self.closed = False
        self.host.answers = self
        await self.host.open_answers()

    async def open_on(self, probe: ProbeClient, spool: str) -> None:
        """Open the socket beside ``spool`` there, through ``probe``; a problem is one line for the user."""
        if self.closed or (self._open_on is probe and probe.running):
            return
        try:
            answer = await probe.call("answer_open", spool=spool)
        except ProbeError as exc:
            self._say(f"answer channel off: {exc}")
            return
        if isinstance(answer, dict) and answer.get("open"):
            self._open_on, self.path = probe, str(answer.get("path", ""))
            if self._said:
                self._say("")
                self.host.on_notice(f"{self.host.name}: answer channel on")
            return
        problem = str(answer.get("problem", "")) if isinstance(answer, dict) else ""
        self._say(problem or "answer channel off: the remote reader could not open it")
        if isinstance(answer, dict) and answer.get("taken") and self._retry is None:
            self._retry = self._spawn(self._ask_again(probe, spool))

    async def _ask_again(self, probe: ProbeClient, spool: str) -> None:
        try:
            while not self.closed and probe.running and self._open_on is not probe:
                await asyncio.sleep(RETRY)
                await self.open_on(probe, spool)
        finally:
            self._retry = None

    def _say(self, problem: str) -> None:
        if problem and problem != self._said:
            self.host.on_notice(f"{self.host.name}: {problem}")
        self._said = problem

    async def close(self) -> None:
        """Let every waiting hook go and close the socket there (Claude's dialogs stay)."""
        self.closed = True
        for call_id in list(self._held):
            self.release(call_id)
        probe, self._open_on = self._open_on, None
        if probe is not None and probe.running:
            self._spawn(self._send(probe, "answer_close"))
        tasks = [t for t in self._tasks if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=2.0)  # the last words to the probe; never waited for long
        for task in tasks:
            task.cancel()
        if self.host.answers is self:
            self.host.answers = None

    # -- from the probe -------------------------------------------------------------------
    def pushed(self, probe: ProbeClient, message: dict[str, Any]) -> None:
        """A request waiting there (``answer``), or a hook that left by itself (``answer_gone``)."""
        remote_id = message.get("call")
        if not isinstance(remote_id, int) or isinstance(remote_id, bool):
            return
        if message.get("push") == "answer_gone":
            mine = next((i for i, (p, r) in self._held.items() if p is probe and r == remote_id), None)
            if mine is not None:
                self._forget(mine)
            return
        record = message.get("record")
        if isinstance(record, dict) and isinstance(record.get("tmux_pane"), str):
            record = {**record, "tmux_pane": self.host.server.address(record["tmux_pane"])}
        arrived = record.get("arrived") if isinstance(record, dict) else None
        self._next_id += 1
        call = PendingCall.from_payload(self._next_id, record, arrived if isinstance(arrived, (int, float)) else self.clock())
        if call is not None and not self.closed:
            self.calls[call.id] = call  # pending before it is accepted, as on this host (hooks/channel.py)
            self._held[call.id] = (probe, remote_id)
        if self.closed or call is None or not self.accept(call):
            if call is not None:
                self.calls.pop(call.id, None)
                self._held.pop(call.id, None)
            self._spawn(self._send(probe, "answer_release", call=remote_id))
            return
        if self._beat is None:
            self._beat = self._spawn(self._heartbeat())

    def link_lost(self) -> None:
        """The probe or the link is gone: so is every call (the hooks there are let go without a decision)."""
        self._open_on, self.path = None, ""
        for call_id in list(self._held):
            self._forget(call_id)

    def _forget(self, call_id: int) -> None:
        self._held.pop(call_id, None)
        call = self.calls.pop(call_id, None)
        if call is not None:
            self.on_gone(call)

    async def _heartbeat(self) -> None:
        """While calls wait: say headspace is here, and forget calls the probe no longer holds."""
        try:
            while self._held:
                await asyncio.sleep(BEAT)
                for probe in {p for p, _ in self._held.values()}:
                    try:
                        waiting = await probe.call("answer_beat", timeout=BEAT_WAIT)
                    except ProbeError:
                        waiting = []  # the probe lets them go after its own silence: so do we
                    there = set(waiting) if isinstance(waiting, list) else set()
                    for mine, (holder, remote_id) in list(self._held.items()):
                        if holder is probe and remote_id not in there:
                            self._forget(mine)
        finally:
            self._beat = None

    # -- the desk's side --------------------------------------------------------------------
    def pending(self, pane_id: str) -> list[PendingCall]:
        return [c for c in self.calls.values() if c.pane_id == pane_id]

    def decide(self, call_id: int, decision: dict[str, Any]) -> bool:
        """Send ``decision`` to the hook there; False when the call is no longer waiting (or the link is gone)."""
        return self._reply(call_id, "answer_decide", decision=decision)

    def release(self, call_id: int) -> bool:
        return self._reply(call_id, "answer_release")

    def _reply(self, call_id: int, op: str, **args: Any) -> bool:
        held = self._held.pop(call_id, None)
        self.calls.pop(call_id, None)
        if held is None or not held[0].running:
            return False
        probe, remote_id = held
        self._spawn(self._send(probe, op, call=remote_id, **args))
        return True

    async def _send(self, probe: ProbeClient, op: str, **args: Any) -> None:
        with contextlib.suppress(ProbeError):
            done = await probe.call(op, timeout=BEAT_WAIT, **args)
            if op == "answer_decide" and done is False:
                log.info("%s: a decision came after the hook had left", self.host.name)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
