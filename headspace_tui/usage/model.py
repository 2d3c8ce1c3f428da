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

    def to_list(self) -> list[int]:
        return [self.input, self.output, self.cache_read, self.cache_write]

    @classmethod
    def from_list(cls, value: object) -> Tokens | None:
        """``to_list``'s four counts back, from data written elsewhere (the probe's answer, the event log); None: not that."""
        if isinstance(value, list) and len(value) == 4 and all(_count(n) for n in value):
            return cls(*value)
        return None

    def to_dict(self) -> dict[str, int]:
        return {"input": self.input, "output": self.output, "cache_read": self.cache_read, "cache_write": self.cache_write}


@dataclass(frozen=True)
class PlanUse:
    """How much of one of the plan's windows is used, as the agent's CLI was told (Codex: its ``rate_limits``)."""

    window_minutes: int  # 300: the 5-hour window; 10080: the week (0: not said)
    used_pct: float
    resets_at: float = 0.0  # epoch seconds (0: not said)

    @property
    def name(self) -> str:
        return {300: "5h", 10080: "weekly"}.get(self.window_minutes) or (f"{self.window_minutes}m" if self.window_minutes else "plan")


@dataclass(frozen=True)
class Usage:
    """One agent's session as its own files tell it.

    ``context_tokens`` is what its last request filled of the model's window
    (its prompt, cached or not); ``context_window`` the
    window (0: not known).  ``cost_usd`` is an estimate at the list prices
    of the price table (None: no model of the session is priced).  ``plan`` is the
    plan's windows where the agent's files say them.  (A rate limit that
    stopped the agent is its state, ``limited``, with ``Agent.limited_until``.)
    """

    model: str = ""
    tokens: Tokens = Tokens()
    context_tokens: int = 0
    context_window: int = 0
    cost_usd: float | None = None
    plan: tuple[PlanUse, ...] = ()
    # Where ``context_window`` comes from: "agent" (its own files or words), "table" (the price table),
    # "assumed" (the family's stated default: nothing said it), "" (not known).
    window_source: str = ""
    unpriced: tuple[str, ...] = ()  # models of this session the estimate leaves out (the table has no price for them)
    conversation: str = ""  # the conversation these totals are of (Claude's session id; "" not known): /clear starts another

    @property
    def context_pct(self) -> int | None:
        """The share of the window in use, rounded down (None: window not known)."""
        if not self.context_window:
            return None
        return min(100, self.context_tokens * 100 // self.context_window)

    def to_row(self) -> dict:
        """As plain JSON, for the probe's answer (a remote host sends numbers, not files)."""
        return {
            "model": self.model,
            "tokens": self.tokens.to_list(),
            "context_tokens": self.context_tokens,
            "context_window": self.context_window,
            "window_source": self.window_source,
            "plan": [[p.window_minutes, p.used_pct, p.resets_at] for p in self.plan],
        }

    @classmethod
    def from_row(cls, row: object) -> Usage | None:
        """``to_row``'s JSON back (None: not that shape); the cost is estimated here, not sent."""
        if not isinstance(row, dict):
            return None
        tokens, plan = Tokens.from_list(row.get("tokens")), row.get("plan") or []
        if tokens is None or not isinstance(plan, list):
            return None
        context, window = row.get("context_tokens"), row.get("context_window")
        if not (_count(context) and _count(window) and isinstance(row.get("model"), str)):
            return None
        windows = tuple(PlanUse(int(p[0]), float(p[1]), float(p[2])) for p in plan if isinstance(p, list) and len(p) == 3 and _count(p[0]) and all(isinstance(v, (int, float)) for v in p[1:]))
        source = row.get("window_source") if row.get("window_source") in ("agent", "table", "assumed") else ""
        return cls(str(row["model"])[:200], tokens, int(context), int(window), plan=windows, window_source=str(source))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Spent:
    """Tokens and their estimated cost (``cost_usd`` sums what has a price; ``unpriced`` tokens were of a model the table does not list)."""

    tokens: Tokens = Tokens()
    cost_usd: float = 0.0
    unpriced: int = 0

    def __add__(self, other: Spent) -> Spent:
        return Spent(self.tokens + other.tokens, round(self.cost_usd + other.cost_usd, 6), self.unpriced + other.unpriced)


@dataclass(frozen=True)
class SpentRow:
    """One agent's spending on one day (``day``: ISO date, local time; ``agent``: where it ran, as its row named it)."""

    day: str
    agent: str
    spent: Spent


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
