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

Matching is by the tool call.  An answer through the hook (or one seen
in the pane while a hook waited) knows the call's exact input and is
matched by it; when its call's line is not read yet, it waits for it
``UNREAD_WAIT`` seconds, then gives up (its call was there and is gone).
Keys know only the dialog on screen: their call is one that was open when
headspace began sending them (``Answered.began``): read before then, its
result not read before then, not one a rule allowed (no dialog was shown
for it), of the tool and the command or file the dialog showed (a call
acting on one matches no keys whose dialog showed none).  Keys are
recorded once the pane shows Claude moved on, and Claude wrote the tool's
result up to 25 ms before that (measured live), so that result may already
have been read: calls keep their result a while for an answer about to
claim it.  With several such calls open (parallel calls), the keys are
confirmed only when the results rule out all but one (a rule let the
others run).  A call read only after the keys began is never theirs: a
wrong word from Claude is worse than none.

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

from ...detect.turns import ToolOutcome, Turn
from ...events import Answered
from ...hooks.calls import same_detail
from ...hooks.spool import tool_detail

KEPT_USES = 64  # recent tool calls per agent, by id (open, or settled and not claimed yet)
KEPT_ANSWERS = 16  # answers per agent still waiting for their result
SETTLED_KEPT = 30.0  # s a result no answer claimed is kept: keys are recorded well within this of their result
SETTLED_GRACE = 2.0  # s: the pane's answer is seen (the dialog gone) after the person answered; its result may be read first
UNREAD_WAIT = 10.0  # s an answer with the exact input waits for its call's line (asked before the answer: only the read lags)
KEPT_GONE = 256  # ids of calls claimed or let go, per agent: a line read again does not bring one back

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
    detail: str  # the command, file or URL it acts on, as a dialog shows it
    seen_at: float
    outcome: ToolOutcome | None = None  # its result, while no answer has claimed it
    cwd: str = ""  # the folder Claude was in as it asked (its transcript line's)
    settled_at: float = 0.0


@dataclass
class _Waiting:
    """An answer waiting for Claude's word: the calls it may be to (keys), or the one it is bound to."""

    answer: Answered
    candidates: tuple[str, ...]  # () for an exact-input answer whose call was not read yet: matched by input


