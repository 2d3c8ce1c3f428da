"""Claude Code's screen, read by structure first and worded per version family.

``screen`` holds the reader, ``tables`` what differs between versions.
"""

from .screen import classify, classify_capture, is_claude_command, screen_version, strip_sgr
from .tables import BASE, TABLES, Rules, family_of, rules_for

__all__ = [
    "BASE",
    "TABLES",
    "Rules",
    "classify",
    "classify_capture",
    "family_of",
    "is_claude_command",
    "rules_for",
    "screen_version",
    "strip_sgr",
]
