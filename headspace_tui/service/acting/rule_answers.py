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
revocations, ``until = "idle"``) is the event log's, read through one read
model (``rule_state.py``).  When that cannot be read, live rules act as
shadow rules: the row, ``rules list`` and ``doctor`` say why.  A deny never
pauses itself; a deny answering at a loop's pace pauses every allow that
fits the call it keeps refusing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from ...answering.desk import AnswerDesk
from ...events import AgentChanged, AgentRemoved, Answered, Event
from ...hooks.calls import SHOWN_AS, PendingCall, allow, deny, same_detail
from ...hooks.spool import tool_detail
from ...model import Agent, AgentState, Channel, Observation
from ...rules.judge import inside, judge
from ...rules.model import FILE_TOOLS, Call, Decision, Rule, Verdict
from ...rules.pauses import PAUSE, REVOKE, pause_event, pause_words, revoke_event
from ...rules.rules_file import Loaded, load
from ...state.eventlog import EventLogError
from ..records.journal import Journal
from .rule_calls import call_of
from .rule_state import ANSWER, DONE, EXPIRED, LOADED, WORK, RuleState

__all__ = ["RuleAnswers", "RuleBook"]

log = logging.getLogger(__name__)
JUDGED_KEPT = 2000
RECENT_SHOWN = 50  # the rules' answers a front end lists at most
KEYS_AFTER = 0.5  # seconds a dialog no hook holds is left before the keys' rules look (and between their looks)
KEYS_TRIES = 4  # looks for the transcript's line of the call on screen
# States in which an agent's task is over (its turn ended, however): an ``until = "idle"`` rule ends there for it.
TASK_ENDS = frozenset({AgentState.IDLE, AgentState.INPUT, AgentState.EXITED, AgentState.ERROR, AgentState.LIMITED})
AT_WORK = frozenset({AgentState.WORKING, *(s for s in AgentState if s.needs_you)}) - TASK_ENDS
RELOAD_EVERY = 1.0  # seconds between two looks at the rules file (a stat; read again only when it changed)


class RuleBook:
    """The rules file, loaded again whenever it changed; errors told once per version."""

    def __init__(self, path: Path, notice: Callable[[str], None]) -> None:
        self.path = path
        self.notice = notice
        self._seen: tuple | None = None
        self.loaded = Loaded(path=str(path))

    def current(self) -> Loaded:
        try:
            st = os.stat(self.path)
            seen: tuple | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            seen = None
        if seen != self._seen:
            self._seen = seen
            self.loaded = load(self.path) if seen is not None else Loaded(path=str(self.path))
            for error in self.loaded.errors:
                self.notice(error)
        return self.loaded


def _shows(tool: str, wanted: str, shown: str, cwd: str) -> bool:
    """Does a dialog showing ``shown`` show the whole of a call acting on ``wanted`` (made in ``cwd``)?"""
    if tool in FILE_TOOLS:
        return bool(wanted and shown) and os.path.normpath(os.path.join(cwd, shown.strip())) == os.path.normpath(os.path.join(cwd, wanted))
    return same_detail(tool, wanted, shown)


def _could_answer(rule: Rule, agent: Agent) -> bool:
    """Is the agent where the rule applies (its hosts, families, project)? Only there does its task's end end the rule."""
    if agent.host not in rule.hosts or (rule.agents and (agent.family or "claude") not in rule.agents):
        return False
    cwd = os.path.realpath(agent.cwd) if agent.host == "local" and agent.cwd else agent.cwd
    return not rule.project or bool(cwd) and inside(cwd, rule.project)


