"""Who answered first, in Claude's own words: an answer's audit confirmed from the transcript.

headspace records an answer when it hands a decision to the hook, types
keys, or sees a dialog go away while it typed nothing ("answered in the
pane").  That is headspace's view, from the order of its own events: when
the person at the pane presses a key while headspace's hook decision is on
its way, only Claude knows which one it took.  Claude says so in the
transcript line that carries the tool's result (``ToolOutcome``), so each
answer waits here, per agent, for the result of its tool call, and the
journal writes Claude's word beside the answer when it comes.

What Claude's words prove (2.1.330, measured live with a hook and keys
racing at -100..+100 ms; the lines are in tests/data/transcripts/answers/, the race in
tests/e2e/test_answer_channel.py):

* a result decided by a hook, for an answer headspace gave through the
  hook: headspace was first; for one it saw in the pane: some hook was (not
  headspace's keys, not the person);
* a result decided in the dialog, for an answer headspace gave through the
  hook: the person at the pane was first and the hook's decision was not
  used; for keys or the pane: the dialog answered, as recorded;
* a refusal that stops the turn is written the same for a key and for a
  hook (``user-rejected``): not confirmed either way, and said so.

Matching is by the tool call: by its exact input where the answer knows
it (the hook's), else (keys, the pane: read from the screen) to the call
whose dialog was up when headspace began answering.  The transcript and
the answer race (measured on the CI machine): keys are recorded once the
pane shows Claude moved on, and Claude writes the tool's result 20-30 ms
before that; headspace reads the transcript 0.1-1 s late, or early.  So
an answer is matched whichever comes first:

* the call was read, its result not yet: bound to it, confirmed by the result;
* the result was read too (after the keys began): confirmed at once;
* the call was not read yet (the transcript lags): keys whose dialog named
  its tool are bound to the first call of that tool read after they began,
  within ``LATE_BIND`` seconds.

The times compared are headspace's own (``Answered.began``, and when this
module read each line), never Claude's clock: a remote host's may be off.
Nothing here grows with the agents that come and go: per agent a few
answers and recent tool calls are kept, and all of an agent goes when it ends.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ..detect.claude.transcript import ToolOutcome, Turn
from ..events import Answered

KEPT_USES = 64  # recent tool calls per agent, by id (with or without their result)
KEPT_ANSWERS = 16  # answers per agent still waiting for their result
LATE_BIND = 10.0  # s after the keys began: a call read later than this is not the dialog they answered
SETTLED_GRACE = 2.0  # s: an answer with the exact input (the pane's, seen gone late) may claim a result read this long before

# What each ``first`` says, for people (the timeline).
FIRST_SAYS = {
    "headspace": "headspace answered first",
    "pane": "the person at the pane answered first",
    "hook": "another hook answered first",
    "rule": "a rule allowed it, no dialog",
    "unconfirmed": "cannot tell who answered first",
}


@dataclass(frozen=True)
class Confirmation:
    """Claude's word on one answer."""

    answer: Answered
    tool_use_id: str
    first: str  # "headspace", "pane", "hook" (a hook not headspace's), "rule" or "unconfirmed"
    evidence: str  # what Claude wrote, for people: "a hook allowed it"
    said: str = ""  # Claude's own words for it, as written: "hook", "user_temporary", "user-rejected", ...
    tool: str = ""  # the call as the transcript has it (a key's answer knew only the screen)
    tool_input: str = ""  # its exact input, JSON with sorted keys


def _words(outcome: ToolOutcome) -> str:
    verb = "allowed" if outcome.accepted else "refused" if outcome.accepted is False else "settled"
    if outcome.by == "hook":
        return f"a hook {verb} it"
    if outcome.by == "dialog":
        return f"a key in the dialog {verb} it"
    if outcome.by == "rule":
        return f"a rule {verb} it"
    if outcome.accepted is False:
        return "refused, in words Claude writes for a key and a hook alike"
    return "Claude did not say who decided"


def first_from(channel: str, by: str) -> str:
    """Who answered first, given how headspace answered (``channel``) and how Claude says it was decided (``by``)."""
    if by == "hook":
        return "headspace" if channel == "hook" else "hook"
    if by == "dialog":
        return "pane" if channel in ("hook", "pane") else "headspace"
    if by == "rule":
        return "rule"
    return "unconfirmed"


@dataclass
class _Call:
    """One tool call as the transcript showed it, and when headspace read it and its result."""

    tool: str
    exact: str  # its input, JSON with sorted keys
    seen_at: float
    outcome: ToolOutcome | None = None  # its result, not claimed by an answer yet
    settled_at: float = 0.0


