"""The price table: a model's list prices and context window, and the estimate and the window they give.

The table ships as ``prices.json``, taken from the maintained ``genai-prices``
table (table_source.py says how), dated; a ``prices.json`` in the config
folder adds models or overrides them (a price headspace does not know is said
as unknown, never guessed).  Claude's "[1m]" model suffix (its 1M-token
context, where the plan has it) sets the window; the price stays the
short-context one.

Where the window comes from is kept with it: the agent's own files, the
table, or the family's stated default (``assumed``) when neither says.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, replace
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path

from ..shared.paths import config_dir
from ..shared.safe_files import Unreadable, read_regular
from .model import Tokens, Usage

log = logging.getLogger(__name__)

MILLION = 1_000_000
MAX_OWN_TABLE = 1 << 20  # bytes: the user's prices.json
OLD_AFTER_DAYS = 180  # a table older than this: doctor says so
# What may follow a listed name in a model id and still be that model: its date ("20250929", "2025-08-07"), "latest",
# a preview or experiment's tag.  "claude-sonnet-4-50" is another model, not claude-sonnet-4's.
_VARIANT = re.compile(r"(\d{4}-?\d{2}-?\d{2}|latest|preview[-\w.]*|exp[-\w.]*)", re.IGNORECASE)
LONG_CONTEXT = "[1m]"
PRICE_KEYS = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens (None: not priced, a window alone), and the model's context window in tokens (0: not known)."""

    input: float | None
    output: float | None
    cache_read: float | None
    cache_write: float | None
    window: int

    @property
    def priced(self) -> bool:
        return None not in (self.input, self.output, self.cache_read, self.cache_write)

    def cost(self, tokens: Tokens) -> float:
        assert self.priced
        return (tokens.input * self.input + tokens.output * self.output + tokens.cache_read * self.cache_read + tokens.cache_write * self.cache_write) / MILLION  # type: ignore[operator]


@dataclass(frozen=True)
class Table:
    """The prices in force: the shipped table's, with the user's file over it."""

    as_of: str  # the shipped table's date (ISO)
    source: str  # "genai-prices 0.2.3"
    prices: dict[str, Price]
    aliases: dict[str, str]  # another name a model is known by -> its name in ``prices``
    own: str = ""  # the user's file, when it added anything
    problem: str = ""  # why the user's file was not read ("" when it was, or there is none)

    def words(self) -> str:
        """ "list prices as of 2026-12-02, genai-prices 0.2.3, and your prices.json"."""
        return f"list prices as of {self.as_of}, {self.source}{', and your prices.json' if self.own else ''}"

    def age_days(self, today: date | None = None) -> int:
        try:
            return ((today or date.today()) - date.fromisoformat(self.as_of)).days
        except ValueError:
            return 10**6


def _price(entry: object, where: str) -> Price:
    """One model's entry: the four prices, or a window, or both (anything else is an error that names ``where``)."""
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: an entry is an object of prices and a window")
    values = {key: entry.get(key) for key in PRICE_KEYS}
    given = [key for key, value in values.items() if value is not None]
    if given and len(given) != len(PRICE_KEYS):
        raise ValueError(f"{where}: give all four prices ({', '.join(PRICE_KEYS)}) or none")
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0 for v in values.values() if v is not None):
        raise ValueError(f"{where}: a price is a number of dollars per million tokens, 0 or more")
    window = entry.get("window", 0)
    if not isinstance(window, int) or isinstance(window, bool) or window < 0:
        raise ValueError(f"{where}: window is a whole number of tokens")
    if not given and not window:
        raise ValueError(f"{where}: neither prices nor a window")
    number = {key: float(v) if v is not None else None for key, v in values.items()}
    return Price(number["input"], number["output"], number["cache_read"], number["cache_write"], window)


