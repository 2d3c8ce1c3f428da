"""When a session's control client may be attached again: never in a storm.

Every control client headspace attaches is work for the user's tmux server,
and the server is what must never be harmed.  tmux 3.3a (Debian 12's) was
seen to crash at the end of re-attach storms: a client that attached and
ended at once was attached again at once, up to 250 times a second, for
sessions that were being killed.  So, per session:

* a client that ended soon after attaching (or never attached) is replaced
  only after a delay that doubles, 1 s up to a minute;
* one that ran well for a while is replaced at once (a killed client, a
  server that dropped it), still behind the two rules below;
* never more than ``per_minute`` attaches in any minute;
* and (the monitor's side) never before a discovery made after the end has
  seen the session still there: a session that no longer exists is not
  attached again at all.

Pure: the clock is passed in, so tests drive it without waiting.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

PER_MINUTE = 3
FIRST_DELAY = 1.0
MAX_DELAY = 60.0
HEALTHY_AFTER = 30.0  # a client that ran this long before it ended is replaced without a delay


@dataclass
class AttachPace:
    per_minute: int = PER_MINUTE
    first: float = FIRST_DELAY
    limit: float = MAX_DELAY
    healthy_after: float = HEALTHY_AFTER
    _recent: deque[float] = field(default_factory=deque)  # when the last attaches were tried
    _delay: float = 0.0  # the next delay after a short life
    _not_before: float = 0.0

    def attaching(self, now: float) -> None:
        """An attach is being tried now (whether it works or not)."""
        self._recent.append(now)
        while len(self._recent) > self.per_minute:
            self._recent.popleft()

    def ended(self, now: float, attached_at: float | None) -> None:
        """The client ended (``attached_at`` None: it never attached)."""
        if attached_at is not None and now - attached_at >= self.healthy_after:
            self._delay = 0.0
            wait = 0.0
        else:
            self._delay = min(self.limit, max(self.first, self._delay * 2))
            wait = self._delay
        self._not_before = now + wait

    @classmethod
    def never(cls) -> AttachPace:
        """The pace of a one-shot look (``headspace status`` with no service): its panes are read by captures, none is attached."""
        return cls(_not_before=float("inf"))

    def next_at(self) -> float:
        """The earliest time of the next attach."""
        at = self._not_before
        if len(self._recent) >= self.per_minute:
            at = max(at, self._recent[0] + 60.0)
        return at
