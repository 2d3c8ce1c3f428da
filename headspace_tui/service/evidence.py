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
it (the hook's), else (keys, the pane: read from the screen) to the latest
call the transcript showed without a result when the answer was given.  Nothing here grows with the agents that come and go:
per agent a few answers and recent tool uses are kept, and all of an agent
goes when it ends.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass

from ..detect.claude.transcript import ToolOutcome, Turn
from ..events import Answered

KEPT_USES = 64  # recent tool calls per agent, by id
KEPT_ANSWERS = 16  # answers per agent still waiting for their result

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


class AnswerEvidence:
    """Answers waiting for the result of their tool call, per agent (its ``who`` key)."""

    def __init__(self) -> None:
        self._uses: dict[str, OrderedDict[str, tuple[str, str]]] = {}  # agent -> tool_use_id -> (tool, exact input)
        self._waiting: dict[str, list[tuple[Answered, str]]] = {}  # agent -> (answer, the tool_use_id it is bound to or "")

    def answered(self, key: str, answer: Answered) -> None:
        """Wait for the result of the call ``answer`` answered.

        An answer through the hook knows its call's exact input and is matched
        by it.  One read from the screen (keys, the pane) may not even know
        the tool's name: it answered the dialog on screen, which is the latest
        call the transcript showed without a result yet, and is bound to it now.
        """
        bound = ""
        uses = self._uses.get(key)
        if not answer.tool_input and uses:
            bound = next((i for i, (tool, _) in reversed(uses.items()) if not answer.tool or tool == answer.tool), "")
        waiting = self._waiting.setdefault(key, [])
        waiting.append((answer, bound))
        del waiting[:-KEPT_ANSWERS]

    def turns(self, key: str, turns: list[Turn]) -> list[Confirmation]:
        """Note the tool calls these turns make; confirm the waiting answers their results settle."""
        uses = self._uses.get(key)
        found: list[Confirmation] = []
        for turn in turns:
            for (tool, data), use_id in zip(turn.tool_uses, turn.tool_use_ids, strict=False):
                if not use_id:
                    continue
                if uses is None:
                    uses = self._uses[key] = OrderedDict()
                uses[use_id] = (tool, json.dumps(data, sort_keys=True, ensure_ascii=False))
                while len(uses) > KEPT_USES:
                    uses.popitem(last=False)
            for outcome in turn.outcomes:
                call = uses.pop(outcome.tool_use_id, None) if uses is not None else None
                if call is None:
                    continue
                answer = self._take(key, outcome.tool_use_id, call)
                if answer is not None:
                    first = first_from(answer.channel, outcome.by)
                    found.append(Confirmation(answer, outcome.tool_use_id, first, _words(outcome), outcome.reason, *call))
        return found

    def _take(self, key: str, use_id: str, call: tuple[str, str]) -> Answered | None:
        """The oldest waiting answer to this call: bound to it, or the same tool with the same exact input."""
        tool, exact = call
        waiting = self._waiting.get(key, [])
        for i, (answer, bound) in enumerate(waiting):
            if bound == use_id or (not bound and answer.tool_input and answer.tool == tool and answer.tool_input == exact):
                return waiting.pop(i)[0]
        return None

    def ended(self, key: str) -> None:
        self._uses.pop(key, None)
        self._waiting.pop(key, None)

    def __len__(self) -> int:
        """Agents with anything kept (for the churn tests: it must not grow with agents that are gone)."""
        return len(set(self._uses) | set(self._waiting))
