"""One claim per agent of when its current wait or turn began: the one clock every time on screen reads.

Several sources can say when a state began, and they disagree by seconds:

* Claude's status file (``statusUpdatedAt``: the start of the clock its own
  spinner shows), or its ``claude agents`` list: Claude's word, the most
  trusted;
* a hook event's time (a ``Notification`` about a permission fires seconds
  after the dialog was drawn, so a hook can be late, never early);
* the transcript's time of the line that began it (the prompt that started a
  turn; the last line Claude wrote before it stopped to wait);
* headspace's own sight: when it first saw the state, in this run or (from
  the journal) in an earlier one.

That order is the one ranking of sources (sources.py) with its one named
exception: the fuser trusts a hook most about *what* happens, but its time
is late, so for *when* it ranks below the status file (``dating_trust``).

The rules (``Clock.update``), decided so that a time on screen never jumps:

1. A new state starts a new spell; but one wait is one spell, whatever it
   is called on the way (Claude's file says "waiting" for a permission
   before the screen draws a plan or a question: the dialog it then shows
   is the same wait, and keeps its time).  A new request is a new wait,
   though: a permission or plan whose prompt reads differently from the one
   the spell began with (another command to approve) restarts the clock,
   also when the working moment between the two was never seen (an answer
   the next dialog follows within one read).  A new spell's claim is the most trusted source
   that dates it, from after the spell before began (an older claim is about
   an earlier state: a status file not yet rewritten); else headspace's
   sight, now.
2. Within one spell the claim only moves *earlier*, and only for a source at
   least as trusted as the one it holds: a more trusted source that arrives
   late corrects it (a hook's "permission" at 11 s, then the status file's
   "waiting" at 18.5 s: 18.5 s); a later time, from any source, is ignored
   (the screen confirming a hook must not turn 6 s into 5 s).
3. Nothing from the future counts beyond now (another machine's clock).

Pure: times come in as arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..model import AgentState
from .sources import Source, dating_trust
from .waits import new_request

SIGHT = Source.SIGHT  # headspace saw it (now)
REMEMBERED = Source.JOURNAL  # headspace saw it in an earlier run (the event log)
# Who dates a state, in words (the why view).  Trust is the one ranking's, for dating (sources.dating_trust).
SAYS: dict[str, str] = {
    Source.STATUS_FILE: "Claude's status file",
    Source.CLAUDE_AGENTS: "Claude's agent list",
    Source.HOOK: "a hook event",
    Source.TRANSCRIPT: "the transcript",
    REMEMBERED: "headspace, before a restart",
    SIGHT: "headspace's own sight",
}


def needs_you(value: str) -> bool:
    """Whether a state, by its value (as logged), is a wait on the user; an unknown value is not."""
    try:
        return AgentState(value).needs_you
    except ValueError:
        return False


def same_spell(a: str, b: str) -> bool:
    """Whether two states (by value) are one spell of the clock: equal, or both a wait on the user."""
    return a == b or (needs_you(a) and needs_you(b))


def remembered_claim(remembered: tuple[str, float] | None, state: AgentState) -> dict[str, float]:
    """The journal's claim on ``state``: when an earlier run of headspace saw the agent enter it, if it is the same spell.

    ``remembered`` is the event log's last word on the agent, (state, since),
    or None.  The live table (pane_watch.py) and ``headspace status``
    (scan.to_agent) both weigh it through this one rule.
    """
    if remembered is None:
        return {}
    remembered_state, since = remembered
    return {REMEMBERED: since} if since and same_spell(remembered_state, state.value) else {}


@dataclass(frozen=True)
class Claim:
    """When the current spell began, and who says so."""

    at: float
    source: str = SIGHT

    @property
    def trust(self) -> float:
        return dating_trust(self.source)


class Clock:
    """One agent's claim: when its current state began (see the module's rules)."""

    def __init__(self) -> None:
        self.state: AgentState | None = None
        self.claim: Claim | None = None
        self._floor = float("-inf")  # when the spell before this one began: a claim older than that dates nothing here
        self._prompt = ""  # the fingerprint of the wait's request, once it is read

    def update(self, state: AgentState, candidates: Mapping[str, float], now: float, prompt: str = "") -> Claim:
        """The claim for ``state`` given what each source says now (``candidates``: source → when it says the state began).

        ``prompt``: the fingerprint of the prompt on screen ("" when unread):
        a permission or plan with another one than the wait's is a new wait.
        """
        # One wait whatever it is called on the way, unless it asks anew (the next request, right after the last was answered).
        same_wait = self.state is not None and self.state.needs_you and state.needs_you and not new_request(state, self._prompt, prompt)
        if self.claim is None or (not same_wait and (state is not self.state or state.needs_you)):
            if self.claim is not None:
                self._floor = self.claim.at
            self.state = state
            self._prompt = prompt if state.needs_you else ""
            best = self._best(candidates, now)
            self.claim = best if best is not None else Claim(now, SIGHT)
            return self.claim
        self.state = state
        if state.needs_you and prompt:
            self._prompt = prompt  # its details arrived, or a question's next page (a new request started a spell above)
        best = self._best(candidates, now, at_least=self.claim.trust)
        if best is not None and best.at < self.claim.at:
            self.claim = best
        return self.claim

    def _best(self, candidates: Mapping[str, float], now: float, at_least: float = -1) -> Claim | None:
        """The most trusted usable candidate (the earliest among equals), or None."""
        usable = [Claim(min(at, now), source) for source, at in candidates.items() if at > 0 and at > self._floor and dating_trust(source) >= at_least]
        if not usable:
            return None
        return max(usable, key=lambda c: (c.trust, -c.at))


def elapsed(seconds: float, *, precise: bool = True) -> str:
    """How long, to the second when ``precise`` (an agent waiting on you), else to the minute.

    An idle or working agent's seconds matter to nobody, and not repainting
    them every second keeps an idle table idle.  Never wider than
    the table's ``TIME_WIDTH`` (days beyond a day), so its Time column never cuts one.
    """
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s" if precise else "<1m"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s" if precise else f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    days = seconds // 86400
    return f"{days}d{seconds % 86400 // 3600:02d}h" if days < 100 else f"{days}d"
