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
