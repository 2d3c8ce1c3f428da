"""Rules answering for you, through the hook that holds the exact call or by the guarded keys: judged once per request, every answer in the event log.

An agent's row says its dialog is held by an answer hook (``Channel.HOOK``)
once the desk has matched the hook's call to the dialog on screen: the
call is then known whole (its tool and its exact input, from the agent
itself), and it is the dialog the row shows.  Only then are the rules asked
(rules/judge.py), once per request:

* a live ``allow`` hands the hook the plain once-only allow (never
  ``updatedPermissions``, never a wider mode), a live ``deny`` the hook's
  deny; the row says ``✓ by rule ID`` (``✗``), and a ``rule_answer`` event
  names the rule, the rules file's hash, the fields that matched, the host
  and the pane;
* a shadow rule answers nothing: a ``rule_shadow`` event says what it
  would have done;
* ``notify`` answers nothing and rings (a notice);
* Codex's own hook holds its call back until it returns, with no dialog
  drawn: the desk finds the agent by the call's conversation record and
  hands it here (``consider_held``); a live rule answers it at once,
  anything else lets it go and Codex draws its dialog;
* a Claude dialog no hook holds is answered by the guarded keys only when
  Claude's transcript holds exactly one call still waiting for its result
  and the dialog shows that call whole (``consider_keys``).

A rule's life (its ttl from its first load, ``max_uses``, pauses,
revocations, ``until = "idle"``) is ``rule_life.py``'s, kept in the event
log and read through one read model (``rule_state.py``); what the rules did,
and pause, resume and revoke, are ``rule_ledger.py``'s; the rules file is
``rule_book.py``'s.  When the rules' state cannot be read, live rules act as
shadow rules: the row, ``rules list`` and ``doctor`` say why.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import replace

from ...answering.desk import AnswerDesk
from ...detect.families import holds_hook, keeps_transcripts, tools_of
from ...events import AgentChanged, AgentRemoved, Event
from ...hooks.calls import SHOWN_AS, PendingCall, allow, deny, same_detail
from ...hooks.spool import tool_detail
from ...model import Agent, AgentState, Channel, Observation, Tools
from ...rules.judge import judge
from ...rules.model import Decision, Verdict
from ..records.journal import Journal
from .rule_book import RuleBook
from .rule_calls import call_of
from .rule_ledger import RECENT_SHOWN, RuleLedger, who
from .rule_life import RuleLife
from .rule_state import ANSWER, RuleState

__all__ = ["RuleAnswers"]

JUDGED_KEPT = 2000
KEYS_AFTER = 0.5  # seconds a dialog no hook holds is left before the keys' rules look (and between their looks)
KEYS_TRIES = 4  # looks for the transcript's line of the call on screen
RELOAD_EVERY = 1.0  # seconds between two looks at the rules file (a stat; read again only when it changed)


def _shows(tool: str, tools: Tools, wanted: str, shown: str, cwd: str) -> bool:
    """Does a dialog showing ``shown`` show the whole of a call acting on ``wanted`` (made in ``cwd``)? ``tools``: its family's."""
    if tool in tools.files:
        return bool(wanted and shown) and os.path.normpath(os.path.join(cwd, shown.strip())) == os.path.normpath(os.path.join(cwd, wanted))
    return same_detail(tool, wanted, shown)


def _network(call: PendingCall) -> bool:
    """Codex asks its hook about a command's network access as a Bash call too ("network-access <domain>"): never a rule's."""
    description = call.tool_input.get("description")
    return isinstance(description, str) and description.startswith("network-access")


