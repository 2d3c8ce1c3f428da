"""Where ``prices.json`` comes from: the ``genai-prices`` package's maintained table, taken, never typed by hand.

Why a generated file rather than the package itself at run time: the table is
read by the service, the CLI and the remote probe, and ``genai-prices``
brings pydantic and 0.2 s of imports for a few hundred numbers.  So the
maintained table is the source, this module copies what headspace needs
(list prices per million tokens, the context window, the names a model is
known by) for the vendors whose models the agents run, and a test holds the
shipped file to what the pinned ``genai-prices`` gives: a hand edit, or a
new release of the table not taken, fails it.

Run ``python -m headspace_tui.usage.table_source > headspace_tui/usage/prices.json``
(``genai-prices`` is in the ``test`` extra) after raising its pin.
"""

from __future__ import annotations

import datetime
import json
import sys
from decimal import Decimal
from importlib import metadata
from typing import Any

# The vendors whose models the agents headspace reads run (opencode names any of them).
VENDORS = ("anthropic", "openai", "google", "deepseek", "mistral", "x-ai", "moonshotai", "zai", "minimax")
ABOUT = (
    "List prices in US dollars per million tokens and context windows in tokens, taken from the genai-prices table "
    "(source; do not edit: python -m headspace_tui.usage.table_source). Prices are the base tier (long-context tiers "
    "are not modelled). A model is matched by the longest name here (or in aliases) that its id equals, or that its id "
    "starts with before a date or tag. Everything computed from it is an estimate, shown as 'est.'; a model not listed "
    "has no estimate. A prices.json in headspace's config folder, in this form, adds to it or overrides it."
)


def _base(value: Any) -> float:
    """A price per million tokens: a tiered price's base (the short-context one), 0 when none is given."""
    if value is None:
        return 0.0
    value = getattr(value, "base", value)
    return float(Decimal(value))


def _current(prices: Any, today: datetime.date) -> Any:
    """A model's prices as they stand ``today``: the last of its dated prices that has started (a time-of-day one is not modelled)."""
    if not isinstance(prices, list):
        return prices
    chosen = None
    for conditional in prices:
        start = getattr(conditional.constraint, "start_date", None)
        if conditional.constraint is None or (start is not None and start <= today):
            chosen = conditional.prices
    return chosen


def _names(match: Any) -> list[str]:
    """The plain names a model's match clauses give (equals and starts-with; a regex or a 'contains' is not a name)."""
    found: list[str] = []
    for clause in getattr(match, "or_", None) or [match]:
        name = getattr(clause, "equals", None) or getattr(clause, "starts_with", None)
        if isinstance(name, str) and name:
            found.append(name.lower())
    return found


def generate(today: datetime.date) -> dict[str, Any]:
    """The table as ``prices.json`` holds it, from the installed ``genai-prices``."""
    from genai_prices.data_snapshot import get_snapshot

    snapshot = get_snapshot()
    models: dict[str, dict[str, Any]] = {}
    aliases: dict[str, str] = {}
    for provider in snapshot.providers:
        if provider.id not in VENDORS:
            continue
        for model in provider.models:
            name = model.id.lower()
            if name in models:
                continue  # one name, one model: the first vendor's (their order is the table's)
            price = _current(model.prices, today)
            if price is None:
                continue
            models[name] = {
                "input": _base(price.input_mtok),
                "output": _base(price.output_mtok),
                "cache_read": _base(price.cache_read_mtok),
                "cache_write": _base(price.cache_write_mtok),
                "window": int(model.context_window or 0),
            }
            for alias in _names(model.match):
                if alias != name:
                    aliases.setdefault(alias, name)
    aliases = {alias: name for alias, name in aliases.items() if alias not in models}
    return {
        "about": ABOUT,
        "as_of": today.isoformat(),
        "source": f"genai-prices {metadata.version('genai-prices')}",
        "models": dict(sorted(models.items())),
        "aliases": dict(sorted(aliases.items())),
    }


def render(table: dict[str, Any]) -> str:
    """The file's text: one model per line, so a new release of the table reads as a short diff."""
    lines = ["{"]
    for key in ("about", "as_of", "source"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(table[key])},")
    for key in ("models", "aliases"):
        items = list(table[key].items())
        lines.append(f"  {json.dumps(key)}: {{")
        for i, (name, value) in enumerate(items):
            comma = "," if i < len(items) - 1 else ""
            lines.append(f"    {json.dumps(name)}: {json.dumps(value)}{comma}")
        lines.append("  }," if key == "models" else "  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    today = datetime.date.fromisoformat(sys.argv[1]) if len(sys.argv) > 1 else datetime.date.today()
    sys.stdout.write(render(generate(today)))


if __name__ == "__main__":
    main()
