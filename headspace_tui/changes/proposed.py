"""The change a file edit would make, from the call itself: shown inside its approval, before anyone approves it.

Claude's answer hook hands headspace the exact call (``hooks/calls.py``):
Edit's old and new strings, MultiEdit's list of them, Write's whole new
content, NotebookEdit's new cell source.  That is enough to show the change
as a diff (``model.Diff``), without waiting for the agent's own dialog to
draw it (which a small pane cuts, and a phone never sees).

Where the current file can be read (``read_file``: where the agent runs, a
regular file within a size cap), the edit is applied to it and the diff has
the file's own line numbers, with 3 lines of context; Write is compared with
what the file holds now (a missing file is "added").  Where it cannot (a
remote host, a file over the cap, an edit whose old text is not in the file
now), the diff is of the call's own text, numbered from its first line, and
``Diff.note`` says so.  Nothing here runs the edit or judges it: the strings
are data, kept as they came (a front end makes them safe to show).

Pure and standard library only (the probe's Python 3.9 too): ``read_file``
is handed in, and raises ``FileNotFoundError`` for a missing file, anything
else (``OSError``, ``ValueError``) for one that could not be read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from difflib import SequenceMatcher
from typing import Any

from .model import MAX_LINES, Diff, DiffLine, FileDiff, Hunk, capped, cut

CONTEXT = 3  # lines of context around each change, as git's default
# Past this many lines on either side of what differs (after the common
# start and end are set aside), the middle is shown as all removed then all
# added: difflib's matching is quadratic at worst, and a hook's call is
# outside data.
MATCH_LIMIT = 2000

ReadFile = Callable[[str], str]
NOT_READ = "current file not read"

# Each family's names for a file edit, and the input keys it uses: (kind, path, old, new, all).
_EDITS: dict[str, tuple[str, str, str, str, str]] = {
    "Edit": ("edit", "file_path", "old_string", "new_string", "replace_all"),  # Claude Code
    "replace": ("edit", "file_path", "old_string", "new_string", ""),  # Gemini CLI
    "edit": ("edit", "filePath", "oldString", "newString", "replaceAll"),  # opencode
    "Write": ("write", "file_path", "", "content", ""),
    "write_file": ("write", "file_path", "", "content", ""),
    "write": ("write", "filePath", "", "content", ""),
    "MultiEdit": ("multi", "file_path", "", "", ""),
    "NotebookEdit": ("notebook", "notebook_path", "", "new_source", ""),
}
_CELL_INDEX = re.compile(r"cell-(\d{1,9})")


def is_file_edit(tool_name: str) -> bool:
    return tool_name in _EDITS


def proposed(tool_name: str, tool_input: Mapping[str, Any], read_file: ReadFile | None = None) -> Diff | None:
    """The diff the call would make, or None for a tool that edits no file (or a call that names none)."""
    shape = _EDITS.get(tool_name)
    if shape is None or not isinstance(tool_input, Mapping):
        return None
    kind, path_key, old_key, new_key, all_key = shape
    path = _str(tool_input, path_key)
    if not path:
        return None
    if kind == "edit":
        edits = [(_str(tool_input, old_key), _str(tool_input, new_key), tool_input.get(all_key) is True if all_key else False)]
        return _edits(path, edits, read_file)
    if kind == "multi":
        items = tool_input.get("edits")
        edits = [(_str(item, "old_string"), _str(item, "new_string"), item.get("replace_all") is True) for item in (items if isinstance(items, list) else []) if isinstance(item, Mapping)]
        return _edits(path, edits, read_file)
    if kind == "write":
        return _write(path, _str(tool_input, new_key), read_file)
    return _notebook(path, tool_input, read_file)


# -- the three kinds ----------------------------------------------------------------------


def _edits(path: str, edits: list[tuple[str, str, bool]], read_file: ReadFile | None) -> Diff:
    """Edit and MultiEdit: each old text replaced in turn, in the current file where it is there."""
    current, why = _read(path, read_file)
    if current is not None and "\x00" in current:
        return capped([FileDiff(path, "binary")], "the file is binary")
    if current is not None:
        applied, problem = _apply(current, edits)
        if applied is None and "\r\n" in current:  # Claude matches a CRLF file's lines by their "\n"
            applied, problem = _apply(current.replace("\r\n", "\n"), edits)
            current = current.replace("\r\n", "\n")
        if applied is not None:
            return capped([_file(path, "modified", current, applied)], "" if applied != current else "the same text: no change")
        why = problem
    elif why == "missing" and edits and edits[0][0] == "":
        # An Edit with no old text on a file that is not there creates it.
        created, problem = _apply("", edits)
        if created is not None:
            return capped([_file(path, "added", "", created)])
    note = "the file is not there now" if why == "missing" else why
    # Each edit's own text, numbered from its first line.
    hunks: list[Hunk] = []
    added = removed = 0
    budget = MAX_LINES
    more = 0
    for n, (old, new, every) in enumerate(edits, start=1):
        section = f"edit {n} of {len(edits)}" if len(edits) > 1 else ""
        if every:
            section = f"{section}, every occurrence" if section else "every occurrence"
        found, plus, minus, left, spent = _hunks(_lines(old), _lines(new), 0, 0, section, budget)
        hunks += found
        added, removed, more, budget = added + plus, removed + minus, more + left, budget - spent
    return capped([FileDiff(path, "modified", "", added, removed, tuple(hunks), more)], f"{note}: lines counted from the edit's own text")


def _write(path: str, content: str, read_file: ReadFile | None) -> Diff:
    current, why = _read(path, read_file)
    if current is not None and "\x00" in current:
        return capped([FileDiff(path, "binary", "", _count(content), 0)], "the file is binary now")
    if current is not None:
        return capped([_file(path, "modified", current, content)], "" if current != content else "the same content: no change")
    if why == "missing":
        return capped([_file(path, "added", "", content)])
    return capped([_file(path, "modified", "", content)], f"{why}: the whole new content is shown")


def _notebook(path: str, tool_input: Mapping[str, Any], read_file: ReadFile | None) -> Diff:
    """NotebookEdit: the cell's source before and after (numbered within the cell)."""
    cell_id = _str(tool_input, "cell_id")
    mode = _str(tool_input, "edit_mode") or "replace"
    new = _str(tool_input, "new_source")
    current, why = _read(path, read_file)
    old: str | None = None
    if current is not None:
        old, problem = _cell(current, cell_id)
        if old is None and mode != "insert":
            why = problem
    elif why == "missing":
        why = "the notebook is not there now"
    if mode == "insert":
        after = f"after cell {cell_id}" if cell_id else "at the start"
        return capped([_file(path, "modified", "", new, f"new {_str(tool_input, 'cell_type') or 'cell'} {after}")])
    section = f"cell {cell_id}" if cell_id else "cell"
    if mode == "delete":
        if old is None:
            return capped([FileDiff(path, "modified")], f"{why}: the cell's source is not known (deleted: {section})")
        return capped([_file(path, "modified", old, "", f"{section} deleted")])
    if old is None:
        return capped([_file(path, "modified", "", new, section)], f"{why}: the cell's new source is shown")
    return capped([_file(path, "modified", old, new, section)])