class RuleAnswers:
    def __init__(
        self,
        book: RuleBook,
        desk_of: Callable[[str], AnswerDesk | None],
        agent: Callable[[str], Agent | None],
        agents: Callable[[], Iterable[Agent]],
        journal: Journal | None,
        clock: Callable[[], float],
    ) -> None:
        self.book = book
        self.desk_of = desk_of
        self.agent = agent
        self.agents = agents  # every agent now: those waiting are judged again when the rules file changes
        self.journal = journal
        self.state = RuleState(journal, clock, self._unreadable)
        self.ledger = RuleLedger(book, self.state, journal)
        self.life = RuleLife(book, self.state, self.ledger)
        self._judged: dict[tuple[str, str], Verdict] = {}  # (pane, the request: its dialog's appearance) → what the rules said
        self._timer: asyncio.TimerHandle | None = None
        # The guarded keys for a dialog no hook holds (the service's answer path): (agent, the observation judged,
        # allow?, rule) → "" when on its way, else why not.  None: rules answer through hooks only.
        self.answer_keys: Callable[[Agent, Observation, bool, str], str] | None = None
        self._looking: set[tuple[str, str]] = set()  # dialogs the keys' rules will look at again (their transcript line awaited)

    def start(self) -> None:
        """Look at the rules file now and every RELOAD_EVERY seconds: new rules are dated (their ttl starts) when first read."""
        self._tick()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        before = self.book.loaded
        loaded = self.book.current()
        if loaded.rules:
            self.state.refresh()
            for rule in loaded.rules:
                self.life.date(rule)
            if loaded is not before:
                self._look_again()
        try:
            self._timer = asyncio.get_running_loop().call_later(RELOAD_EVERY, self._tick)
        except RuntimeError:
            self._timer = None

    def _unreadable(self, why: str) -> None:
        if why:
            self.book.notice(f"rules answer nothing for now (live rules act as shadow rules): their state cannot be read: {why}")
        else:
            self.book.notice("rules answer again: their state can be read")

    # -- what the service tells -----------------------------------------------------------
    def on_event(self, event: Event) -> None:
        if isinstance(event, AgentRemoved):
            self.life.gone(event.key or event.pane_id)
            self._looking = {looked for looked in self._looking if looked[0] != event.pane_id}
            return
        if not isinstance(event, AgentChanged):
            return
        self.life.task_state(event.agent)
        self._look(event.agent)

    def _look_again(self) -> None:
        """The rules file changed: each dialog still waiting that the rules left to the person is judged by the new rules.

        The person who sees a request and writes the rule for it means this
        one too; what a rule already answered is never asked again.
        """
        for agent in self.agents():
            if not agent.state.needs_you:
                continue
            for judged in [j for j, verdict in self._judged.items() if j[0] == agent.pane_id and not verdict.answered]:
                del self._judged[judged]
            self._look(agent)

    def _look(self, agent: Agent) -> None:
        """The rules' look at what ``agent`` shows now: its hook's call at once, a dialog no hook holds by the keys a moment later."""
        if agent.channel == Channel.HOOK and agent.state.needs_you:
            self._later(0.0, lambda: self.consider(agent.pane_id))
            return
        looked = (agent.pane_id, agent.observation.request)
        if self.answer_keys is not None and self._keys_fit(agent) and looked not in self._judged and looked not in self._looking:
            # A moment first: a Claude with the answer hook has its call matched to the dialog by then (the hook's way wins).
            self._looking.add(looked)
            self._later(KEYS_AFTER, lambda: self.consider_keys(looked[0]))

    def consider(self, pane_id: str) -> Verdict | None:
        """Ask the rules about the request the pane's dialog is, once; answer it through its hook when a live rule says so."""
        agent, desk = self.agent(pane_id), self.desk_of(pane_id)
        if agent is None or desk is None:
            return None
        pending = desk.call_for(pane_id)
        if pending is None:
            return None
        request = agent.observation.request or f"hook:{pending.id}"
        if (pane_id, request) in self._judged:
            return None
        return self._rule(agent, pending, (pane_id, request), self._by_hook(desk, pending))

    def consider_held(self, call: PendingCall) -> Verdict | None:
        """A Codex hook's call, its agent found (answering/desk.py): answered by a live rule now, or let go so Codex draws its dialog."""
        agent, desk = self.agent(call.pane_id), self.desk_of(call.pane_id)
        if desk is None:
            return None
        verdict = None
        if agent is not None and (call.pane_id, f"codex:{call.id}") not in self._judged and not _network(call):
            verdict = self._rule(agent, call, (call.pane_id, f"codex:{call.id}"), self._by_hook(desk, call))
        if verdict is None or not verdict.answered:
            desk.let_go(call)
        return verdict

    def consider_keys(self, pane_id: str, tries: int = KEYS_TRIES) -> Verdict | None:
        """A Claude dialog no hook holds: answered by the guarded keys when a live rule says so, if the dialog shows the whole call.

        Whole: Claude's transcript holds exactly one call still waiting for
        its result, and the dialog (read whole from its box) shows that
        call's command, or its file, word for word; otherwise the person
        answers.  The keys go for the appearance of the dialog judged (its
        ``request``), through the same guard as ``y``: a dialog that changed
        meanwhile gets nothing.
        """
        agent = self.agent(pane_id)
        if agent is None or self.answer_keys is None or self.journal is None or not self._keys_fit(agent):
            self._looking = {looked for looked in self._looking if looked[0] != pane_id}
            return None
        observation = agent.observation
        judged = (pane_id, observation.request)
        if judged in self._judged:
            return None
        whole = self._whole_call(agent)
        if whole is None:
            if tries > 1:  # the transcript's line may be read a moment after the dialog
                self._later(KEYS_AFTER, lambda: self.consider_keys(pane_id, tries - 1))
            else:
                self._looking.discard(judged)
            return None
        self._looking.discard(judged)
        tool, given, cwd = whole
        pending = PendingCall(0, pane_id, 0, "", tool, given, cwd=cwd)  # where Claude is now: its shell keeps a ``cd``
        answer = self.answer_keys

        def by_keys(verdict: Verdict) -> bool:
            return answer(agent, observation, verdict.decision is Decision.ALLOW, verdict.rule) == ""

        return self._rule(agent, pending, judged, by_keys)

    @staticmethod
    def _keys_fit(agent: Agent) -> bool:
        """A permission dialog that shows its call whole (read from its own box), no hook holding it, of a family whose transcript says the call: the keys' to answer."""
        prompt = agent.observation.prompt
        return (
            keeps_transcripts(agent.family)
            and agent.channel != Channel.HOOK
            and agent.state is AgentState.PERMISSION
            and prompt is not None
            and prompt.kind == "permission"
            and prompt.whole
            and bool(prompt.tool and prompt.detail and agent.observation.request)
        )

    def _whole_call(self, agent: Agent) -> tuple[str, dict, str] | None:
        """The one call waiting in Claude's transcript, when the dialog on screen shows it in full, and the folder it runs in; or None.

        Exactly one call may wait (two calls waiting in parallel are two
        dialogs the screen shows one of: which one is not known whole).  A
        command must be the dialog's word for word (whitespace folded, as the
        dialog wraps it); a file the same file, the dialog's relative name
        taken from the call's own folder.  A call whose line does not say its
        folder is no call: a rule's project could not be checked.
        """
        assert self.journal is not None
        prompt = agent.observation.prompt
        assert prompt is not None
        waiting = {(tool, exact, cwd) for tool, exact, cwd in self.journal.evidence.open_calls(who(agent))}
        if len(waiting) != 1:
            return None
        ((tool, exact, cwd),) = waiting
        if tool != prompt.tool and tool not in SHOWN_AS.get(prompt.tool, ()):
            return None
        try:
            given = json.loads(exact)
        except ValueError:
            return None
        if not isinstance(given, dict) or not cwd.startswith("/") or not _shows(tool, tools_of(agent.family), tool_detail(given), prompt.detail, cwd):
            return None
        return tool, given, cwd

    def _later(self, delay: float, then: Callable[[], object]) -> None:
        """``then`` on the service's loop after ``delay``; told outside it (a replay, a test), nothing is answered."""
        try:
            asyncio.get_running_loop().call_later(delay, then)
        except RuntimeError:
            pass

    def _by_hook(self, desk: AnswerDesk, pending: PendingCall) -> Callable[[Verdict], bool]:
        """The hook's answer for a live verdict: the plain once-only allow, or a deny (Codex's without ``interrupt``)."""

        def send(verdict: Verdict) -> bool:
            if verdict.decision is Decision.ALLOW:
                return desk.decide(pending, allow(), f"✓ by rule {verdict.rule}: {pending.describe()}", verdict.rule)  # the rule first: a narrow row keeps it
            # A held hook's agent (Codex) fails a deny that carries ``interrupt`` closed (Family.held_hook).
            refusal = deny(f"headspace rule {verdict.rule} refused this", interrupt=not holds_hook(pending.family))
            return desk.decide(pending, refusal, f"✗ by rule {verdict.rule}: {pending.describe()}", verdict.rule)

        return send

    # -- judging ------------------------------------------------------------------------
    def _rule(self, agent: Agent, pending: PendingCall, judged: tuple[str, str], send: Callable[[Verdict], bool]) -> Verdict | None:
        loaded = self.book.current()
        if not loaded.rules:
            return None
        self.state.refresh()
        call = call_of(pending, agent)
        verdict = judge(self.life.usable(loaded, agent), call)
        self._judged[judged] = verdict
        while len(self._judged) > JUDGED_KEPT:
            del self._judged[next(iter(self._judged))]
        if verdict.decision is None:
            return verdict
        audit = {
            "via": "hook" if pending.id else "keys",
            "rule": verdict.rule,
            "decision": verdict.decision.value,
            "rules_file": self.book.loaded.digest,
            "fields": list(verdict.matched),
            "host": agent.host,
            "pane": agent.target,
            "family": call.family,
            "tool": pending.tool_name,
            "detail": pending.detail,
            "why": verdict.why,
        }
        unreadable = self.state.unreadable
        if verdict.shadow or unreadable:
            if unreadable and not verdict.shadow:
                audit["not_live"] = f"the rules' state cannot be read: {unreadable}"
                desk = self.desk_of(agent.pane_id)
                if desk is not None:  # the row says why the rule did not answer
                    desk.store.marked(agent.pane_id, f"rule {verdict.rule} did not answer: the rules' state cannot be read", self.state.now())
            self.ledger.write("rule_shadow", agent, audit, loaded)
            return verdict
        if verdict.decision is Decision.NOTIFY:
            self.ledger.write("rule_notify", agent, audit, loaded)
            self.book.notice(f"{agent.target}: {pending.describe()} (rule {verdict.rule} asks you to look)")
            return verdict
        if not send(verdict):
            return verdict
        self.ledger.write(ANSWER, agent, audit, loaded)
        for rule_id in verdict.rule.split("+"):
            rule = loaded.rule(rule_id)
            if rule is not None:
                self.life.pace(rule, loaded, agent, call)
        return replace(verdict, answered=True)

    # -- what the service tells, and what a front end asks ------------------------------------
    def on_answer(self, event: Event) -> None:
        """A person's answer: a refusal an allow would have allowed pauses that allow (``rule_life.py``)."""
        self.life.on_answer(event)

    def recent(self, since: float, limit: int = RECENT_SHOWN) -> list[dict]:
        """The rules' answers since ``since``, newest first, each with its rule's state now (``rule_ledger.py``)."""
        return self.ledger.recent(since, limit)

    def control(self, action: str, rule_id: str = "", host: str = "", via: str = "the phone page") -> str:
        """Pause, resume or revoke (``rule_ledger.py``); the line to show."""
        return self.ledger.control(action, rule_id, host, via)
