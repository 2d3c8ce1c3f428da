"""An agent's usage in words, the same for every front end: the why screen, the phone's card, ``status``'s line."""

from __future__ import annotations

import time

from .model import Usage
from .prices import table


def cost_words(cost: float | None) -> str:
    """"$0.42 est.", or why there is no estimate."""
    if cost is None:
        return "no estimate (a model the price table does not list)"
    return f"${cost:.2f} est." if cost >= 0.01 else f"${cost:.4f} est."


def context_words(usage: Usage) -> str:
    """"7,300 of 200,000 tokens (3%)", or the tokens alone when the window is not known."""
    if not usage.context_window:
        return f"{usage.context_tokens:,} tokens (the model's window is not known)"
    return f"{usage.context_tokens:,} of {usage.context_window:,} tokens ({usage.context_pct}%)"


def token_words(usage: Usage) -> str:
    t = usage.tokens
    return f"{t.input:,} in · {t.output:,} out · {t.cache_read:,} cache read · {t.cache_write:,} cache write"


def limit_words(usage: Usage, clock=time.localtime) -> str:
    """"limited until 20:50" (its rate limit's reset), "" when not limited."""
    if not usage.limited:
        return ""
    if not usage.limited_until:
        return "limited (no reset time given)"
    return f"limited until {time.strftime('%H:%M', clock(usage.limited_until))}"


def usage_lines(usage: Usage) -> list[tuple[str, str]]:
    """(label, words) for each thing known of the agent's usage, in the order a reader wants them."""
    as_of, _ = table()
    lines = []
    limited = limit_words(usage)
    if limited:
        lines.append(("Rate limit", limited))
    lines.append(("Context", context_words(usage) + (f" · {usage.model}" if usage.model else "")))
    lines.append(("Tokens", token_words(usage)))
    lines.append(("Cost", f"{cost_words(usage.cost_usd)} (list prices as of {as_of})" if usage.cost_usd is not None else cost_words(None)))
    if usage.plan_use:
        lines.append(("Plan use", " · ".join(f"{name.replace('_', ' ')} {pct:.0f}%" for name, pct in sorted(usage.plan_use.items()))))
    return lines