def _cell(notebook: str, cell_id: str) -> tuple[str | None, str]:
    """A cell's source by its id (or Claude's ``cell-N`` for a notebook without ids), and why not."""
    try:
        data = json.loads(notebook)
    except (ValueError, RecursionError):
        return None, "the notebook is not JSON"
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return None, "the notebook has no cells"
    found = next((c for c in cells if isinstance(c, dict) and c.get("id") == cell_id), None) if cell_id else None
    index = _CELL_INDEX.fullmatch(cell_id)
    if found is None and index is not None and int(index.group(1)) < len(cells) and isinstance(cells[int(index.group(1))], dict):
        found = cells[int(index.group(1))]
    if found is None:
        return None, f"no cell {cell_id} in the notebook now" if cell_id else "no cell named"
    source = found.get("source")
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str)), ""
    return (source if isinstance(source, str) else ""), ""


# -- applying and comparing -----------------------------------------------------------------


def _apply(text: str, edits: list[tuple[str, str, bool]]) -> tuple[str | None, str]:
    """``text`` with every edit made in turn, as Claude makes them; None and why when one cannot be."""
    for n, (old, new, every) in enumerate(edits, start=1):
        which = f"edit {n}'s old text" if len(edits) > 1 else "the text to replace"
        if old == "":
            if text != "":
                return None, f"{which} is empty and the file is not"
            text = new
            continue
        count = text.count(old)
        if count == 0:
            return None, f"{which} is not in the file now"
        if count > 1 and not every:
            return None, f"{which} is in the file {count} times"
        text = text.replace(old, new) if every else text.replace(old, new, 1)
    return text, ""


def _file(path: str, status: str, old: str, new: str, section: str = "") -> FileDiff:
    hunks, added, removed, more, _spent = _hunks(_lines(old), _lines(new), 0, 0, section, MAX_LINES)
    return FileDiff(path, status, "", added, removed, tuple(hunks), more)


