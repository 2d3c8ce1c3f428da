"""The diff view's body: every file's unified diff in one scroll, a line cursor, marked lines and remarks.

A line widget (Textual's line API): only the rows on screen are drawn, so
a diff at its caps (thousands of lines) scrolls as fast as a short one.
The cursor is a row; ``m`` anchors a range at it, and the rows from the
anchor to the cursor are the lines a remark will be about.  Each remark
shows as a mark in the gutter of its lines and its words in a row under
its last line.

=================  ===========================================
Component class    What it styles
=================  ===========================================
``diff--added``    a "+" line
``diff--removed``  a "-" line
``diff--file``     a file's header row
``diff--cursor``   the cursor's row
``diff--marked``   the rows between the anchor and the cursor
``diff--remark``   a remark's row (and its mark in the gutter)
=================  ===========================================
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...changes.model import DiffLine
from ...changes.remarks import Remark
from ...shared.safe_text import clean
from .diff_lines import Row

GUTTER = 12  # two 5-digit line numbers, a space, the remark mark


class DiffBody(ScrollView, can_focus=True):
    """The rows of a diff (``diff_lines.rows_of``), the remarks on them, and a cursor."""

    COMPONENT_CLASSES = {"diff--added", "diff--removed", "diff--file", "diff--cursor", "diff--marked", "diff--remark"}
    DEFAULT_CSS = """
    DiffBody { height: 1fr; scrollbar-size-vertical: 1; }
    DiffBody > .diff--added { background: $success 18%; }
    DiffBody > .diff--removed { background: $error 18%; }
    DiffBody > .diff--file { background: $primary 15%; }
    DiffBody > .diff--cursor { background: $primary 45%; }
    DiffBody > .diff--marked { background: $warning 30%; }
    DiffBody > .diff--remark { color: $warning; text-style: italic; }
    """
    BINDINGS = [
        Binding("down,j", "move(1)", "down", show=False),
        Binding("up,k", "move(-1)", "up", show=False),
        Binding("pagedown,space", "page(1)", "page down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("g,home", "top", "first", show=False),
        Binding("G,end", "bottom", "last", show=False),
    ]

    class CursorMoved(Message):
        """The cursor is now in file ``file`` (-1: on no file's row)."""

        def __init__(self, file: int) -> None:
            super().__init__()
            self.file = file

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[Row] = []  # the diff's own rows
        self.remarks: Sequence[Remark] = ()
        self.paths: list[str] = []  # per file index, its path (remarks are kept by path)
        self._shown: list[tuple[Row, Remark | None]] = []  # what is drawn: the rows, with each remark's row under its last line
        self.cursor = 0  # an index into _shown
        self.mark_start: int | None = None  # where a range to remark on starts (an index into _shown)

    # -- what it shows ----------------------------------------------------------------
    def show(self, rows: list[Row], paths: list[str], remarks: Sequence[Remark]) -> None:
        """New rows (a diff fetched): the cursor to the top, no range."""
        self.rows, self.paths = rows, paths
        self.cursor, self.mark_start = 0, None
        self.set_remarks(remarks)
        self.scroll_to(0, 0, animate=False)

    def set_remarks(self, remarks: Sequence[Remark]) -> None:
        """The remarks changed: their rows and marks are drawn again; the cursor stays on its row."""
        current = self._shown[self.cursor][0] if 0 <= self.cursor < len(self._shown) else None
        self.remarks = remarks
        shown: list[tuple[Row, Remark | None]] = []
        for row in self.rows:
            shown.append((row, None))
            if row.line is not None:
                path = self.paths[row.file]
                shown.extend((Row("remark", row.file, Text(clean(r.text))), r) for r in remarks if r.path == path and r.lines and r.lines[-1] == row.line)
        self._shown = shown
        if current is not None:
            self.cursor = next((i for i, (row, remark) in enumerate(shown) if row is current and remark is None), min(self.cursor, max(0, len(shown) - 1)))
        self.virtual_size = Size(self.size.width, len(shown))
        self.refresh()

    @property
    def row_count(self) -> int:
        return len(self._shown)

    def row_at(self, index: int) -> Row | None:
        return self._shown[index][0] if 0 <= index < len(self._shown) else None

    @property
    def current(self) -> Row | None:
        return self.row_at(self.cursor)

    @property
    def current_remark(self) -> Remark | None:
        """The remark under the cursor: its own row, or a line it is about."""
        if not 0 <= self.cursor < len(self._shown):
            return None
        row, remark = self._shown[self.cursor]
        if remark is not None:
            return remark
        if row.line is None:
            return None
        return next((r for r in self.remarks if r.covers(self.paths[row.file], row.line)), None)

    def marked(self) -> tuple[int, list[DiffLine]] | None:
        """The file and the lines from the anchor (or the cursor alone) to the cursor, if they are lines of one file."""
        start = self.mark_start if self.mark_start is not None else self.cursor
        low, high = sorted((start, self.cursor))
        rows = [row for row, remark in self._shown[low : high + 1] if remark is None and row.line is not None]
        if not rows or len({row.file for row in rows}) != 1:
            return None
        return rows[0].file, [row.line for row in rows if row.line is not None]

    # -- moving -----------------------------------------------------------------------
    def move_to(self, index: int, *, top: bool = False) -> None:
        """The cursor to row ``index`` (kept in range), scrolled into view (to the top of the view with ``top``)."""
        if not self._shown:
            return
        was = self.current.file if self.current is not None else -1
        self.cursor = max(0, min(index, len(self._shown) - 1))
        height = max(1, self.scrollable_content_region.height)
        if top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor < self.scroll_offset.y:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= self.scroll_offset.y + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)
        self.refresh()
        now = self.current.file if self.current is not None else -1
        if now != was:
            self.post_message(self.CursorMoved(now))

    def file_start(self, file: int) -> int | None:
        return next((i for i, (row, _) in enumerate(self._shown) if row.kind == "file" and row.file == file), None)

    def jump_file(self, file: int) -> None:
        """The cursor to file ``file``'s header, at the top of the view."""
        start = self.file_start(file)
        if start is not None:
            self.move_to(start, top=True)

    def step_file(self, step: int) -> None:
        """To the next (``step`` 1) or previous (-1) file's header; from inside a file, -1 is its own header first."""
        starts = [i for i, (row, _) in enumerate(self._shown) if row.kind == "file"]
        if not starts:
            return
        if step > 0:
            after = [i for i in starts if i > self.cursor]
            self.move_to(after[0] if after else starts[-1], top=True)
        else:
            before = [i for i in starts if i < self.cursor]
            self.move_to(before[-1] if before else starts[0], top=True)

    def action_move(self, step: int) -> None:
        self.move_to(self.cursor + step)

    def action_page(self, step: int) -> None:
        self.move_to(self.cursor + step * max(1, self.scrollable_content_region.height - 1))

    def action_top(self) -> None:
        self.move_to(0)

    def action_bottom(self) -> None:
        self.move_to(len(self._shown) - 1)

    # -- drawing ----------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if not 0 <= index < len(self._shown):
            return Strip.blank(width, base)
        text = self._line_text(index)
        segments = list(text.render(self.app.console))
        strip = Strip(Segment.apply_style(segments, base), text.cell_len)
        return strip.crop_extend(self.scroll_offset.x, self.scroll_offset.x + width, self._row_style(index))

    def _background(self, name: str) -> Style:
        """A component class's background, blended over the widget's own (its alpha applied), and nothing else."""
        return Style(bgcolor=self.get_component_rich_style(name).bgcolor)

    def _row_style(self, index: int) -> Style:
        row, remark = self._shown[index]
        style = self.rich_style
        if remark is None and row.line is not None and row.line.kind == "+":
            style += self._background("diff--added")
        elif remark is None and row.line is not None and row.line.kind == "-":
            style += self._background("diff--removed")
        elif row.kind == "file":
            style += self._background("diff--file") + Style(bold=True)
        if self.mark_start is not None and min(self.mark_start, self.cursor) <= index <= max(self.mark_start, self.cursor):
            style += self._background("diff--marked")
        if index == self.cursor and self.has_focus:
            style += self._background("diff--cursor")
        elif index == self.cursor:
            style += Style(underline=True)
        return style

    def _remark_style(self) -> Style:
        style = self.get_component_rich_style("diff--remark")
        return Style(color=style.color, italic=style.italic)

    def _line_text(self, index: int) -> Text:
        row, remark = self._shown[index]
        style = self._row_style(index)
        if remark is not None:
            mark = self._remark_style()
            return Text.assemble((" " * (GUTTER - 2) + "▸ ", mark), (row.text.plain, mark), style=style)
        line = row.line
        if line is None:
            return Text.assemble(" " * GUTTER if row.kind != "file" else "", row.text, style=style)
        noted = any(r.covers(self.paths[row.file], line) for r in self.remarks)
        gutter = Text.assemble(
            (f"{line.old or '':>5} {line.new or '':>5}", "dim"),
            ("●" if noted else " ", self._remark_style() if noted else ""),
        )
        return Text.assemble(gutter, (line.kind, "bold"), row.text, style=style)

    def on_click(self, event: events.Click) -> None:
        """A click puts the cursor on the row clicked."""
        self.move_to(self.scroll_offset.y + event.y)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self._shown))
