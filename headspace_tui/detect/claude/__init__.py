"""Claude Code's screen, read by structure first and worded per version family.

``screen`` holds the reader, ``tables`` what differs between versions.
"""

import re

from ...model import Tools
from ..family import Family, Starting
from ..modes import claude_mode
from .box import box_text
from .capabilities import ANSWER_CHANNEL, HOOKS, STATUS_FILES, TRANSCRIPTS
from .process import PROGRAM, is_claude, version_of
from .screen import classify, classify_capture, is_claude_command, screen_version, strip_sgr
from .tables import BASE, TABLES, Rules, family_of, rules_for

PASTED = re.compile(r"\[Pasted text #\d+")  # what the box shows of a long paste (measured: 900 characters; 150 are drawn as typed)

FAMILY = Family(
    name="claude",
    label="Claude",
    recognise=is_claude,
    classify=classify_capture,
    is_command=is_claude_command,
    version_of=version_of,
    mode_of=claude_mode,
    box_text=box_text,
    # Keys that arrive together are a paste to Claude: an Enter read with the text is a newline in the box (measured
    # on 2.1.330: text and Enter in one tmux command stayed in the box); once the box draws the text, even 0 s was enough.
    paste_gap=0.15,
    paste_mark=PASTED,
    status_files=STATUS_FILES,
    transcripts=TRANSCRIPTS,
    hooks=HOOKS,
    answer_channel=ANSWER_CHANNEL,
    question_review=True,
    still_dialog=True,
    # Claude Code's window for a model without the "[1m]" mark (docs: "context windows", 200K standard).
    context_window=200_000,
    starting=Starting(program=PROGRAM, resume_flag="--resume"),
    # Its tools as its hook and transcript name them: Bash runs a shell line; the file tools name their file.
    tools=Tools(shell=frozenset({"Bash"}), files=frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "Read"}), reads=frozenset({"Read"})),
    reads_version=lambda version: f"Claude Code {version}: read with the {family_of(version)} rules." if version else "Claude Code version unknown: read with the newest rules.",
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
