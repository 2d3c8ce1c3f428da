"""The rows of an opencode screen, as the reader sees them: plain text, with their ANSI where it was captured.

opencode draws most of what matters behind a heavy bar ``┃`` (your messages,
the input box, its dialogs, an error), so the helpers here read a row as a
bar row and its text, the colour of its bar, the background under each
column (the selected option of a dialog), and a run of bar rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LINE = 2000
BAR = "┃"
BAR_ROW = re.compile(r"^(?P<indent>\s*)┃(?:\s(?P<text>.*))?$")
BACKGROUND = re.compile(r"\x1b\[(?:[0-9;]*;)?48;[0-9;:]+m")
FOREGROUND = re.compile(r"\x1b\[38;[0-9;:]+m")


@dataclass
class Rows:
    """One screen: its plain rows, and the same rows with escapes (None for a plain capture)."""

    lines: list[str]
    ansi: list[str] | None

    def last_nonblank(self) -> int:
        for i in range(len(self.lines) - 1, -1, -1):
            if self.lines[i].strip():
                return i
        return -1

    def bar_text(self, row: int) -> str | None:
        """The text of a ``┃`` row (without the bar), or None when the row is not one."""
        match = BAR_ROW.match(self.lines[row])
        if match is None:
            return None
        return (match.group("text") or "").strip()

    def bar_colour(self, row: int) -> str | None:
        """The foreground SGR the row's ``┃`` is drawn in (ANSI capture only)."""
        if self.ansi is None or row >= len(self.ansi):
            return None
        raw = self.ansi[row]
        at = raw.find(BAR)
        if at < 0:
            return None
        colours = FOREGROUND.findall(raw[:at])
        return colours[-1] if colours else None

    def backgrounds(self, row: int) -> list[str]:
        """The background SGR in force at every visible column of ``row`` (ANSI only; [] without it)."""
        if self.ansi is None or row >= len(self.ansi):
            return []
        out: list[str] = []
        current = ""
        for piece in re.split(r"(\x1b\[[0-9;:]*m)", self.ansi[row]):
            if piece.startswith("\x1b["):
                if piece in ("\x1b[0m", "\x1b[m", "\x1b[49m"):
                    current = ""
                else:
                    found = BACKGROUND.search(piece)
                    if found:
                        current = found.group(0)
                continue
            out.extend(current for _ in piece)
        return out


def block_top(screen: Rows, last: int) -> int:
    """The first row of the run of ``┃`` rows that ends at ``last``, all with the bar in its column.

    (A toast drawn over the transcript has bars of its own, further right.)
    """
    column = screen.lines[last].find(BAR)
    top = last
    while top > 0 and screen.bar_text(top - 1) is not None and screen.lines[top - 1].find(BAR) == column:
        top -= 1
    return top
