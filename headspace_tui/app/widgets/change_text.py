"""A proposed change (changes/model.py) as Rich text: the preview's compact form and ``e``'s full one.

Every path and line is the agent's (outside data): each goes in cleaned, as
plain ``Text``, never as markup, so a line holding ``[b]`` or an escape
sequence shows as the characters it is.  Colours: added green, removed red,
context dim; a line's kind is also its first character (+, −, space), so the
change reads without colour.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ...changes.model import Diff, DiffLine
from ...shared.safe_text import clean

ADDED, REMOVED, CONTEXT, HEADER = "green", "red", "dim", "bold cyan"
TAB = 4  # a tab in a line, as spaces (clean would make it one)


def diff_of(data: dict[str, Any] | None) -> Diff | None:
    """The row's ``proposed`` as a ``Diff``; None for none, or for data that is not one (it crossed a seam)."""
    if not data:
        return None
    try:
        diff = Diff.from_dict(data)
    except ValueError:
        return None
    return None if diff.empty and not diff.note else diff


def heading(diff: Diff, folder: str = "") -> Text:
    """``README.md  +3 −3  (added)``: each file (named from ``folder``, the agent's, when it is in it), its counts; the note, dimmed."""
    out = Text()
    inside = folder.rstrip("/") + "/" if folder else ""
    for n, f in enumerate(diff.files):
        if n:
            out.append("\n")
        path = f.path[len(inside) :] if inside and f.path.startswith(inside) and len(f.path) > len(inside) else f.path
        out.append(clean(path, 300), style="bold")
        out.append(f"  +{f.added}", style=ADDED)
        out.append(f" −{f.removed}", style=REMOVED)
        if f.status != "modified":
            out.append(f"  ({clean(f.status)})", style="dim")
    if diff.note:
        out.append(f"\n{clean(diff.note, 300)}", style="dim italic")
    return out


def change_text(diff: Diff, limit: int | None = None, more: str = "", folder: str = "") -> Text:
    """The change, heading then hunks; at most ``limit`` hunk rows (None: every row the diff kept), the lines past it counted (``more``: where to see them)."""
    out = heading(diff, folder)
    shown = left = 0
    for f in diff.files:
        for hunk in f.hunks:
            for line in (None, *hunk.lines):  # None: the hunk's header
                if limit is not None and shown >= limit:
                    left += line is not None
                    continue
                shown += 1
                out.append("\n")
                if line is None:
                    out.append(clean(hunk.header, 300), style=HEADER)
                else:
                    _line(out, line)
        left += f.more_lines
    if diff.more_files:
        out.append(f"\n… {diff.more_files} more files", style="dim")
    if left:
        out.append(f"\n… {left} more lines{f' ({more})' if more else ''}", style="dim")
    return out


def _line(out: Text, line: DiffLine) -> None:
    number = line.new if line.kind == "+" else line.old
    style = ADDED if line.kind == "+" else REMOVED if line.kind == "-" else CONTEXT
    out.append(f"{number:>4} " if number else "     ", style="dim")
    out.append(f"{line.kind} ", style=style)
    out.append(clean(line.text.expandtabs(TAB), 2000), style="" if line.kind == " " else style)


__all__ = ["change_text", "diff_of", "heading"]
