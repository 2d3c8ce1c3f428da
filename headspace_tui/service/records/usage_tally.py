"""One agent's tokens, context and estimated cost, folded from the turns its transcript gives.

Every block of one reply is its own line and repeats the reply's counts:
a reply is counted once, by its message id (the counts of its last line
win: they are final).  The session's totals are every reply's, a
subagent's included; the context is the last main-line reply's prompt
(uncached, cached and newly cached), as Claude counts it for its own
"context left" (2.1.330).  A line Claude made up itself (an API error's,
model "<synthetic>", zero counts) is no reply.  The first read of a
transcript is its history: the totals include it (they are the session's).
"""

from __future__ import annotations

from collections.abc import Iterable

from ...detect.turns import Turn
from ...usage.model import Tokens, Usage
from ...usage.prices import estimate_all, window_of

SYNTHETIC = "<synthetic>"  # the model of a line Claude writes itself (an API error shown as a reply)


class UsageTally:
    """The running sums of one agent's session."""

    def __init__(self, conversation: str = "") -> None:
        self.conversation = conversation  # the session id of the transcript folded ("" not known)
        self.model = ""
        self.context = 0
        self._last_id = ""
        self._last = Tokens()
        self._by_model: dict[str, Tokens] = {}  # per model: its tokens (a session can switch model)

    @property
    def totals(self) -> Tokens:
        return sum(self._by_model.values(), Tokens())

    def add(self, turns: Iterable[Turn]) -> bool:
        """Fold ``turns`` in; True when a number changed."""
        before = (self.totals, self.model, self.context)
        for turn in turns:
            if turn.role != "agent" or len(turn.usage) != 4 or turn.model == SYNTHETIC:
                continue
            tokens = Tokens(*turn.usage)
            model = turn.model or self.model
            # The same reply's next block: its counts replace the last.
            spent = tokens - self._last if turn.message_id and turn.message_id == self._last_id else tokens
            self._by_model[model] = self._by_model.get(model, Tokens()) + spent
            self._last_id, self._last = turn.message_id, tokens
            if not turn.sidechain:
                self.model = model
                self.context = tokens.input + tokens.cache_read + tokens.cache_write
        return (self.totals, self.model, self.context) != before

    def usage(self, assumed: int = 0) -> Usage:
        """The session's usage: the estimate of what has a price (the models left out named), the window by the table or ``assumed``."""
        cost, left_out = estimate_all(self._by_model)
        window, source = window_of(self.model, assumed)
        return Usage(model=self.model, tokens=self.totals, context_tokens=self.context, context_window=window, cost_usd=cost, window_source=source, unpriced=left_out, conversation=self.conversation)
