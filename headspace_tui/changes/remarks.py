"""Remarks on an agent's diff, and the one prompt that carries them all to the agent.

The user marks a line (or a run of lines) of what the agent changed and
says what is wrong with it; ``s`` sends every remark on that agent as one
prompt, through the same send as a reply (``r``): the same refusals, the
same guarded keys.  One prompt, not one per remark: each prompt is a turn,
and an agent told five things at once fixes them together instead of
starting five turns.

The quoted lines are the agent's own file contents, typed into its pane:
control characters would be keys there (an Esc, a Ctrl+C), so they are
replaced by visible pictures (``safe_text.clean``) and tabs by spaces.  The
reply path types one line (a newline would submit early), so the prompt is
one line; a long quote is cut, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..shared.safe_text import clean
from .model import DiffLine

QUOTED_LINES = 12  # lines of a remark quoted in the prompt; the rest are counted
QUOTED_CHARS = 200  # one quoted line's characters (a minified line would swamp the prompt)
TAB = 4  # spaces a tab becomes in a quoted line


@dataclass(frozen=True)
class Remark:
    """What the user said of ``lines`` (one or more, in order, of one file's diff)."""

    path: str
    lines: tuple[DiffLine, ...]
    text: str

    def covers(self, path: str, line: DiffLine) -> bool:
        return path == self.path and line in self.lines


def where(remark: Remark) -> str:
    """Which lines, by their numbers in the file as it is now ("line 12", "lines 3-5"); removed lines by their old numbers."""
    new = [line.new for line in remark.lines if line.new]
    numbers, side = (new, "") if new else ([line.old for line in remark.lines if line.old], "removed ")
    if not numbers:
        return "a line"
    first, last = min(numbers), max(numbers)
    return f"{side}line {first}" if first == last else f"{side}lines {first}-{last}"


def quoted(line: DiffLine) -> str:
    """One diff line as the prompt quotes it: its marker and text, safe to type into a pane, in backticks."""
    text = clean(line.text.expandtabs(TAB), QUOTED_CHARS).rstrip()
    return f"`{line.kind.strip() or ' '}{text}`"


def one_line(text: str) -> str:
    """The user's own words on one line, safe to type (a paste may have brought control characters)."""
    return " ".join(clean(text).split())


def describe(remark: Remark) -> str:
    """One remark in the prompt: the file, the lines, the lines quoted, what the user said."""
    quotes = [quoted(line) for line in remark.lines[:QUOTED_LINES]]
    more = len(remark.lines) - QUOTED_LINES
    if more > 0:
        quotes.append(f"(+{more} more lines)")
    return f"{clean(remark.path)} {where(remark)}: {' '.join(quotes)} → {one_line(remark.text)}"


def prompt(remarks: Sequence[Remark]) -> str:
    """Every remark in one prompt for the agent ("" for none)."""
    if not remarks:
        return ""
    if len(remarks) == 1:
        return f"A remark on your changes: {describe(remarks[0])}"
    listed = " ".join(f"{n}) {describe(remark)}" for n, remark in enumerate(remarks, 1))
    return f"Remarks on your changes ({len(remarks)}): {listed}"
