"""The prompts each agent's user submitted, as two sources tell them: which are new turns.

Claude's ``UserPromptSubmit`` hook and its transcript both tell every
prompt, each with its own time for it (a few hundredths of a second apart),
and either may be read first or seconds later.  A prompt told by the other
source close in time is the same prompt, not another turn (that would hide
the blocked calls between).  Two prompts told by the same source are two
turns however close: a fast hand, or a scripted one, sends the next prompt a
second after the last turn ended, and a window of time alone took that for
the first prompt told again, so the second turn was never begun.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SAME_PROMPT = 3.0  # seconds between the hook's and the transcript's time of one prompt (they are one turn)
KEPT = 8  # prompts remembered per agent: a source a few prompts behind the other still finds its match


@dataclass
class Told:
    """One prompt, at the time its first teller gave, and who has told it."""

    at: float
    sources: set[str] = field(default_factory=set)


class PromptsTold:
    """Per agent, the last prompts told, matched across sources."""

    def __init__(self) -> None:
        self._told: dict[str, list[Told]] = {}

    def new_turn(self, pane_id: str, at: float, source: str) -> bool:
        """Is the prompt ``source`` tells at ``at`` (its host's clock) a turn not told before?

        Not when this source told a prompt as late or later (a repeat, or a
        history read again); not when another source told one within
        ``SAME_PROMPT`` that this source has not matched yet (the nearest is
        taken, after the last this source told).
        """
        told = self._told.setdefault(pane_id, [])
        mine = [i for i, t in enumerate(told) if source in t.sources]
        last = mine[-1] if mine else -1
        if last >= 0 and at <= told[last].at:
            return False
        others = [t for t in told[last + 1 :] if source not in t.sources and abs(t.at - at) <= SAME_PROMPT]
        if others:
            min(others, key=lambda t: abs(t.at - at)).sources.add(source)
            return False
        told.append(Told(at, {source}))
        del told[:-KEPT]
        return True

    def forget(self, pane_id: str) -> None:
        self._told.pop(pane_id, None)
