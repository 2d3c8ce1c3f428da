"""A rule's life: dated when first read, within its ttl and uses, paused by its own pace or by a refusal, ended with its agent's task.

What a rule may still answer is the event log's, read through one read
model (``rule_state.py``).  A deny never pauses itself; an allow that
answered ``burst`` times within its window pauses itself, and a deny
answering at a loop's pace pauses every allow that fits the call it keeps
refusing.  A request the person refused that an allow would have allowed
pauses that allow.  An ``until = "idle"`` rule ends for an agent whose task
ended (at work, then idle).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

from ...events import Answered, Event
from ...hooks.calls import PendingCall
from ...model import DEFAULT_FAMILY, Agent, AgentState
from ...rules.judge import inside, judge
from ...rules.model import Call, Decision, Rule
from ...rules.rules_file import Loaded
from .rule_book import RuleBook
from .rule_calls import call_of
from .rule_ledger import RuleLedger, who
from .rule_state import DONE, EXPIRED, LOADED, WORK, RuleState

# States in which an agent's task is over (its turn ended, however): an ``until = "idle"`` rule ends there for it.
TASK_ENDS = frozenset({AgentState.IDLE, AgentState.INPUT, AgentState.EXITED, AgentState.ERROR, AgentState.LIMITED})
AT_WORK = frozenset({AgentState.WORKING, *(s for s in AgentState if s.needs_you)}) - TASK_ENDS


def _could_answer(rule: Rule, agent: Agent) -> bool:
    """Is the agent where the rule applies (its hosts, families, project)? Only there does its task's end end the rule."""
    if agent.host not in rule.hosts or (rule.agents and (agent.family or DEFAULT_FAMILY) not in rule.agents):
        return False
    cwd = os.path.realpath(agent.cwd) if agent.host == "local" and agent.cwd else agent.cwd
    return not rule.project or bool(cwd) and inside(cwd, rule.project)


def _span(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


class RuleLife:
    def __init__(self, book: RuleBook, state: RuleState, ledger: RuleLedger) -> None:
        self.book = book
        self.state = state
        self.ledger = ledger

    def date(self, rule: Rule) -> float:
        """When ``rule`` (this text of it) was first loaded; now, written to the event log, if never."""
        first = self.state.first(rule)
        if first is None:
            first = self.state.now()
            self.state.record([{"kind": LOADED, "agent": None, "ts": first, "rule": rule.key[0], "text": rule.key[1]}])
        return first

    def usable(self, loaded: Loaded, agent: Agent) -> list[Rule]:
        """The rules that may answer for ``agent`` now: in their ttl and uses, not paused, revoked or ended for it."""
        state, now, whom = self.state, self.state.now(), who(agent)
        out = []
        for rule in loaded.rules:
            first = self.date(rule)
            if state.expired(rule):
                continue
            if not rule.permanent and now - first > rule.ttl:
                state.record([{"kind": EXPIRED, "agent": None, "rule": rule.key[0], "text": rule.key[1]}])  # over for good
                continue
            if rule.max_uses and state.uses(rule) >= rule.max_uses:
                continue
            if state.paused(rule.id, agent.host) or state.revoked(rule) or (rule.until_idle and state.ended_for(rule, whom)):
                continue
            out.append(rule)
        return out

    def pace(self, rule: Rule, loaded: Loaded, agent: Agent, call: Call) -> None:
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
        self.ledger.pause(rule_id, why)
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

    def task_state(self, agent: Agent) -> None:
        """An agent whose task ended (at work, then idle): every ``until = "idle"`` rule ends for it; its 'at work' mark is in the log."""
        rules = [r for r in self.book.loaded.rules if r.until_idle]
        if not rules:
            return
        whom, state = who(agent), self.state
        if agent.state in TASK_ENDS:
            if not state.at_work(whom):
                return
            events: list[dict] = [{"kind": WORK, "agent": whom, "on": False}]
            for rule in rules:
                # Where it applies, or wherever it answered this agent (a call's folder may not be the agent's: Codex's workdir).
                if state.first(rule) is not None and not state.ended_for(rule, whom) and (_could_answer(rule, agent) or state.answered(rule, whom)):
                    events.append({"kind": DONE, "agent": whom, "rule": rule.id, "rule_key": list(rule.key)})
            state.record(events)
        elif agent.state in AT_WORK and not state.at_work(whom):
            state.record([{"kind": WORK, "agent": whom, "on": True}])

    def gone(self, whom: str) -> None:
        """An agent that is gone takes its 'at work' mark with it (agents come and go all day)."""
        if self.state.at_work(whom):
            self.state.record([{"kind": WORK, "agent": whom, "on": False}])
