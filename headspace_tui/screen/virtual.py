"""A terminal screen in memory: replays a tmux pane and hands it to rich.

headspace shows a live copy of each agent's pane.  tmux gives us that pane as
``capture-pane -p -e`` text (rows with SGR colour escapes); pyte turns it into
a grid of styled cells, and this module turns the grid into ``rich.text.Text``
the UI can draw.  Keeping the emulator behind this small class means the rest
of headspace never deals with pyte's quirks (CRLF, wide-char stub cells, its
colour names) and the code stays testable without tmux or a terminal.

Pure: only pyte and rich (plus ``wcwidth``, the width table pyte itself uses).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from itertools import groupby
from typing import Any

import pyte
from pyte import modes as pyte_modes
from rich.color import Color, ColorParseError
from rich.style import Style
from rich.text import Span, Text
from wcwidth import wcwidth

# pyte's colour names (from pyte.graphics) that rich spells differently.
# pyte calls SGR 33 "brown" and has a typo for SGR 105; both are mapped so
# no colour silently falls back to the default.
_PYTE_TO_RICH_NAMES = {
    "brown": "yellow",
    "brightbrown": "bright_yellow",
    "bfightmagenta": "bright_magenta",
}

# The attributes of a pyte Char after ``data``: fg, bg, bold, italics,
# underscore, strikethrough, reverse, blink.  Cells with equal keys share a span.
_Attrs = tuple[Any, ...]
_BLANK = pyte.screens.Char(" ")
_DEFAULT_ATTRS: _Attrs = tuple(_BLANK[1:])


class _PaneScreen(pyte.Screen):
    """A pyte screen that behaves like one tmux pane.

    Two differences from a plain ``pyte.Screen``:

    * ``clip`` makes overlong text stop at the right edge instead of wrapping.
      A capture is already a grid of rows; if the pane was resized between
      capture and render, wrapping would push every later row down.
    * DECCOLM (``ESC[?3h``, "132 columns") is ignored: the pane's size is
      tmux's to decide, and a stray escape must not resize our copy of it.
    """

    clip: bool = False

    def draw(self, data: str) -> None:
        if self.clip:
            data = _fit(data, self.columns - self.cursor.x)
        super().draw(data)

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private"):
            modes = tuple(m for m in modes if m << 5 != pyte_modes.DECCOLM)
        super().set_mode(*modes, **kwargs)


class _TolerantStream(pyte.Stream):
    """A pyte stream that drops an escape sequence it cannot apply.

    pyte passes a CSI's parameters straight to screen methods, so a malformed
    sequence (too many parameters, a non-ASCII digit) raises mid-feed and the
    rest of the data is lost.  A real terminal ignores such a sequence and
    goes on; pyte has already reset its parser when the error reaches us, so
    we do the same.  Pane output is untrusted input: it must never crash us.
    """

    def _send_to_parser(self, data: str) -> bool | None:
        try:
            return super()._send_to_parser(data)
        except Exception:  # noqa: BLE001 -- any failure means "ignore this sequence".
            return self._taking_plain_text


def _fit(data: str, room: int) -> str:
    """The longest prefix of ``data`` that fits in ``room`` cells.

    Uses pyte's own width table so our cut agrees with where pyte puts cells;
    a wide character that would straddle the edge is dropped whole.
    """
    if len(data) * 2 <= room:  # No character is wider than two cells.
        return data
    used = 0
    for index, char in enumerate(data):
        used += max(wcwidth(char), 0)
        if used > room:
            return data[:index]
    return data


def _rich_color(value: str) -> Color | None:
    """pyte's colour value as a rich Color; None means "the widget's default".

    pyte stores "default", a name like "brightred", or six hex digits (it
    already converts 256-colour indexes to hex).  Anything unparseable, e.g.
    an out-of-range 24-bit escape, falls back to the default instead of raising.
    """
    if value == "default":
        return None
    name = _PYTE_TO_RICH_NAMES.get(value, value)
    if name.startswith("bright") and not name.startswith("bright_"):
        name = "bright_" + name[len("bright") :]
    try:
        return Color.parse(name)
    except ColorParseError:
        pass
    try:
        return Color.parse("#" + value)
    except ColorParseError:
        return None


@lru_cache(maxsize=4096)
def _style(attrs: _Attrs) -> Style | None:
    """The rich Style for one set of pyte attributes, cached: screens reuse few.

    False flags become None rather than False so the style adds to whatever
    base style the widget draws with instead of switching attributes off.
    """
    if attrs == _DEFAULT_ATTRS:
        return None
    fg, bg, bold, italics, underscore, strikethrough, reverse, blink = attrs
    return Style(
        color=_rich_color(fg),
        bgcolor=_rich_color(bg),
        bold=bold or None,
        italic=italics or None,
        underline=underscore or None,
        strike=strikethrough or None,
        reverse=reverse or None,
        blink=blink or None,
    )


class VirtualScreen:
    """One pane's screen: fed terminal output, read back as text or rich Text."""

    def __init__(self, width: int, height: int) -> None:
        _check_size(width, height)
        self._screen = _PaneScreen(width, height)
        self._stream = _TolerantStream(self._screen)

    @property
    def width(self) -> int:
        return self._screen.columns

    @property
    def height(self) -> int:
        return self._screen.lines

    @property
    def cursor(self) -> tuple[int, int]:
        """(x, y) of pyte's cursor.

        After ``load_capture`` this is where the capture's text ended, not the
        pane's real cursor (a capture does not carry it; ask tmux for that).
        """
        return self._screen.cursor.x, self._screen.cursor.y

    def load_capture(self, ansi: str) -> None:
        """Replace the screen with a ``tmux capture-pane -p -e`` capture.

        capture-pane separates rows with a bare LF, which pyte treats as "down
        one row, same column", so rows become CRLF.  The capture's final LF is
        dropped: on the last row it would scroll everything up by one.  Extra
        rows scroll off the top (keeping the last ``height`` rows, with colour
        state carried over exactly as the escapes say) and overlong rows are
        clipped, so a capture from a pane of another size still lines up.
        """
        self._screen.reset()
        self._stream = _TolerantStream(self._screen)  # Forget any half-parsed escape.
        rows = ansi.split("\n")
        if len(rows) > 1 and rows[-1] == "":
            rows.pop()
        self._screen.clip = True
        try:
            self._stream.feed("\r\n".join(rows))
        finally:
            self._screen.clip = False

    def feed(self, data: str) -> None:
        """Feed raw terminal output as a terminal would see it; no reset.

        Escapes split across calls are fine: the stream keeps its parse state.
        """
        self._stream.feed(data)

    def resize(self, width: int, height: int) -> None:
        """Follow the pane's size; pyte drops rows from the top and columns from the right."""
        _check_size(width, height)
        self._screen.resize(lines=height, columns=width)

    def lines(self) -> list[str]:
        """The plain text of every row, trailing blanks stripped."""
        return [self._row_text(y).rstrip() for y in range(self.height)]

    def to_rich(self) -> Text:
        """The whole screen as one Text, rows joined by "\\n", colours kept."""
        parts: list[str] = []
        spans: list[Span] = []
        offset = 0
        for y in range(self.height):
            if y:
                parts.append("\n")
                offset += 1
            offset = self._append_row(y, parts, spans, offset)
        return Text("".join(parts), spans=spans, end="", no_wrap=True)

    def to_rich_lines(self) -> list[Text]:
        """One Text per row, for widgets that draw row by row."""
        lines = []
        for y in range(self.height):
            parts: list[str] = []
            spans: list[Span] = []
            self._append_row(y, parts, spans, 0)
            lines.append(Text("".join(parts), spans=spans, end="", no_wrap=True))
        return lines

    def runs(self) -> list[list[tuple[str, _Attrs]]]:
        """Each row as runs of equal style, ``(text, (fg, bg, bold, italics, underscore, strikethrough, reverse, blink))``.

        The screen as plain data, for a front end that is not rich (the web page).
        """
        rows = []
        for y in range(self.height):
            cells = _trim_blank_tail(self._cells(y))
            rows.append([("".join(cell.data for cell in run), attrs) for attrs, run in groupby(cells, key=lambda cell: cell[1:])])
        return rows

    def _cells(self, y: int) -> list[pyte.screens.Char]:
        """Row ``y`` as cells, without the "" stubs pyte puts after wide characters.

        The stub only reserves the second cell; emitting it as a space would
        push the rest of the row one column right.
        """
        screen = self._screen
        row: Mapping[int, Any] = screen.buffer.get(y, {})
        end = screen.columns
        if screen.default_char == _BLANK:
            # pyte stores only written cells; past the last one all are blank,
            # so most rows cost their text, not the full width.
            end = min(end, max(row, default=-1) + 1)
        default = screen.default_char
        return [cell for cell in (row.get(x, default) for x in range(end)) if cell.data]

    def _row_text(self, y: int) -> str:
        return "".join(cell.data for cell in self._cells(y))

    def _append_row(self, y: int, parts: list[str], spans: list[Span], offset: int) -> int:
        """Append row ``y``'s runs of equal style to ``parts``/``spans``; return the new offset.

        Building spans directly (one per run, none for default cells) is much
        faster than appending cell by cell, and trailing default blanks are
        cut so a mostly empty row costs nothing.
        """
        cells = _trim_blank_tail(self._cells(y))
        for attrs, run in groupby(cells, key=lambda cell: cell[1:]):
            text = "".join(cell.data for cell in run)
            style = _style(attrs)
            if style is not None:
                spans.append(Span(offset, offset + len(text), style))
            parts.append(text)
            offset += len(text)
        return offset


def _trim_blank_tail(cells: list[pyte.screens.Char]) -> list[pyte.screens.Char]:
    """Drop trailing spaces that carry no style; coloured blanks (a background) stay."""
    end = len(cells)
    while end and cells[end - 1] == _BLANK:
        end -= 1
    return cells[:end]


def _check_size(width: int, height: int) -> None:
    """Reject sizes pyte would quietly ignore (it treats 0 as "keep the old size")."""
    if width < 1 or height < 1:
        raise ValueError(f"screen size must be at least 1x1, got {width}x{height}")
