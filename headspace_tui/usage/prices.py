"""The price table (``prices.json``): a model's list prices and context window, and the estimate they give.

One dated file, read once: the numbers change a few times a year, and a
price headspace does not know is said as unknown, never guessed.  Claude's
"[1m]" model suffix (its 1M-token context, where the plan has it) sets the
window; the price stays the short-context one, as the file says.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

from .model import Tokens, Usage

MILLION = 1_000_000
# What may follow a listed name in a model id and still be that model: its date ("20250929", "2025-08-07"), "latest",
# a preview or experiment's tag.  "claude-sonnet-4-50" is another model, not claude-sonnet-4's.
_VARIANT = re.compile(r"(\d{4}-?\d{2}-?\d{2}|latest|preview[-\w.]*|exp[-\w.]*)", re.IGNORECASE)
LONG_CONTEXT = "[1m]"


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens, and the model's context window in tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    window: int

    def cost(self, tokens: Tokens) -> float:
        return (tokens.input * self.input + tokens.output * self.output + tokens.cache_read * self.cache_read + tokens.cache_write * self.cache_write) / MILLION


@cache
def table() -> tuple[str, dict[str, Price]]:
    """(as_of, model name → price), from the file shipped with the package."""
    data = json.loads(resources.files(__package__).joinpath("prices.json").read_text(encoding="utf-8"))
    prices = {name: Price(float(p["input"]), float(p["output"]), float(p["cache_read"]), float(p["cache_write"]), int(p["window"])) for name, p in data["models"].items()}
    return str(data["as_of"]), prices


def price_of(model: str) -> Price | None:
    """The listed model ``model`` is (the longest listed name its id starts with, a date or tag after it), or None."""
    base = model.removesuffix(LONG_CONTEXT).strip().lower()
    _, prices = table()
    names = [name for name in prices if base == name or (base.startswith((name + "-", name + "@")) and _VARIANT.fullmatch(base[len(name) + 1 :]))]
    return prices[max(names, key=len)] if names else None


def window_of(model: str) -> int:
    """The model's context window in tokens (0: not known)."""
    if model.strip().lower().endswith(LONG_CONTEXT):
        return MILLION
    price = price_of(model)
    return price.window if price is not None else 0


def estimate(model: str, tokens: Tokens) -> float | None:
    """What ``tokens`` of ``model`` cost at list prices, in US dollars (None: the model is not listed)."""
    price = price_of(model)
    return round(price.cost(tokens), 6) if price is not None else None


def priced(usage: Usage) -> Usage:
    """A CLI's own counts with the estimate added, and the window from the table where its files did not say it."""
    return replace(usage, cost_usd=estimate(usage.model, usage.tokens) if usage.tokens.total else None, context_window=usage.context_window or window_of(usage.model))
