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
* an answer reports twice: once it is on its way (the hook took the
  decision, or the guarded send began), a ``Report`` with ``final`` off,
  and ``move_on`` where an inbox should go on to the next agent that needs
  you now, while Claude is still to show what the keys did (under load
  that takes seconds: the user's hands must not wait for it); then the
  final one, delivered or not.  ``move_on``
  is decided from the answer itself (``moves_on``: not after an interrupt,
  not between the parts of one dialog), never from whether the next
  observation happened to arrive first;
* every answer ends in a definite state within ``confirm_timeout`` (plus the
  steps before the keys, ``SEND_SLACK`` in all): a pane that never answers
  ends "not confirmed", and the pane is free for the next key or a Stop;
* every key that reached a pane is in the audit with its outcome, delivered
  or not (``AnswerDesk.record``);
* one answer per request: an answer names the appearance of the prompt it
  was drawn for (``Observation.request``, service/records/appearances.py); one
  drawn for another appearance than the one on display is refused, and
  once an answer to an appearance went, that appearance is spent: a late
  answer naming it ("that request was already answered") never lands on
  the next request with the same words.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from ..detect.approval import APPROVING
from ..detect.families import UnknownFamily, family_named
from ..hooks.calls import QUESTION_TOOL, PendingCall, hook_answer
from ..model import Agent, AgentState, Channel, Observation
from ..service.records.appearances import words_of
from ..tmux.server import TmuxCommandError, TmuxUnavailable
from .desk import AnswerDesk
from .keys import ActionError, Outcome, PaneIO, confirm_moved_on, same_prompt, send_guarded
from .policy import MENU_ANSWERS, REACTION_TIME, Intent, IntentKind
from .report import Report

log = logging.getLogger(__name__)

# Beyond ``confirm_timeout``, what a send may take before its keys go and
# between them: the re-read, a young prompt's wait, the screen settling (at
# most 2 s), a reply's steps into a question's field (2 s each).  A send still
# running past both is ended: "not confirmed", never a pane held "on its way".
SEND_SLACK = 8.0
SPENT_KEPT = 16  # per pane, the answered requests remembered, to say why a late answer to one is refused

ALREADY_ANSWERED = "that request was already answered"


class Routes(Protocol):
    """Where a pane's answers go (the fleet: each pane's own host)."""

    def desk(self, address: str) -> AnswerDesk | None: ...
    def desks(self) -> list[AnswerDesk]: ...
    def mark(self, address: str, delivery: str) -> None: ...
    def renew(self, address: str, request: str) -> None: ...
    def refresh_soon(self, address: str) -> None: ...
    def server_key(self, address: str) -> str: ...


def moves_on(intent: Intent, seen: Observation) -> bool:
    """Does answering ``seen`` with ``intent`` leave the agent to the others (an inbox moves on)?

    Not after an interrupt (the user is still with that agent), and not
    between the parts of one dialog: a question of several (Claude shows
    the next one, then its review page, at once) or a multi-select one (a
    digit ticks a box; the dialog waits for more).  What ends the dialog
    moves on: the review page's answer, and on a multi-select's last page
    its submit (``S``, or ``--option 1,3``, which ticks and submits).
    """
    if intent.kind is IntentKind.INTERRUPT:
        return False
    prompt = seen.prompt
    if prompt is None or prompt.kind != "question" or prompt.review:
        return True
    if prompt.multi_select:
        return prompt.last_page and (intent.kind is IntentKind.SUBMIT or "," in intent.option)
    return prompt.question_count <= 1


def decided(intent: Intent, seen: Observation) -> str:
    """What an answer by keys decides, as data for the audit: "allow", "deny", or "" (neither, or not known)."""
    if intent.kind is IntentKind.APPROVE:
        return "allow"
    if intent.kind is IntentKind.DENY:
        return "deny"
    prompt = seen.prompt
    option = next((o for o in prompt.options if o.key == intent.option), None) if prompt is not None and intent.kind is IntentKind.OPTION else None
    if prompt is None or option is None:
        return ""
    refusal = prompt.no
    if refusal is not None and refusal.key == option.key:
        return "deny"
    return "allow" if option.label.lower().startswith(APPROVING) else ""


def answers_dialog(intent: Intent, seen: Observation) -> bool:
    """Keys that answer a dialog (a menu's option, a reply into a question's field), not a line at the input box or an Esc."""
    return intent.kind in MENU_ANSWERS or (intent.kind is IntentKind.TEXT and seen.state is AgentState.QUESTION)


class _Watched:
    """The pane's IO for one answer, noting its keys: whether any reached the pane, and when the one that commits it went.

    The committing key is the answer's own: the option's key of a menu, Esc
    of an interrupt, Enter after typed text (a reply into a question's field
    picks the field with a digit first: that is not the answer yet).
    """

    def __init__(self, io: PaneIO, intent: Intent, committed: Callable[[], None], clock: Callable[[], float]) -> None:
        self.io = io
        self.menu_key = intent.kind in MENU_ANSWERS or intent.kind is IntentKind.INTERRUPT
        self.committed = committed
        self.clock = clock
        self.reached = False  # a key was handed to tmux for the pane
        self.first_key_at = 0.0  # when (by ``clock``), for the audit: Claude's word is matched to a call read before it
        self.went = False

    async def pane(self, pane_id: str):
        return await self.io.pane(pane_id)

    async def capture(self, pane_id: str, ansi: bool = True) -> str:
        return await self.io.capture(pane_id, ansi)

    async def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None:
        if not self.reached:
            self.first_key_at = self.clock()
        self.reached = True  # from here on the pane may have it, even if tmux's reply is lost
        await self.io.send_keys(pane_id, *keys, literal=literal)
        if not self.went and not literal and (self.menu_key or keys == ("Enter",)):
            self.went = True
            self.committed()


def _has_answer_channel(agent: Agent) -> bool:
    """Can the agent's family answer a prompt through its hook (``Family.answer_channel``)?  No: keys only."""
    try:
        return family_named(agent.family).answer_channel is not None
    except UnknownFamily:
        return False


class Answerer:
    def __init__(self, routes: Routes, io: PaneIO, *, clock: Callable[[], float], confirm_timeout: float) -> None:
        self.routes = routes
        self.io = io
        self.clock = clock
        self.confirm_timeout = confirm_timeout
        # Panes an answer is on its way to (sending, or waiting for the pane to show it).
        self._sending: set[str] = set()
        # After a delivered answer: the observation it answered and when (monotonic);
        # keys wait for a newer one (another ``Observation.id``: a copy of the same reading is not newer), for at most confirm_timeout (the monitor has
        # long seen the pane move by then; the guarded send re-reads it anyway).
        self._answered: dict[str, tuple[Observation, float]] = {}
        self._subscribers: list[Callable[[Report], None]] = []
        self._tasks: set[asyncio.Task] = set()
        # Per pane, the requests (``Observation.request``) an answer went to: never answered again.
        self._spent: dict[str, deque[str]] = {}

    def subscribe(self, subscriber: Callable[[Report], None]) -> None:
        self._subscribers.append(subscriber)

    def busy(self, pane_id: str) -> bool:
        """An answer to ``pane_id`` is on its way: its keys are going, or the pane is still to show what they did.

        Never longer than the send's own bound (``confirm_timeout`` +
        ``SEND_SLACK``): after it the answer has ended, one way or the other.
        """
        return pane_id in self._sending

    def awaits(self, agent: Agent) -> bool:
        """An answer to ``agent`` is on its way, or landed moments ago while its row still shows the prompt it answered.

        Such an agent does not need you now, whatever its row says: the
        inbox moves on past it.  Its keys went before Claude redrew (seconds
        under load), and after it Claude's status file can still say
        "waiting" for a while: the row then holds the answered prompt's state
        with no prompt of its own.  A new prompt (another fingerprint) needs
        you at once; the old one for at most ``confirm_timeout``.
        """
        if agent.pane_id in self._sending:
            return True
        answered = self._answered.get(agent.pane_id)
        if answered is None or time.monotonic() - answered[1] >= self.confirm_timeout:
            return False
        now, before = agent.observation, answered[0]
        return now.id == before.id or (now.state is before.state and (now.prompt is None or same_prompt(before, now)))

    # -- may an answer go now? ----------------------------------------------------------
    def stale(self, agent: Agent, request: str) -> str:
        """Why an answer drawn for appearance ``request`` must not go to ``agent`` now ("" when it is the one on display, unanswered)."""
        now = agent.observation.request
        if request and request in self._spent.get(agent.pane_id, ()):
            return ALREADY_ANSWERED + ("; this is a new one" if now and now != request else "")
        if request == now:
            return ""
        if not request:
            return f"the agent asks something now that was not shown (it is {agent.state.value})"
        if not now:
            ago = self.clock() - agent.since if agent.since else None
            since = f" {ago:.0f} s ago" if ago is not None and 0 <= ago < 3600 else ""
            return f"the agent stopped waiting for this answer{since}; it is now {agent.state.value}"
        return "the prompt changed since it was shown" + ("; this is a new one" if words_of(now) == words_of(request) else "")

    def refusal(self, agent: Agent, *, typed: bool = False, request: str | None = None) -> str:
        """Why an answer to ``agent`` must not go now, or "".

        ``typed``: a reply typed in a box, against the prompt shown when the
        box opened; the typing itself took longer than a reaction time.
        ``request``: the appearance the answer was drawn for (``stale``).
        """
        if agent.offline:
            return f"{agent.host} is out of reach ({agent.offline})"
        if agent.pane_id in self._sending:
            return "a key is already on its way"
        if request is not None:
            stale = self.stale(agent, request)
            if stale:
                return stale
        answered = self._answered.get(agent.pane_id)
        if answered is not None:
            if agent.observation.id == answered[0].id and time.monotonic() - answered[1] < self.confirm_timeout:
                return "waiting to see what the last key did"
            del self._answered[agent.pane_id]
        if not typed and agent.observation.prompt is not None and self.clock() - agent.prompt_since < REACTION_TIME:
            return "the prompt just changed; read it, then press again"
        return ""

    # -- answering -------------------------------------------------------------------------
    def answer(self, agent: Agent, intent: Intent, seen: Observation | None = None) -> str:
        """Start answering ``agent`` with ``intent``; "" when it is on its way, else why nothing was sent.

        ``seen``: the observation the user answered (a reply box keeps the one
        shown when it opened); by default the one on display now.  Either
        way the answer is for that appearance of the prompt (its
        ``request``), and for no other.
        """
        typed = seen is not None
        refusal = self.refusal(agent, typed=typed, request=seen.request if seen is not None else None)
        if refusal:
            return refusal
        seen = seen if seen is not None else agent.observation
        self._sending.add(agent.pane_id)  # on its way
        desk = self.routes.desk(agent.pane_id)
        if desk is not None and not typed and _has_answer_channel(agent):
            if self._by_hook(desk, agent, intent):
                return ""
            mismatch = desk.question_mismatch(agent.pane_id) if intent.kind is IntentKind.OPTION else ""
            if mismatch:
                self._sending.discard(agent.pane_id)
                return mismatch
        if desk is not None:
            desk.sending_keys(agent.pane_id, True)
        self._start(self._send(agent, seen, intent, self.clock()))
        if answers_dialog(intent, seen) and moves_on(intent, seen):
            # The inbox moves on now, not once the keys went: the guarded send re-reads and lets the
            # screen settle first (0.3 s quiet, over a second under load), and a steady hand's next
            # key must find the next agent under the cursor, not this one still on its way.  If the
            # keys never go, the final report says so and offers the way back.
            self._report(Report(agent.pane_id, f"{agent.target}: {intent.describe()} on its way", "information", False, True, final=False))
        return ""

    def forget(self, pane_id: str) -> None:
        """The pane is gone: what was answered there goes with it (pane ids come and go all day)."""
        self._spent.pop(pane_id, None)

    def _spend(self, pane_id: str, request: str) -> None:
        """An answer to appearance ``request`` went: no answer names it again, and the next prompt read is a new appearance."""
        if not request:
            return
        spent = self._spent.setdefault(pane_id, deque(maxlen=SPENT_KEPT))
        if request not in spent:
            spent.append(request)

    def _by_hook(self, desk: AnswerDesk, agent: Agent, intent: Intent) -> bool:
        """Answer through the hook holding this exact call, when there is one and the intent fits; False: use keys."""
        call = desk.call_for(agent.pane_id)
        answer = hook_answer(call, agent.observation, intent.kind, intent.option) if call is not None else None
        if call is None or answer is None or not desk.decide(call, answer.decision, answer.what + intent.audit_suffix(), intent.rule):
            return False
        self._spend(agent.pane_id, agent.observation.request)
        self._start(self._confirm_hook(agent, agent.observation, answer.what, move_on=moves_on(intent, agent.observation)))
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
            self._spend(agent.pane_id, agent.observation.request)
            self._sending.add(agent.pane_id)
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
        moves = moves_on(intent, seen)
        io = _Watched(self.io, intent, lambda: self._went(agent, f"{intent.describe()} sent", moves), self.clock)
        try:
            async with asyncio.timeout(self.confirm_timeout + SEND_SLACK):
                outcome = await send_guarded(
                    io,
                    pane_id,
                    seen,
                    intent,
                    timeout=self.confirm_timeout,
                    shown_at=agent.prompt_since or None,
                    server_key=self.routes.server_key(pane_id),
                    family=family_named(agent.family),
                )
        except TimeoutError:
            outcome = Outcome(False, f"not confirmed: {pane_id} gave no answer in {self.confirm_timeout + SEND_SLACK:.0f}s")
        except (ActionError, TmuxCommandError, TmuxUnavailable, UnknownFamily) as exc:
            if not io.reached:
                self._finish(agent, Report(pane_id, f"{target}: {exc}", "warning", False), "not sent")
                return
            outcome = Outcome(False, f"not delivered: {exc}")
        except Exception as exc:
            log.exception("sending to %s failed", pane_id)
            if not io.reached:
                self._finish(agent, Report(pane_id, f"{target}: not sent ({type(exc).__name__})", "error", False), "not sent")
                return
            outcome = Outcome(False, f"not delivered ({type(exc).__name__})")
        # Keys reached the pane: the appearance they answered is spent, landed or not (but a
        # box ticked in a multi-select question: the same request, still waiting for more).
        ticks = seen.prompt is not None and seen.prompt.multi_select and not moves
        request = seen.request if io.reached and not ticks else ""
        # Every key that reached the pane goes in the audit, delivered or not; "what" names the
        # dialog and option where the send read them, else the intent.
        what = (outcome.what or intent.describe()) + intent.audit_suffix()
        decision = decided(intent, seen)
        # Keys are matched to a call whose line was read before they began to go (evidence.py): the first key's time,
        # not the request's; the guard's re-read and settle come between, and under load the line is often read then.
        began = io.first_key_at or began
        if outcome.delivered:
            # A box toggled, or the next page of the same dialog: the dialog goes on, the inbox stays.
            report = Report(pane_id, f"{target}: {outcome.detail}", "information", True, moves and not io.went and not outcome.more)
            self._finish(agent, report, "", seen, what, began, dialog=answers_dialog(intent, seen), request=request, interrupt=intent.kind is IntentKind.INTERRUPT, decision=decision, rule=intent.rule)
        else:
            report = Report(pane_id, f"{target}: {outcome.detail}", "error", False)
            self._finish(agent, report, "not delivered", seen, what if io.reached else "", began, dialog=answers_dialog(intent, seen), request=request, decision=decision, rule=intent.rule)

    def _went(self, agent: Agent, what: str, move_on: bool) -> None:
        """The answer's keys went (or the hook took it): the row says so, and an inbox may move on before the pane shows it."""
        self.routes.mark(agent.pane_id, "sent; waiting for the pane to show it")
        self._report(Report(agent.pane_id, f"{agent.target}: {what}", "information", False, move_on, final=False))

    async def _confirm_hook(self, agent: Agent, seen: Observation, what: str, *, move_on: bool = True) -> None:
        """After a decision through the hook: the pane must show Claude moved on, as after keys."""
        pane_id, target = agent.pane_id, agent.target
        self._went(agent, f"{what} (via hook)", move_on)
        try:
            async with asyncio.timeout(self.confirm_timeout + SEND_SLACK):
                outcome = await confirm_moved_on(self.io, pane_id, seen, what, family_named(agent.family), timeout=self.confirm_timeout)
        except TimeoutError:
            outcome = Outcome(False, f"not confirmed: {pane_id} gave no answer in {self.confirm_timeout + SEND_SLACK:.0f}s")
        except (ActionError, TmuxCommandError, TmuxUnavailable, UnknownFamily) as exc:
            outcome = Outcome(False, f"not confirmed: {exc}")
        if outcome.delivered:
            state = outcome.after.state.value if outcome.after else "?"
            self._finish(agent, Report(pane_id, f"{target}: {what} (via hook); Claude moved on ({state})", "information", True), "", seen, request=seen.request)
        else:
            self._finish(agent, Report(pane_id, f"{target}: {what} via hook: {outcome.detail}", "error", False), "not delivered", request=seen.request)

    def _finish(
        self,
        agent: Agent,
        report: Report,
        mark: str,
        answered: Observation | None = None,
        keys: str = "",
        began: float = 0.0,
        *,
        dialog: bool = True,
        request: str = "",
        interrupt: bool = False,
        decision: str = "",
        rule: str = "",
    ) -> None:
        """After a send: keys for that agent wait for a new observation; the row and the audit say how it went.

        ``keys``: what the keys that reached the pane did, for the audit
        (delivered when ``report`` says so, else with its reason); ``dialog``:
        they answered a dialog (Claude's transcript can confirm which call).
        ``request``: the appearance the answer went to (its keys reached the
        pane, or the hook took it): spent, and the next prompt read is a new one.
        ``interrupt``: a delivered Esc is the row's last answer (the answer
        before it no longer says what happened last).
        """
        pane_id = report.pane_id
        if request:
            self._spend(pane_id, request)
            self.routes.renew(pane_id, request)
        desk = self.routes.desk(pane_id)
        if desk is not None:
            desk.sending_keys(pane_id, False)
            if keys:
                row = report.delivered and (dialog or interrupt)
                desk.record(agent, Channel.KEYS, keys, began=began, seen=answered, delivered=report.delivered, outcome=report.text, dialog=dialog, row=row, decision=decision, rule=rule)
        self._sending.discard(pane_id)
        if answered is not None and report.delivered:
            self._answered[pane_id] = (answered, time.monotonic())  # until the monitor reports the pane's next state
        else:
            self._answered.pop(pane_id, None)
        self.routes.mark(pane_id, mark)
        self.routes.refresh_soon(pane_id)
        self._report(report)

    def _report(self, report: Report) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(report)
            except Exception:
                log.exception("an answer's report failed")
