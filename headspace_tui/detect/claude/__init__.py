"""Claude Code's screen, read by structure first and worded per version family.

``screen`` holds the reader, ``tables`` what differs between versions.
"""

from ..family import Family
from ..modes import claude_mode
from .box import box_text
from .capabilities import ANSWER_CHANNEL, HOOKS, STATUS_FILES, TRANSCRIPTS
from .process import is_claude, version_of
from .screen import classify, classify_capture, is_claude_command, screen_version, strip_sgr
from .tables import BASE, TABLES, Rules, family_of, rules_for

FAMILY = Family(
    name="claude",
    label="Claude",
    recognise=is_claude,
    classify=classify_capture,
    is_command=is_claude_command,
    version_of=version_of,
    mode_of=claude_mode,
    box_text=box_text,
    status_files=STATUS_FILES,
    transcripts=TRANSCRIPTS,
    hooks=HOOKS,
    answer_channel=ANSWER_CHANNEL,
    question_review=True,
)

__all__ = [
    "BASE",
    "FAMILY",
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