def _entries(data: object, where: str) -> tuple[dict[str, Price], dict[str, str]]:
    if not isinstance(data, dict) or not isinstance(data.get("models", {}), dict) or not isinstance(data.get("aliases", {}), dict):
        raise ValueError(f'{where}: expected {{"models": {{name: {{...}}}}, "aliases": {{name: name}}}}')
    prices = {str(name).lower(): _price(entry, f"{where}: {name}") for name, entry in data.get("models", {}).items()}
    aliases = {str(alias).lower(): str(name).lower() for alias, name in data.get("aliases", {}).items() if isinstance(name, str)}
    return prices, aliases


def own_table_path() -> Path:
    return config_dir() / "prices.json"


@cache
def table() -> Table:
    """The prices in force (read once): the shipped file, then the user's over it (a bad one is left out, and said)."""
    data = json.loads(resources.files(__package__).joinpath("prices.json").read_text(encoding="utf-8"))
    prices, aliases = _entries(data, "prices.json")
    own, problem = "", ""
    path = own_table_path()
    try:
        mine, my_aliases = _entries(json.loads(read_regular(path, MAX_OWN_TABLE, follow=True).decode("utf-8")), str(path))
    except FileNotFoundError:
        pass
    except (Unreadable, UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
        problem = f"{path} not read: {exc}"
        log.warning("%s", problem)
    else:
        if mine or my_aliases:
            own = str(path)
            prices = {**prices, **mine}
            aliases = {**{a: n for a, n in aliases.items() if a not in mine}, **my_aliases}
    return Table(str(data["as_of"]), str(data.get("source", "")), prices, aliases, own, problem)


def _listed(base: str) -> str | None:
    """The table's name for the model ``base`` (lower case, no suffix): equal to a name, or a name and a date or tag after it."""
    known = table()
    names = [name for name in (*known.prices, *known.aliases) if base == name or (base.startswith((name + "-", name + "@")) and _VARIANT.fullmatch(base[len(name) + 1 :]))]
    if not names:
        return None
    name = max(names, key=len)
    return known.aliases.get(name, name) if name not in known.prices else name


def price_of(model: str) -> Price | None:
    """The listed model ``model`` is (the longest listed name its id starts with, a date or tag after it), or None."""
    name = _listed(model.removesuffix(LONG_CONTEXT).strip().lower())
    return table().prices.get(name) if name else None


def window_of(model: str, assumed: int = 0) -> tuple[int, str]:
    """The model's context window in tokens and where it comes from: ``agent`` (its "[1m]" mark), ``table``, ``assumed`` (the family's default), or (0, "")."""
    if model.strip().lower().endswith(LONG_CONTEXT):
        return MILLION, "agent"
    price = price_of(model)
    if price is not None and price.window:
        return price.window, "table"
    return (assumed, "assumed") if assumed else (0, "")


def estimate(model: str, tokens: Tokens) -> float | None:
    """What ``tokens`` of ``model`` cost at list prices, in US dollars (None: the model is not priced)."""
    price = price_of(model)
    return round(price.cost(tokens), 6) if price is not None and price.priced else None


def estimate_all(by_model: dict[str, Tokens]) -> tuple[float | None, tuple[str, ...]]:
    """The cost of a session that used several models: what has a price, and the models left out (None: nothing priced)."""
    costs = {model: estimate(model, tokens) for model, tokens in by_model.items() if tokens.total}
    known = [c for c in costs.values() if c is not None]
    left_out = tuple(sorted(model or "an unnamed model" for model, c in costs.items() if c is None))
    return (round(sum(known), 6) if known else None), left_out


def priced(usage: Usage, assumed: int = 0) -> Usage:
    """A CLI's own counts with the estimate added, and the window from the table, or the family's default (``assumed``), where its files did not say it."""
    window, source = (usage.context_window, usage.window_source or "agent") if usage.context_window else window_of(usage.model, assumed)
    cost, left_out = estimate_all({usage.model: usage.tokens})
    return replace(usage, cost_usd=cost if usage.tokens.total else None, unpriced=left_out, context_window=window, window_source=source)