class AnswerEvidence:
    """Answers waiting for the result of their tool call, and calls settled a moment ago, per agent (its ``who`` key).

    ``clock`` must be the answers' clock (``Answered.at`` and ``began``).
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._calls: dict[str, OrderedDict[str, _Call]] = {}  # agent -> tool_use_id -> the call
        self._gone: dict[str, OrderedDict[str, None]] = {}  # agent -> ids of calls no longer kept
        self._waiting: dict[str, list[_Waiting]] = {}

    def answered(self, key: str, answer: Answered) -> list[Confirmation]:
        """Match ``answer`` to its call: confirmed now if its result was already read, else it waits (or, unmatched keys, is let go)."""
        candidates = self._candidates(key, answer)
        if not candidates and not answer.tool_input:
            return []  # no call was open for these keys: not confirmable, never guessed
        waiting = self._waiting.setdefault(key, [])
        entry = _Waiting(answer, candidates)
        done = self._settle(key, entry) if candidates else None
        if done is not None:
            return [done] if isinstance(done, Confirmation) else []
        waiting.append(entry)
        del waiting[:-KEPT_ANSWERS]
        return []

    def _candidates(self, key: str, answer: Answered) -> tuple[str, ...]:
        calls = self._calls.get(key)
        if not calls:
            return ()
        began = answer.started
        taken = {w.candidates[0] for w in self._waiting.get(key, []) if len(w.candidates) == 1}
        grace = SETTLED_GRACE if answer.channel == "pane" else 0.0
        fitting = [use_id for use_id, call in calls.items() if use_id not in taken and _fits(answer, call) and (call.outcome is None or (call.settled_at >= began - grace and not _by_rule(call)))]
        if answer.tool_input:
            # The oldest of identical calls still waiting; else one whose result came just before this was recorded.
            unsettled = [use_id for use_id in fitting if calls[use_id].outcome is None]
            return (unsettled[0],) if unsettled else (fitting[-1],) if fitting else ()
        return tuple(use_id for use_id in fitting if calls[use_id].seen_at <= began)

    def _settle(self, key: str, entry: _Waiting) -> Confirmation | bool | None:
        """Claude's word on ``entry`` if its calls' results make one certain; False: they never can; None: wait."""
        calls = self._calls.get(key, OrderedDict())
        live = [c for c in entry.candidates if c in calls and not _by_rule(calls[c])]
        results = [calls[c].outcome for c in live]
        if None in results:
            return None
        if len(live) != 1 or results[0] is None:
            return False  # none left, or several no rule ruled out: which one these keys answered is not known
        self._let_go(key, live[0])
        return _confirm(entry.answer, live[0], calls.pop(live[0]), results[0])

    def _let_go(self, key: str, use_id: str) -> None:
        gone = self._gone.setdefault(key, OrderedDict())
        gone[use_id] = None
        while len(gone) > KEPT_GONE:
            gone.popitem(last=False)

    def turns(self, key: str, turns: list[Turn]) -> list[Confirmation]:
        """Note the tool calls these turns make; confirm the waiting answers their results settle."""
        calls = self._calls.get(key)
        found: list[Confirmation] = []
        now = self.clock()
        for turn in turns:
            for (tool, data), use_id in zip(turn.tool_uses, turn.tool_use_ids, strict=False):
                if not use_id or (calls is not None and use_id in calls) or use_id in self._gone.get(key, ()):
                    continue  # a line read again (a file read from the start): as it was
                if calls is None:
                    calls = self._calls[key] = OrderedDict()
                calls[use_id] = _Call(tool, json.dumps(data, sort_keys=True, ensure_ascii=False), tool_detail(data), now, cwd=turn.cwd)
                while len(calls) > KEPT_USES:
                    self._let_go(key, calls.popitem(last=False)[0])
            for outcome in turn.outcomes:
                call = calls.get(outcome.tool_use_id) if calls is not None else None
                if call is None or call.outcome is not None:
                    continue
                call.outcome, call.settled_at = outcome, now
                found.extend(self._result(key, outcome.tool_use_id, call))
        if calls:
            self._forget_settled(key, calls, now)
        self._give_up_unread(key, now)
        return found

    def _result(self, key: str, use_id: str, call: _Call) -> list[Confirmation]:
        """A call's result was read: settle the answers waiting on it."""
        waiting = self._waiting.get(key, [])
        held = {c for entry in waiting for c in entry.candidates}
        for entry in waiting:
            if use_id not in held and not entry.candidates and _fits(entry.answer, call) and call.seen_at - entry.answer.started <= UNREAD_WAIT:
                entry.candidates = (use_id,)  # the oldest answer with this exact input, its call read late
                break
        found = []
        for entry in [e for e in waiting if use_id in e.candidates]:
            done = self._settle(key, entry)
            if done is not None:
                waiting.remove(entry)
            if isinstance(done, Confirmation):
                found.append(done)
        return found

    def _forget_settled(self, key: str, calls: OrderedDict[str, _Call], now: float) -> None:
        """Results no answer claimed, read long enough ago that none will (a Write's input is a whole file)."""
        wanted = {c for entry in self._waiting.get(key, []) for c in entry.candidates}
        for use_id in [i for i, call in calls.items() if call.outcome is not None and now - call.settled_at > SETTLED_KEPT and i not in wanted]:
            del calls[use_id]
            self._let_go(key, use_id)

    def _give_up_unread(self, key: str, now: float) -> None:
        """An answer with the exact input whose call was not read in time: its call was there and is gone (claimed, long settled)."""
        waiting = self._waiting.get(key)
        if waiting:
            waiting[:] = [e for e in waiting if e.candidates or now - e.answer.started <= UNREAD_WAIT]

    def adopt(self, key: str, earlier: AnswerEvidence) -> None:
        """Take the open calls a replay of history (``earlier``) read, as read before any answer of this run.

        A dialog up when headspace started can then be matched; calls the
        replay saw settled are history, never claimed by a new answer.
        """
        replayed = earlier._calls.get(key)
        if not replayed or self._calls.get(key):
            return
        self._calls[key] = OrderedDict((i, _Call(c.tool, c.exact, c.detail, 0.0, cwd=c.cwd)) for i, c in replayed.items() if c.outcome is None)

    def open_calls(self, key: str) -> list[tuple[str, str, str]]:
        """The agent's tool calls read from its transcript whose result has not come: (tool, exact input, folder), oldest first.

        A dialog on screen is one of them; the rules answer by keys only when
        exactly one of them is the command the dialog shows (rule_answers.py).
        """
        calls = self._calls.get(key)
        return [(c.tool, c.exact, c.cwd) for c in calls.values() if c.outcome is None] if calls else []

    def ended(self, key: str) -> None:
        self._calls.pop(key, None)
        self._gone.pop(key, None)
        self._waiting.pop(key, None)

    def __len__(self) -> int:
        """Agents with anything kept (for the churn tests: it must not grow with agents that are gone)."""
        return len(set(self._calls) | set(self._gone) | set(self._waiting))


def _by_rule(call: _Call) -> bool:
    """A rule or mode let the call run: Claude showed no dialog for it, so no answer was to it."""
    return call.outcome is not None and call.outcome.by == "rule"


def _fits(answer: Answered, call: _Call) -> bool:
    """Could ``answer`` be to ``call``: the exact input when the answer knows it, else what the dialog showed (its tool, its command)."""
    if answer.tool_input:
        return answer.tool == call.tool and answer.tool_input == call.exact
    if answer.tool and answer.tool != call.tool:
        return False
    # A call acting on a command or file is the keys' only if their dialog showed it (not read from the screen: not known).
    return not call.detail or same_detail(call.tool, call.detail, answer.shown)


def _confirm(answer: Answered, use_id: str, call: _Call, outcome: ToolOutcome) -> Confirmation:
    return Confirmation(answer, use_id, first_from(answer.channel, outcome.by), _words(outcome), outcome.reason, call.tool, call.exact)
