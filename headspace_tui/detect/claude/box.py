"""What Claude's input box holds: nothing, or a draft no typed answer may join.

A nudge or a reply typed after the user's own half-written line would
submit both as one message ("half-written thought about the
parsercontinue"); Stop's ``/exit`` would be sent on the draft's end.  So
every typed line first asks this reader whether the box is empty
(``answering/keys.py``).

The box is found by its shape, as the screen reader finds it
(``screen._find_input_box``: a prompt line under a rule, another rule
under it, only a short footer below), so a question's ``❯ 1.`` cursor or a
prompt echoed in the transcript is never taken for it.  Its text is what
is drawn neither dim nor grey: an empty box shows a dim placeholder
(``Try "how does <filepath> work?"``, "Resend your message to try again"),
its first letter under the reverse-video cursor; what the user typed, or
the prompt Claude puts back after an interrupt, is drawn plain (measured
on 2.0.31 – 2.1.332; ``snapshots/panes/claude-*/*/*/idle_half_typed``).
"""

from __future__ import annotations

import re

from ..screen_text import SGR, strip_sgr
from .screen import DIM, PROMPT_LINE, _find_input_box, _Screen
from .tables import rules_for

_PIECES = re.compile(r"(\x1b\[[0-9;:]*m)")


def box_text(ansi: str) -> str | None:
    """What the input box holds: "" when empty (its placeholder is not text), the draft's rows joined; None with no input box on screen."""
    raw = ansi.split("\n")
    screen = _Screen.read(strip_sgr(ansi), raw, rules_for(None))
    bottom = screen.last_nonblank()
    box = _find_input_box(screen, bottom) if bottom >= 0 else None
    if box is None:
        return None
    _, prompt_line, rule_below = box
    glyph = PROMPT_LINE.match(screen.lines[prompt_line])
    first = raw[prompt_line].partition(glyph.group("glyph"))[2] if glyph is not None else ""
    rows = [_typed(first, first_row=True)] + [_typed(raw[k]) for k in range(prompt_line + 1, rule_below) if k < len(raw)]
    return " ".join(row for row in rows if row)


def _typed(row: str, *, first_row: bool = False) -> str:
    """The characters of one box row drawn in the text's own colour (not dim, not grey), stripped.

    On the prompt row, a reverse-video first letter followed only by dim
    ones is the cursor over the placeholder: nothing typed.
    """
    cells: list[tuple[str, bool, bool]] = []  # (character, dim, reverse)
    faint = grey = reverse = False
    for piece in _PIECES.split(row):
        if SGR.fullmatch(piece):
            faint, grey, reverse = _style(piece, faint, grey, reverse)
            continue
        cells += [(char, faint or grey, reverse) for char in piece]
    while cells and cells[0][0] in " \u00a0" and not cells[0][2]:
        cells.pop(0)  # the space between the glyph and the text
    if first_row and cells and cells[0][2] and cells[1:] and all(dim or char.isspace() for char, dim, _ in cells[1:]) and any(dim for _, dim, _ in cells[1:]):
        return ""
    return "".join(char for char, dim, _ in cells if not dim).replace("\u00a0", " ").strip()


def _style(piece: str, faint: bool, grey: bool, reverse: bool) -> tuple[bool, bool, bool]:
    """The (faint, grey, reverse) state after one SGR escape."""
    params = piece[2:-1].replace(":", ";").split(";")
    i = 0
    while i < len(params):
        p = params[i] or "0"
        if p == "0":
            faint = grey = reverse = False
        elif p == "2":
            faint = True
        elif p == "22":
            faint = False
        elif p == "7":
            reverse = True
        elif p == "27":
            reverse = False
        elif p in ("38", "48"):
            span = 3 if params[i + 1 : i + 2] == ["5"] else 5
            if p == "38":
                grey = DIM.fullmatch(f"\x1b[{';'.join(params[i : i + span])}m") is not None
            i += span
            continue
        elif p.isdigit() and (30 <= int(p) <= 37 or 90 <= int(p) <= 97 or p == "39"):
            grey = p == "90"
        i += 1
    return faint, grey, reverse
