"""What every family's screen reader needs of a captured screen, written once.

A ``capture-pane -p -e`` capture is rows of text with SGR colour escapes;
every reader drops the colours the same way, knows the same shells (a pane
whose agent has gone shows one again), and names a prompt by the same kind
of short hash.  A fix to any of these is a fix for all four families.
Pure: no tmux, no clock.
"""

from __future__ import annotations

import hashlib
import re

SGR = re.compile(r"\x1b\[[0-9;:]*m")  # one colour or style escape
# ``#{pane_current_command}`` when the pane shows a shell, not an agent (any family's agent has left).
SHELLS = frozenset({"bash", "zsh", "sh", "fish", "dash", "ksh", "tcsh", "csh", "nu", "xonsh", "elvish", "login"})


def strip_sgr(ansi: str) -> list[str]:
    """The screen rows of a ``capture-pane -p -e`` capture, colours dropped."""
    return [line.rstrip() for line in SGR.sub("", ansi).split("\n")]


def fingerprint(*parts: str) -> str:
    """A short stable hash of what identifies a prompt (its words, not its cursor or animation).

    Two readings of the same dialog have the same one; the answering guard
    refuses keys when the prompt on screen has another.
    """
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]


ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Marks drawn with no width of their own: variation selectors ("◆︎" is ◆ and U+FE0E), zero-width spaces (a box's cursor cell).
NO_WIDTH = re.compile("[\u200b-\u200d\u2060\ufe0e\ufe0f]")
# A scrollbar in the last column, a block or a bar after blanks (Qwen Code's, Copilot CLI's history).
SCROLLBAR = re.compile(r"\s+[█┃│▐]$")
MAX_ROW = 2000  # characters of a row kept: a hostile row costs no more than this


def clean_rows(ansi: str, *, scrollbar: bool = False) -> list[str]:
    """The rows of a capture as plain text: every escape, control character and zero-width mark dropped, trailing blanks
    and trailing blank rows trimmed (and, with ``scrollbar``, a scrollbar at the right edge).

    (Outside text: what a pane shows goes into evidence and prompts, so no
    control character survives to a terminal that shows them.)
    """
    rows = [NO_WIDTH.sub("", CONTROL.sub("", ESCAPES.sub("", line)))[:MAX_ROW].rstrip() for line in ansi.split("\n")]
    if scrollbar:
        rows = [SCROLLBAR.sub("", row) for row in rows]
    while rows and not rows[-1]:
        rows.pop()
    return rows
