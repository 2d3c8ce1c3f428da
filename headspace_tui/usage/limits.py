"""A rate limit that stopped an agent, read from its own words: that it is limited, and when the limit resets.

Claude Code says it on screen and in its transcript (measured on 2.1.330's
bundle; 2.0.x's words too):

* an API key's 429, after its retries: "API Error: Request rejected (429) ·
  rate limit error" (2.0.x: "API Error: Rate limit reached"); no reset time;
* a plan's limit: "You've hit your 5-hour limit · resets 3pm (Europe/London)",
  "weekly limit", "Opus limit"; 2.0.x: "Session limit reached ∙ resets 3pm",
  "Usage limit reached".

The reset is a clock time ("3pm", "3:30pm", "Jan 5, 3pm"), in the zone it
names (else this machine's): the first such time after the words were read.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

LIMITED = re.compile(
    r"Request rejected \(429\)|Rate limit reached|rate[ _]limit(?:ed| error| exceeded)"
    r"|(?:hit|reached) your [\w -]{0,40}limit|(?:Session|Weekly|Usage|Opus) limit reached|usage limit",
    re.IGNORECASE,
)
_RESET = re.compile(
    r"resets?\s+(?:at\s+)?(?:(?P<month>[A-Z][a-z]{2})\s+(?P<day>\d{1,2}),?\s+)?(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>am|pm)"
    r"(?:\s*\((?P<zone>[A-Za-z_]+(?:/[A-Za-z_+-]+)*)\))?",
    re.IGNORECASE,
)
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}


def limited(text: str) -> bool:
    """Do these words say a rate limit stopped the agent?"""
    return bool(text) and LIMITED.search(text) is not None


def reset_at(text: str, now: float | None = None) -> float:
    """When the limit these words name resets (epoch seconds), the first such time after ``now``; 0.0 when they name none."""
    found = _RESET.search(text or "")
    if found is None:
        return 0.0
    now = time.time() if now is None else now
    zone = None
    if found.group("zone"):
        try:
            zone = ZoneInfo(found.group("zone"))
        except (ZoneInfoNotFoundError, ValueError):
            zone = None
    here = datetime.fromtimestamp(now, zone) if zone is not None else datetime.fromtimestamp(now).astimezone()
    hour = int(found.group("hour")) % 12 + (12 if found.group("half").lower() == "pm" else 0)
    minute = int(found.group("minute") or 0)
    if hour > 23 or minute > 59:
        return 0.0
    when = here.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if found.group("month"):
        month = _MONTHS.get(found.group("month").lower())
        if month is None:
            return 0.0
        try:
            when = when.replace(month=month, day=int(found.group("day")))
        except ValueError:
            return 0.0
        if when.timestamp() <= now - 86400:
            when = when.replace(year=when.year + 1)  # "Jan 5" read in late December
        return when.timestamp()
    if when.timestamp() <= now:
        when += timedelta(days=1)
    return when.timestamp()
