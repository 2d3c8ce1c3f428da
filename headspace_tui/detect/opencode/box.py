"""What opencode's input box holds: nothing, or a draft no typed answer may join (issue 37).

The box is the run of ``┃`` rows above its bottom edge ``╹▀▀▀…``, as the
screen reader finds it (``screen._find_box_edge``); its last row is the
footer ("Build · <model> <provider>"), the rows above it the text.  An
empty box shows a grey placeholder (``Ask anything… "Fix broken tests"``,
drawn in colour 8); what the user typed is drawn in the text's own colour
(255), measured on 1.18.33 (``snapshots/panes/opencode-1.18.33/alt/*/idle_draft``).
A dialog over the box, or no box at all: None.
"""

from __future__ import annotations

import re

from ..screen_text import SGR, strip_sgr
from .dialog import find_dialog
from .rows import BAR, MAX_LINE, Rows, block_top
from .screen import _find_box_edge

# A grey foreground: the placeholder's colour (8, or the greys of the 256-colour ramp).
GREY = re.compile(r"\x1b\[38;5;(?:8|23[2-9]|24[0-9])m|\x1b\[90m")


def box_text(ansi: str) -> str | None:
    """What the input box holds ("" when empty: its placeholder), its rows joined; None with no box on screen."""
    raw = ansi.split("\n")
    screen = Rows([line[:MAX_LINE] for line in strip_sgr(ansi)], [row[: MAX_LINE * 8] for row in raw])
    bottom = screen.last_nonblank()
    if bottom < 0 or find_dialog(screen, bottom) is not None:
        return None
    edge = _find_box_edge(screen, bottom)
    if edge is None:
        return None
    rows = range(block_top(screen, edge - 1), edge - 1)  # the footer row (Build · model) is not text
    return " ".join(text for text in (_typed(raw[k]) for k in rows if k < len(raw)) if text)


def _typed(raw: str) -> str:
    """A box row's text after the bar, unless it is drawn grey (the placeholder)."""
    after = raw[raw.find(BAR) + 1 :] if BAR in raw else raw
    pieces = re.split(r"(\x1b\[[0-9;:]*m)", after)
    style = ""
    for piece in pieces:
        if SGR.fullmatch(piece):
            style = piece if piece.startswith("\x1b[38;") or piece in ("\x1b[90m", "\x1b[39m", "\x1b[0m", "\x1b[m") else style
            continue
        if piece.strip():
            return "" if GREY.fullmatch(style) else SGR.sub("", after).strip()
    return ""