def _span(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def _network(call: PendingCall) -> bool:
    """Codex asks its hook about a command's network access as a Bash call too ("network-access <domain>"): never a rule's."""
    description = call.tool_input.get("description")
    return isinstance(description, str) and description.startswith("network-access")


def _who(agent: Agent) -> str:
    return agent.key or agent.pane_id


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
                self._date(rule)
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
            self._gone(event.key or event.pane_id)
            self._looking = {looked for looked in self._looking if looked[0] != event.pane_id}
            return
        if not isinstance(event, AgentChanged):
            return
        self._task_state(event.agent)
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
        """A Claude permission dialog that shows its call whole (read from its own box), no hook holding it: the keys' to answer."""
        prompt = agent.observation.prompt
        return (
            agent.family == "claude"
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
        waiting = {(tool, exact, cwd) for tool, exact, cwd in self.journal.evidence.open_calls(_who(agent))}
        if len(waiting) != 1:
            return None
        ((tool, exact, cwd),) = waiting
        if tool != prompt.tool and tool not in SHOWN_AS.get(prompt.tool, ()):
            return None
        try:
            given = json.loads(exact)
        except ValueError:
            return None
        if not isinstance(given, dict) or not cwd.startswith("/") or not _shows(tool, tool_detail(given), prompt.detail, cwd):
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
            refusal = deny(f"headspace rule {verdict.rule} refused this", interrupt=pending.family != "codex")
            return desk.decide(pending, refusal, f"✗ by rule {verdict.rule}: {pending.describe()}", verdict.rule)

        return send

    # -- judging ------------------------------------------------------------------------
    def _rule(self, agent: Agent, pending: PendingCall, judged: tuple[str, str], send: Callable[[Verdict], bool]) -> Verdict | None:
        loaded = self.book.current()
        if not loaded.rules:
            return None
        self.state.refresh()
        call = call_of(pending, agent)
        verdict = judge(self._usable(loaded, agent), call)
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
            self._write("rule_shadow", agent, audit, loaded)
            return verdict
        if verdict.decision is Decision.NOTIFY:
            self._write("rule_notify", agent, audit, loaded)
            self.book.notice(f"{agent.target}: {pending.describe()} (rule {verdict.rule} asks you to look)")
            return verdict
        if not send(verdict):
            return verdict
        self._write(ANSWER, agent, audit, loaded)
        for rule_id in verdict.rule.split("+"):
            rule = loaded.rule(rule_id)
            if rule is not None:
                self._pace(rule, loaded, agent, call)
        return replace(verdict, answered=True)

    def _usable(self, loaded: Loaded, agent: Agent) -> list[Rule]:
        """The rules that may answer for ``agent`` now: in their ttl and uses, not paused, revoked or ended for it."""
        state, now, who = self.state, self.state.now(), _who(agent)
        out = []
        for rule in loaded.rules:
            first = self._date(rule)
            if state.expired(rule):
                continue
            if not rule.permanent and now - first > rule.ttl:
                state.record([{"kind": EXPIRED, "agent": None, "rule": rule.key[0], "text": rule.key[1]}])  # over for good
                continue
            if rule.max_uses and state.uses(rule) >= rule.max_uses:
                continue
            if state.paused(rule.id, agent.host) or state.revoked(rule) or (rule.until_idle and state.ended_for(rule, who)):
                continue
            out.append(rule)
        return out

    def _date(self, rule: Rule) -> float:
        """When ``rule`` (this text of it) was first loaded; now, written to the event log, if never."""
        first = self.state.first(rule)
        if first is None:
            first = self.state.now()
            self.state.record([{"kind": LOADED, "agent": None, "ts": first, "rule": rule.key[0], "text": rule.key[1]}])
        return first

    def _pace(self, rule: Rule, loaded: Loaded, agent: Agent, call: Call) -> None:
        """A rule that answered ``burst`` times within its window: an allow pauses itself; a deny pauses the allows that fit the call it keeps refusing."""
        if not rule.burst or self.state.recent(rule, rule.burst_window) < rule.burst:
            return
        times = f"{rule.burst} times in {_span(rule.burst_window)}"
        if rule.decision is Decision.ALLOW:
            self._pause_for(rule.id, f"it answered {times}")
        elif rule.decision is Decision.DENY:
            for other in self._would_allow(loaded, call):
                self._pause_for(other.id, f"rule {rule.id} refused the call it fits {times} ({agent.target} keeps asking)")

    def _would_allow(self, loaded: Loaded, call: Call) -> list[Rule]:
        """The allows (live or shadow) not paused one by one already that would allow ``call`` on their own.

        A rule under a pause of every rule is paused here all the same: a
        resume of the others must not bring it back.
        """
        return [rule for rule in loaded.rules if rule.decision is Decision.ALLOW and not self.state.paused_itself(rule.id) and judge([replace(rule, shadow=False)], call).decision is Decision.ALLOW]

    def _pause_for(self, rule_id: str, why: str) -> None:
        self._write_pause(rule_id, why)
        self.book.notice(f"rule {rule_id} paused: {why} ('headspace rules resume --rule {rule_id}' to go on)")

    def on_answer(self, event: Event) -> None:
        """A request the person refused that an allow (live or shadow) would have allowed: that rule pauses itself, and says so.

        Read from the answer's fields (``decision``, ``rule``, the call, or
        for a shell command refused by keys the command its dialog showed),
        never from its words; a deny rule never pauses itself.
        """
        if not isinstance(event, Answered) or event.rule or event.decision != "deny":
            return
        loaded = self.book.loaded
        if not loaded.rules:
            return
        if event.tool_input:
            try:
                given = json.loads(event.tool_input)
            except ValueError:
                return
        elif event.tool == "Bash" and event.shown:
            # Refused by keys, no hook holding the call: the command as its dialog showed it. Cut or not, a pause is the safe side.
            given = {"command": event.shown}
        else:
            return
        pending = PendingCall(0, event.agent.pane_id, 0, "", event.tool, given if isinstance(given, dict) else {}, cwd=event.agent.cwd)
        self.state.refresh()
        for rule in self._would_allow(loaded, call_of(pending, event.agent)):
            self._pause_for(rule.id, f"you refused {pending.describe()}, which it would have allowed")

    # -- a rule's life ------------------------------------------------------------------
    def _task_state(self, agent: Agent) -> None:
        """An agent whose task ended (at work, then idle): every ``until = "idle"`` rule ends for it; its 'at work' mark is in the log."""
        rules = [r for r in self.book.loaded.rules if r.until_idle]
        if not rules:
            return
        who, state = _who(agent), self.state
        if agent.state in TASK_ENDS:
            if not state.at_work(who):
                return
            events: list[dict] = [{"kind": WORK, "agent": who, "on": False}]
            for rule in rules:
                # Where it applies, or wherever it answered this agent (a call's folder may not be the agent's: Codex's workdir).
                if state.first(rule) is not None and not state.ended_for(rule, who) and (_could_answer(rule, agent) or state.answered(rule, who)):
                    events.append({"kind": DONE, "agent": who, "rule": rule.id, "rule_key": list(rule.key)})
            state.record(events)
        elif agent.state in AT_WORK and not state.at_work(who):
            state.record([{"kind": WORK, "agent": who, "on": True}])

    def _gone(self, who: str) -> None:
        """An agent that is gone takes its 'at work' mark with it (agents come and go all day)."""
        if self.state.at_work(who):
            self.state.record([{"kind": WORK, "agent": who, "on": False}])

    # -- what a front end shows and does (the phone page's "answered for you") --------------
    def recent(self, since: float, limit: int = RECENT_SHOWN) -> list[dict]:
        """The rules' answers since ``since``, newest first, each with its rule's state now (answering, paused, revoked, gone)."""
        loaded = self.book.current()
        self.state.refresh()
        out = []
        for event in sorted(self._log_events(ANSWER, since), key=lambda e: -e.ts)[:limit]:
            p = event.payload
            rules = [loaded.rule(rule_id) for rule_id in str(p.get("rule", "")).split("+")]
            host = str(p.get("host", ""))
            if any(r is None for r in rules):
                state = "gone"
            elif any(self.state.revoked(r) for r in rules if r is not None):
                state = "revoked"
            elif any(self.state.paused(r.id, host) for r in rules if r is not None):
                state = "paused"
            else:
                state = "answering"
            out.append(
                {
                    "ts": event.ts,
                    "rule": str(p.get("rule", "")),
                    "decision": str(p.get("decision", "")),
                    "host": host,
                    "pane": str(p.get("pane", "")),
                    "family": str(p.get("family", "")),
                    "tool": str(p.get("tool", "")),
                    "detail": str(p.get("detail", "")),
                    "state": state,
                }
            )
        return out

    def control(self, action: str, rule_id: str = "", host: str = "", via: str = "the phone page") -> str:
        """``pause`` / ``resume`` (one rule, or all; on one host or all) or ``revoke`` one rule as it is written now; the line to show.

        A revoked rule answers nothing again until its text in the file
        changes (then it is another rule, with a ttl of its own); a pause
        ends with ``resume``.  Both go to the event log, where the service
        and ``headspace rules list`` read them; ``via``: who asked (the page,
        ``headspace rules``), written as the pause's reason.
        """
        if self.journal is None:
            raise ValueError("no event log: rules cannot be paused or revoked here")
        if action == "revoke":
            if not rule_id:
                raise ValueError("revoke names one rule")
            rule = self.book.current().rule(rule_id)
            if rule is None:
                raise ValueError(f"no rule {rule_id!r} in the rules file")
            self.state.record([{"kind": REVOKE, "agent": None, **revoke_event(rule)}])
            self.book.notice(f"rule {rule.id} revoked: it answers nothing until you edit it")
            return f"rule {rule.id}: revoked"
        if action not in ("pause", "resume"):
            raise ValueError("an action is pause, resume or revoke")
        on = action == "pause"
        self._write_pause(rule_id, f"{via}: {action}", on=on, host=host)
        return pause_words(on, rule_id, host)

    def _write_pause(self, rule_id: str, why: str, *, on: bool = True, host: str = "") -> None:
        self.state.record([{"kind": PAUSE, "agent": None, **pause_event(on, rule_id, host, why)}])

    def _log_events(self, kind: str, since: float | None = None) -> list:
        """The event log's events of ``kind`` (since ``since``) and those still waiting to be written (none without a journal)."""
        if self.journal is None:
            return []
        waiting = [e for e in self.journal.writer.waiting_of(kind) if since is None or e.ts >= since]
        if self.journal.log is None:
            return waiting
        try:
            return self.journal.log.query(kind=kind, since=since) + waiting
        except EventLogError:
            return waiting

    def _write(self, kind: str, agent: Agent, payload: dict, loaded: Loaded) -> None:
        log.info("%s: %s", kind, payload)
        keys = [list(rule.key) for rule_id in payload["rule"].split("+") if (rule := loaded.rule(rule_id))]
        self.state.record([{"kind": kind, "agent": _who(agent), **payload, "rule_key": keys[0] if len(keys) == 1 else keys}])
