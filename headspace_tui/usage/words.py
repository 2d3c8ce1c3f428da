"""An agent's usage in words, the same for every front end: the why screen, the phone's card, ``status``'s line."""

from __future__ import annotations

import time

from .model import PlanUse, Usage
from .prices import table


def cost_words(cost: float | None) -> str:
    """ "$0.42 est.", or why there is no estimate."""
    if cost is None:
        return "no estimate (a model the price table does not list)"
    return f"${cost:.2f} est." if cost >= 0.01 else f"${cost:.4f} est."


WINDOW_FROM = {"agent": "window given by the agent", "table": "window from the price table", "assumed": "window assumed: the agent's default, nothing said it"}


def context_words(usage: Usage) -> str:
    """ "7,300 of 200,000 tokens (3%) · window given by the agent", or the tokens alone when the window is not known."""
    if not usage.context_window:
        return f"{usage.context_tokens:,} tokens (the model's window is not known)"
    source = WINDOW_FROM.get(usage.window_source, "")
    return f"{usage.context_tokens:,} of {usage.context_window:,} tokens ({usage.context_pct}%)" + (f" · {source}" if source else "")


def token_words(usage: Usage) -> str:
    t = usage.tokens
    return f"{t.input:,} in · {t.output:,} out · {t.cache_read:,} cache read · {t.cache_write:,} cache write"


def limit_words(until: float, now: float | None = None) -> str:
    """ "limited until 20:50" (its rate limit's reset; the date too when not within a day), or that no reset was named."""
    if not until:
        return "limited (no reset time given)"
    now = time.time() if now is None else now
    shown = "%H:%M" if abs(until - now) < 86400 else "%b %d %H:%M"
    return f"limited until {time.strftime(shown, time.localtime(until))}"


def usage_lines(usage: Usage | None, limited_until: float | None = None) -> list[tuple[str, str]]:
    """(label, words) for each thing known of the agent's usage, in the order a reader wants them.

    ``limited_until``: the agent is ``limited`` (its rate limit stopped it),
    and when that resets (0.0: no time named); None when it is not limited.
    """
    lines = []
    if limited_until is not None:
        lines.append(("Rate limit", limit_words(limited_until)))
    if usage is None:
        return lines
    lines.append(("Context", context_words(usage) + (f" · {usage.model}" if usage.model else "")))
    lines.append(("Tokens", token_words(usage)))
    left_out = f"; leaves out {', '.join(usage.unpriced)}: not in the price table" if usage.unpriced else ""
    lines.append(("Cost", f"{cost_words(usage.cost_usd)} ({table().words()}{left_out})" if usage.cost_usd is not None else cost_words(None)))
    if usage.plan:
        lines.append(("Plan", " · ".join(plan_words(p) for p in usage.plan)))
    return lines


def plan_words(plan: PlanUse) -> str:
    """ "5h: 42% used, resets 20:50" (the reset in local time; left out when not named)."""
    words = f"{plan.name}: {plan.used_pct:.0f}% used"
    if plan.resets_at:
        words += f", resets {time.strftime('%a %H:%M' if plan.resets_at - time.time() > 86_400 else '%H:%M', time.localtime(plan.resets_at))}"
    return words
