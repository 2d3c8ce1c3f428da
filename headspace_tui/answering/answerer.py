"""The answering policy, for every front end: one answer at a time per agent, by hook or by keys, reported.

A front end turns a key into an ``Intent`` and hands it here with the
agent; it gets back "" (the answer is on its way) or one line saying why
nothing was sent.  How it went arrives later as a ``Report`` to the
subscribers, on the same loop.  The rules, which used to live in the app:

* one answer at a time per agent: a second key while the first is on its
  way (a double tap) is refused, not queued;
* after a delivered answer, keys for that agent wait for a new observation,
  so the next key is judged against the next prompt, never the answered one;
* a prompt on display for less than a human's reaction time cannot be the
  one the user meant: it is shown, not answered;
* where Claude's answer hook holds exactly the dialog on screen and the
  intent fits, the answer goes through the hook (the pane is then watched
  until it shows Claude moved on, as after keys); otherwise the guarded
  send types the keys (``keys.send_guarded``);
* a delivered answer (not an interrupt) says ``move_on``: an inbox goes to
  the next agent that needs you.  That is decided from the answer itself,
  never from whether the next observation happened to arrive first.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..detect.families import UnknownFamily, family_named
from ..hooks.calls import QUESTION_TOOL, PendingCall, hook_answer
from ..model import Agent, Channel, Observation
from ..tmux.server import TmuxCommandError, TmuxUnavailable
from .desk import AnswerDesk
from .keys import ActionError, Outcome, PaneIO, confirm_moved_on, send_guarded
from .policy import REACTION_TIME, Intent, IntentKind

log = logging.getLogger(__name__)

_NOTHING = object()


class Routes(Protocol):
    """Where a pane's answers go (the fleet: each pane's own host)."""

    def desk(self, address: str) -> AnswerDesk | None: ...
    def desks(self) -> list[AnswerDesk]: ...
    def mark(self, address: str, delivery: str) -> None: ...
    def refresh_soon(self, address: str) -> None: ...
    def server_key(self, address: str) -> str: ...


@dataclass(frozen=True)
class Report:
    """How one answer went, in one line for the user."""

    pane_id: str
    text: str
    severity: str  # "information", "warning" or "error" (a front end's notification levels)
    delivered: bool
    move_on: bool = False  # an answer landed: an inbox selects the next agent that needs you


class Answerer:
    def __init__(self, routes: Routes, io: PaneIO, *, clock: Callable[[], float], confirm_timeout: float) -> None:
        self.routes = routes
        self.io = io
        self.clock = clock
        self.confirm_timeout = confirm_timeout
        # Per pane: None while an answer is on its way; after a delivered one,
        # the observation it answered (keys wait for a newer one).
        self._in_flight: dict[str, Observation | None] = {}
        self._subscribers: list[Callable[[Report], None]] = []
        self._tasks: set[asyncio.Task] = set()

    def subscribe(self, subscriber: Callable[[Report], None]) -> None:
        self._subscribers.append(subscriber)

    def busy(self, pane_id: str) -> bool:
        """An answer to ``pane_id`` is on its way or waits to see what it did."""
        return pane_id in self._in_flight

    # -- may an answer go now? ----------------------------------------------------------
    def refusal(self, agent: Agent, *, typed: bool = False) -> str:
        """Why an answer to ``agent`` must not go now, or "".

        ``typed``: a reply typed in a box, against the prompt shown when the
        box opened; the typing itself took longer than a reaction time.
        """
        if agent.offline:
            return f"{agent.host} is out of reach ({agent.offline})"
        pending = self._in_flight.get(agent.pane_id, _NOTHING)
        if pending is not _NOTHING:
            if pending is None:
                return "a key is already on its way"
            if agent.observation is pending:
                return "waiting to see what the last key did"
            del self._in_flight[agent.pane_id]
        if not typed and agent.observation.prompt is not None and self.clock() - agent.prompt_since < REACTION_TIME:
            return "the prompt just changed; read it, then press again"
        return ""

    # -- answering -------------------------------------------------------------------------
    def answer(self, agent: Agent, intent: Intent, seen: Observation | None = None) -> str:
        """Start answering ``agent`` with ``intent``; "" when it is on its way, else why nothing was sent.

        ``seen``: the observation the user answered (a reply box keeps the one
        shown when it opened); by default the one on display now.
        """
        typed = seen is not None
        refusal = self.refusal(agent, typed=typed)
        if refusal:
            return refusal
        seen = seen if seen is not None else agent.observation
        self._in_flight[agent.pane_id] = None  # on its way
        desk = self.routes.desk(agent.pane_id)
        if desk is not None and not typed:
            if self._by_hook(desk, agent, intent):
                return ""
            mismatch = desk.question_mismatch(agent.pane_id) if intent.kind is IntentKind.OPTION else ""
            if mismatch:
                del self._in_flight[agent.pane_id]
                return mismatch
        if desk is not None:
            desk.sending_keys(agent.pane_id, True)
        self._start(self._send(agent, seen, intent, self.clock()))
        return ""

    def _by_hook(self, desk: AnswerDesk, agent: Agent, intent: Intent) -> bool:
        """Answer through the hook holding this exact call, when there is one and the intent fits; False: use keys."""
        call = desk.call_for(agent.pane_id)
        answer = hook_answer(call, agent.observation, intent.kind, intent.option) if call is not None else None
        if call is None or answer is None or not desk.decide(call, answer.decision, answer.what):
            return False
        self._start(self._confirm_hook(agent, agent.observation, answer.what))
        return True

    # -- approving a batch through the hook ------------------------------------------------
    def batch(self, agent: Agent) -> tuple[list[tuple[Agent, PendingCall]], str]:
        """Every waiting request identical to ``agent``'s on every host, with ``agent``'s own; or [] and why there is none."""
        desk = self.routes.desk(agent.pane_id)
        call = desk.call_for(agent.pane_id) if desk is not None else None
        if desk is None or call is None or call.tool_name == QUESTION_TOOL:
            return [], "no hook request to approve here (y answers by keys)"
        alike = [pair for each in self.routes.desks() for pair in each.calls_like(call)]
        return [(a, c) for a, c in alike if not self.refusal(a) or a.pane_id == agent.pane_id], ""

    def approve_batch(self, pairs: list[tuple[Agent, PendingCall]]) -> str:
        """Approve each request of a confirmed batch that is still waiting, through its hook; one line saying which."""
        approved = []
        for agent, pending in pairs:
            desk = self.routes.desk(agent.pane_id)
            if desk is None or self.refusal(agent):
                continue  # a key went to it meanwhile
            now = desk.call_for(agent.pane_id)
            answer = hook_answer(pending, agent.observation, IntentKind.APPROVE)
            if now is None or now.id != pending.id or answer is None or not desk.decide(pending, answer.decision, answer.what):
                continue
            self._in_flight[agent.pane_id] = None
            approved.append(agent.target)
            self._start(self._confirm_hook(agent, agent.observation, answer.what, move_on=False))
        left = len(pairs) - len(approved)
        return f"approved {len(approved)} via hook: {', '.join(approved)}" + (f"; {left} no longer waiting" if left else "")

    # -- on the loop -----------------------------------------------------------------------
    def _start(self, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Stop watching for confirmations (the front end is ending); nothing more is sent."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _send(self, agent: Agent, seen: Observation, intent: Intent, began: float) -> None:
        pane_id, target = agent.pane_id, agent.target
        try:
            outcome = await send_guarded(
                self.io,
                pane_id,
                seen,
                intent,
                timeout=self.confirm_timeout,
                shown_at=agent.prompt_since or None,
                server_key=self.routes.server_key(pane_id),
                family=family_named(agent.family),
            )
        except (ActionError, TmuxCommandError, TmuxUnavailable, UnknownFamily) as exc:
            self._finish(agent, Report(pane_id, f"{target}: {exc}", "warning", False), "not sent")
            return
        except Exception as exc:
            log.exception("sending to %s failed", pane_id)
            self._finish(agent, Report(pane_id, f"{target}: not sent ({type(exc).__name__})", "error", False), "not sent")
            return
        if outcome.delivered:
            # A box toggled, or the next page of the same dialog: the dialog goes on, the inbox stays.
            move_on = intent.kind is not IntentKind.INTERRUPT and not outcome.more
            self._finish(agent, Report(pane_id, f"{target}: {outcome.detail}", "information", True, move_on), "", seen, outcome.what, began)
        else:
            self._finish(agent, Report(pane_id, f"{target}: {outcome.detail}", "error", False), "not delivered")

    async def _confirm_hook(self, agent: Agent, seen: Observation, what: str, *, move_on: bool = True) -> None:
        """After a decision through the hook: the pane must show Claude moved on, as after keys."""
        pane_id, target = agent.pane_id, agent.target
        try:
            outcome = await confirm_moved_on(self.io, pane_id, seen, what, timeout=self.confirm_timeout)
        except (ActionError, TmuxCommandError, TmuxUnavailable) as exc:
            outcome = Outcome(False, f"not confirmed: {exc}")
        if outcome.delivered:
            state = outcome.after.state.value if outcome.after else "?"
            self._finish(agent, Report(pane_id, f"{target}: {what} (via hook); Claude moved on ({state})", "information", True, move_on), "", seen)
        else:
            self._finish(agent, Report(pane_id, f"{target}: {what} via hook: {outcome.detail}", "error", False), "not delivered")

    def _finish(
        self, agent: Agent, report: Report, mark: str, answered: Observation | None = None, keys_answered: str = "", began: float = 0.0
    ) -> None:
        """After a send: keys for that agent wait for a new observation; the row and the audit say how it went."""
        pane_id = report.pane_id
        desk = self.routes.desk(pane_id)
        if desk is not None:
            desk.sending_keys(pane_id, False)
            if keys_answered:
                desk.record(agent, Channel.KEYS, keys_answered, began=began, seen=answered)
        if answered is not None:
            self._in_flight[pane_id] = answered  # until the monitor reports the pane's next state
        else:
            self._in_flight.pop(pane_id, None)
        self.routes.mark(pane_id, mark)
        self.routes.refresh_soon(pane_id)
        for subscriber in list(self._subscribers):
            try:
                subscriber(report)
            except Exception:
                log.exception("an answer's report failed")
