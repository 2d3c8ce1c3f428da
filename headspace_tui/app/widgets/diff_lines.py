"""A diff (changes/model.py) as the rows the diff view shows: file headers, hunk headers, lines, what the caps left out.

Built once per fetched diff, off the UI loop (syntax colouring is the costly
part: one pygments pass per hunk, not per line, so a token that spans lines
is coloured as a whole).  Every text here is the agent's file contents or
paths, so outside text: each is cleaned of control characters (one
character for one, so the colours still line up) and only ever travels as
``Text``, never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.syntax import Syntax
from rich.text import Span, Text

from ...changes.model import Diff, DiffLine, FileDiff
from ...shared.safe_text import clean

TAB = 4  # columns a tab takes in a shown line
STATUS = {"modified": "M", "added": "A", "deleted": "D", "renamed": "R", "binary": "B"}


@dataclass(frozen=True)
class Row:
    """One row of the diff view.

    ``kind``: "file" (its header), "hunk" (``@@ … @@``), "line" (a diff
    line, ``line`` set), "more" (what the caps left out).  ``file``: the
    index of its file in the diff (-1 for the diff's own "more files").
    ``text``: what it shows after the gutter, coloured.
    """

    kind: str
    file: int
    text: Text
    line: DiffLine | None = None


def shown(text: str) -> str:
    """A line of a file as the view shows it: tabs as spaces, control characters as visible pictures."""
    return clean(text.expandtabs(TAB))


def file_label(diff: FileDiff) -> Text:
    """The file list's entry: its status letter, its path (a rename's old path too) and its counts."""
    path = f"{diff.old_path} → {diff.path}" if diff.old_path else diff.path
    return Text.assemble(
        (STATUS.get(diff.status, "?"), "bold"),
        " ",
        clean(path),
        " ",
        (f"+{diff.added}", "green"),
        " ",
        (f"−{diff.removed}", "red"),
    )


def file_header(diff: FileDiff) -> Text:
    path = f"{diff.old_path} → {diff.path}" if diff.old_path else diff.path
    return Text.assemble((clean(path), "bold"), (f"  {diff.status}  +{diff.added} −{diff.removed}", "dim"))


def coloured(path: str, texts: list[str], dark: bool) -> list[Text]:
    """``texts`` (lines of ``path``, already ``shown``) coloured as its language, by its name; plain where none is known."""
    if not texts:
        return []
    lexer = Syntax.guess_lexer(path)
    if lexer == "default":
        return [Text(text) for text in texts]
    code = "\n".join(texts)
    syntax = Syntax(code, lexer, theme="ansi_dark" if dark else "ansi_light", background_color="default")
    lines = syntax.highlight(code).split("\n", allow_blank=True)
    out = []
    for i, text in enumerate(texts):
        # The colours alone: a background (the highlight's base, a token's) would paint over the row's +/- one.
        line = lines[i] if i < len(lines) and lines[i].plain == text else Text(text)
        out.append(Text(line.plain, spans=[Span(span.start, span.end, _foreground(span.style)) for span in line.spans]))
    return out


def _foreground(style: str | Style) -> Style:
    style = Style.parse(style) if isinstance(style, str) else style
    return Style(color=style.color, bold=style.bold, italic=style.italic, underline=style.underline)


def rows_of(diff: Diff, dark: bool = True) -> list[Row]:
    """Every row of ``diff``, file after file, with a row for what the caps left out."""
    rows: list[Row] = []
    for index, f in enumerate(diff.files):
        rows.append(Row("file", index, file_header(f)))
        if f.status == "binary" and not f.hunks:
            rows.append(Row("more", index, Text("binary file: no lines to show", style="dim")))
        for hunk in f.hunks:
            rows.append(Row("hunk", index, Text(clean(hunk.header), style="dim")))
            texts = coloured(f.path, [shown(line.text) for line in hunk.lines], dark)
            rows.extend(Row("line", index, text, line) for line, text in zip(hunk.lines, texts, strict=True))
        if f.more_lines:
            rows.append(Row("more", index, Text(f"… {f.more_lines} more lines (left out: the diff is too big to show whole)", style="dim italic")))
    if diff.more_files:
        rows.append(Row("more", -1, Text(f"… {diff.more_files} more files (left out: the diff is too big to show whole)", style="dim italic")))
    return rows


__all__ = ["Row", "coloured", "file_header", "file_label", "rows_of", "shown"]