class AnswerEvidence:
    """Answers waiting for the result of their tool call, and recent calls waiting for an answer, per agent (its ``who`` key).

    ``clock`` must be the answers' clock (``Answered.at`` and ``began``).
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._calls: dict[str, OrderedDict[str, _Call]] = {}  # agent -> tool_use_id -> the call
        self._waiting: dict[str, list[tuple[Answered, str]]] = {}  # agent -> (answer, the tool_use_id it is bound to or "")

    def answered(self, key: str, answer: Answered) -> list[Confirmation]:
        """Match ``answer`` to its call: confirmed now if the call's result was already read, else it waits.

        An answer through the hook knows its call's exact input and is matched
        by it.  One read from the screen (keys, the pane) may not even know
        the tool's name: it answered the dialog that was up when headspace
        began, the latest call read by then whose result had not come
        (or the first read after, when the transcript lags).
        """
        calls = self._calls.get(key)
        use_id = self._match(key, answer, calls) if calls else ""
        settled = calls[use_id].outcome if calls and use_id else None
        if calls and settled is not None:
            return [_confirm(answer, use_id, calls.pop(use_id), settled)]
        waiting = self._waiting.setdefault(key, [])
        waiting.append((answer, use_id))
        del waiting[:-KEPT_ANSWERS]
        return []

    def _match(self, key: str, answer: Answered, calls: OrderedDict[str, _Call]) -> str:
        began = answer.began or answer.at
        taken = {bound for _, bound in self._waiting.get(key, []) if bound}
        grace = SETTLED_GRACE if answer.tool_input else 0.0
        open_then = [
            (use_id, call)
            for use_id, call in calls.items()
            if use_id not in taken and _fits(answer, call) and (call.outcome is None or call.settled_at >= began - grace)
        ]
        if answer.tool_input:
            # The oldest of identical calls still waiting; else one whose result came just before this was recorded.
            waiting = [use_id for use_id, call in open_then if call.outcome is None]
            return waiting[0] if waiting else open_then[-1][0] if open_then else ""
        before = [use_id for use_id, call in open_then if call.seen_at <= began]
        if before:
            return before[-1]
        if not _may_bind_late(answer):
            return ""
        return next((use_id for use_id, call in open_then if call.seen_at - began <= LATE_BIND), "")

    def turns(self, key: str, turns: list[Turn]) -> list[Confirmation]:
        """Note the tool calls these turns make; confirm the waiting answers their results settle."""
        calls = self._calls.get(key)
        found: list[Confirmation] = []
        now = self.clock()
        for turn in turns:
            for (tool, data), use_id in zip(turn.tool_uses, turn.tool_use_ids, strict=False):
                if not use_id:
                    continue
                if calls is None:
                    calls = self._calls[key] = OrderedDict()
                calls[use_id] = _Call(tool, json.dumps(data, sort_keys=True, ensure_ascii=False), now)
                while len(calls) > KEPT_USES:
                    calls.popitem(last=False)
                self._bind_late(key, use_id, calls[use_id])
            for outcome in turn.outcomes:
                call = calls.get(outcome.tool_use_id) if calls is not None else None
                if calls is None or call is None or call.outcome is not None:
                    continue
                answer = self._take(key, outcome.tool_use_id, call)
                if answer is None:
                    call.outcome, call.settled_at = outcome, now  # an answer recorded a moment from now may claim it
                    continue
                del calls[outcome.tool_use_id]
                found.append(_confirm(answer, outcome.tool_use_id, call, outcome))
        return found

    def _bind_late(self, key: str, use_id: str, call: _Call) -> None:
        """A call read after an answer from the screen began: the dialog it answered, when the transcript lagged."""
        waiting = self._waiting.get(key, [])
        for i, (answer, bound) in enumerate(waiting):
            if not bound and _may_bind_late(answer) and _fits(answer, call) and 0 <= call.seen_at - (answer.began or answer.at) <= LATE_BIND:
                waiting[i] = (answer, use_id)
                return

    def _take(self, key: str, use_id: str, call: _Call) -> Answered | None:
        """The oldest waiting answer to this call: bound to it, or the same tool with the same exact input."""
        waiting = self._waiting.get(key, [])
        for i, (answer, bound) in enumerate(waiting):
            if bound == use_id or (not bound and answer.tool_input and answer.tool == call.tool and answer.tool_input == call.exact):
                return waiting.pop(i)[0]
        return None

    def adopt(self, key: str, earlier: AnswerEvidence) -> None:
        """Take the calls a replay of history (``earlier``) read, when none were read here: a dialog up at start-up can be matched."""
        if key in earlier._calls and not self._calls.get(key):
            self._calls[key] = earlier._calls[key]

    def ended(self, key: str) -> None:
        self._calls.pop(key, None)
        self._waiting.pop(key, None)

    def __len__(self) -> int:
        """Agents with anything kept (for the churn tests: it must not grow with agents that are gone)."""
        return len(set(self._calls) | set(self._waiting))


def _may_bind_late(answer: Answered) -> bool:
    """Only keys whose dialog named its tool are matched to a call read after them.

    Not every dialog is a tool call (a folder's trust, a model's choice): a
    call read after keys that answered one of those is just Claude's next
    call.  A tool's dialog names it; the pane's answers know their call's input.
    """
    return answer.channel == "keys" and bool(answer.tool) and not answer.tool_input


def _fits(answer: Answered, call: _Call) -> bool:
    """Could ``answer`` be to ``call``: the exact input when the answer knows it, else the tool's name when the screen showed it."""
    if answer.tool_input:
        return answer.tool == call.tool and answer.tool_input == call.exact
    return not answer.tool or answer.tool == call.tool


def _confirm(answer: Answered, use_id: str, call: _Call, outcome: ToolOutcome) -> Confirmation:
    return Confirmation(answer, use_id, first_from(answer.channel, outcome.by), _words(outcome), outcome.reason, call.tool, call.exact)
