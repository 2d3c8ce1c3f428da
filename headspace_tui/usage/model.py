"""Tokens and usage as plain data: what a row, ``status --json`` and the page show of an agent's cost and room."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tokens:
    """Token counts: what the agent sent (``input``, uncached), what it got (``output``), and its prompt cache's reads and writes."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(self.input + other.input, self.output + other.output, self.cache_read + other.cache_read, self.cache_write + other.cache_write)

    def __sub__(self, other: Tokens) -> Tokens:
        return Tokens(self.input - other.input, self.output - other.output, self.cache_read - other.cache_read, self.cache_write - other.cache_write)

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def to_dict(self) -> dict[str, int]:
        return {"input": self.input, "output": self.output, "cache_read": self.cache_read, "cache_write": self.cache_write}


@dataclass(frozen=True)
class Usage:
    """One agent's session as its own files tell it.

    ``context_tokens`` is what its last request filled of the model's window
    (its prompt, cached or not); ``context_window`` the
    window (0: not known).  ``cost_usd`` is an estimate at the list prices
    of ``prices.json`` (None: a model it does not list).  (A rate limit that
    stopped the agent is its state, ``limited``, with ``Agent.limited_until``.)
    """

    model: str = ""
    tokens: Tokens = Tokens()
    context_tokens: int = 0
    context_window: int = 0
    cost_usd: float | None = None

    @property
    def context_pct(self) -> int | None:
        """The share of the window in use, rounded down (None: window not known)."""
        if not self.context_window:
            return None
        return min(100, self.context_tokens * 100 // self.context_window)