def _hunks(a: list[str], b: list[str], a_base: int, b_base: int, section: str, budget: int) -> tuple[list[Hunk], int, int, int, int]:
    """The hunks from ``a`` to ``b`` (lines with their ends), numbered from after ``a_base``/``b_base``.

    Returns (hunks, added, removed, lines left out past ``budget``, lines kept).
    Counts are whole; lines past the budget are counted, not made.
    """
    hunks: list[Hunk] = []
    added = removed = left = kept = 0
    for group in _grouped(_opcodes(a, b)):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        lines: list[DiffLine] = []
        for tag, a1, a2, b1, b2 in group:
            if tag in ("replace", "delete"):
                removed += a2 - a1
            if tag in ("replace", "insert"):
                added += b2 - b1
            rows = (
                [(" ", a[k], a_base + k + 1, b_base + b1 + k - a1 + 1) for k in range(a1, a2)]
                if tag == "equal"
                else [
                    *(("-", a[k], a_base + k + 1, 0) for k in range(a1, a2)),
                    *(("+", b[k], 0, b_base + k + 1) for k in range(b1, b2)),
                ]
            )
            take = max(0, min(len(rows), budget - kept - len(lines)))
            lines += [DiffLine(kind, cut(_bare(text)), old, new) for kind, text, old, new in rows[:take]]
            left += len(rows) - take
        kept += len(lines)
        if lines:
            # As git writes it: an empty side starts at the line before (0 for an empty file).
            old_start = a_base + i1 + 1 if i2 > i1 else a_base + i1
            new_start = b_base + j1 + 1 if j2 > j1 else b_base + j1
            hunks.append(Hunk(old_start, i2 - i1, new_start, j2 - j1, section, tuple(lines)))
    return hunks, added, removed, left, kept


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes, with the common start and end set aside first (an edit is small; a file may not be)."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and end < len(b) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    mid_a, mid_b = a[start : len(a) - end], b[start : len(b) - end]
    codes: list[tuple[str, int, int, int, int]] = []
    if start:
        codes.append(("equal", 0, start, 0, start))
    middle: list[tuple[str, int, int, int, int]]
    if len(mid_a) > MATCH_LIMIT or len(mid_b) > MATCH_LIMIT:
        middle = [("replace" if mid_a and mid_b else "delete" if mid_a else "insert", 0, len(mid_a), 0, len(mid_b))] if mid_a or mid_b else []
    else:
        middle = list(SequenceMatcher(None, mid_a, mid_b).get_opcodes())
    codes += [(tag, a1 + start, a2 + start, b1 + start, b2 + start) for tag, a1, a2, b1, b2 in middle]
    if end:
        codes.append(("equal", len(a) - end, len(a), len(b) - end, len(b)))
    return codes


def _grouped(codes: list[tuple[str, int, int, int, int]], n: int = CONTEXT) -> list[list[tuple[str, int, int, int, int]]]:
    """The changes in groups with ``n`` lines of context, as ``SequenceMatcher.get_grouped_opcodes`` makes them."""
    if not any(tag != "equal" for tag, *_ in codes):
        return []
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    groups: list[list[tuple[str, int, int, int, int]]] = []
    group: list[tuple[str, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > n * 2:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return [g for g in groups if any(tag != "equal" for tag, *_ in g)]


# -- small helpers --------------------------------------------------------------------------


def _read(path: str, read_file: ReadFile | None) -> tuple[str | None, str]:
    """The file's text now, or None and why not ("missing" for a file that is not there)."""
    if read_file is None:
        return None, NOT_READ
    try:
        return read_file(path), ""
    except FileNotFoundError:
        return None, "missing"
    except (OSError, ValueError) as exc:
        return None, f"{NOT_READ} ({str(exc)[:200] or type(exc).__name__})"


def _lines(text: str) -> list[str]:
    """Lines with their ends, split at "\\n" only (a form feed or a U+2028 in a line is part of it, as git sees it)."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])  # the last line, with no end
    return lines


def _bare(line: str) -> str:
    """A line's text without its end ("\\n", "\\r\\n")."""
    if line.endswith("\n"):
        line = line[:-1]
    return line[:-1] if line.endswith("\r") else line


def _count(text: str) -> int:
    return len(_lines(text))


def _str(data: Any, key: str) -> str:
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, str) else ""


__all__ = ["CONTEXT", "NOT_READ", "is_file_edit", "proposed"]
