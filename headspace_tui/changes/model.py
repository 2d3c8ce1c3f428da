"""What an agent changed, as values: files, their hunks and lines, and what was left out.

One model for every change headspace shows: the diff of an agent's work
tree since it started or since its turn began (git, snapshot.py), and the
change an edit would make, shown inside its approval (proposed.py).  Every
front end draws it (the diff view, the preview, ``e``, the phone card, the
CLI) and the wire carries it (``to_dict``/``from_dict``).  Standard library
only, Python 3.9: the probe builds it on a remote host.

Caps keep a huge diff from stalling anything: at most ``MAX_FILES`` files
and ``MAX_LINES`` lines in all are kept, and what was left out is counted
(``more_files``, ``more_lines``), never silently dropped.  Counts (+/-) are
whole even where the lines are capped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_FILES = 200  # files kept with their lines; the rest are counted
MAX_LINES = 4000  # diff lines kept over all files; the rest are counted
MAX_LINE_CHARS = 2000  # one line's text beyond this is cut (a minified file's one line)


@dataclass(frozen=True)
class DiffLine:
    """One line of a hunk: ``kind`` is "+" (added), "-" (removed) or " " (context); numbers are 1-based, 0 where it has none."""

    kind: str
    text: str
    old: int = 0
    new: int = 0


@dataclass(frozen=True)
class Hunk:
    """``@@ -old_start,old_count +new_start,new_count @@ section``: where it is, and its lines."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str = ""
    lines: tuple[DiffLine, ...] = ()

    @property
    def header(self) -> str:
        tail = f" {self.section}" if self.section else ""
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@{tail}"


@dataclass(frozen=True)
class FileDiff:
    """One file's change: ``status`` is "modified", "added", "deleted", "renamed" or "binary"."""

    path: str
    status: str = "modified"
    old_path: str = ""
    added: int = 0
    removed: int = 0
    hunks: tuple[Hunk, ...] = ()
    more_lines: int = 0  # this file's lines left out by the caps


@dataclass(frozen=True)
class Diff:
    """A whole change: its files, and what the caps left out.

    ``note`` says what it is or why it is empty, for people ("not a git
    repository", "since headspace saw it"); ``error`` is set when it could
    not be made at all.
    """

    files: tuple[FileDiff, ...] = ()
    more_files: int = 0  # files left out entirely (their counts are in added/removed)
    added: int = 0
    removed: int = 0
    note: str = ""
    error: str = ""

    @property
    def file_count(self) -> int:
        return len(self.files) + self.more_files

    @property
    def more_lines(self) -> int:
        return sum(f.more_lines for f in self.files)

    @property
    def empty(self) -> bool:
        return not self.files and not self.more_files

    def summary(self) -> str:
        """``+12 −3 · 2 files`` (the row's column); "" for no change."""
        if self.empty:
            return ""
        count = self.file_count
        return f"+{self.added} −{self.removed} · {count} file{'s' if count != 1 else ''}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": [_file_dict(f) for f in self.files],
            "more_files": self.more_files,
            "added": self.added,
            "removed": self.removed,
            "note": self.note,
            "error": self.error,
        }

    @staticmethod
    def from_dict(data: Any) -> Diff:
        """From ``to_dict``'s shape; anything else raises ``ValueError`` (outside data: the wire, a probe)."""
        if not isinstance(data, dict):
            raise ValueError("a diff is an object")
        files = data.get("files", [])
        if not isinstance(files, list):
            raise ValueError("a diff's files are a list")
        return Diff(
            files=tuple(_file_from(f) for f in files[:MAX_FILES]),
            more_files=_int(data.get("more_files")),
            added=_int(data.get("added")),
            removed=_int(data.get("removed")),
            note=str(data.get("note") or ""),
            error=str(data.get("error") or ""),
        )


def failed(error: str) -> Diff:
    return Diff(error=error)


def capped(files: list[FileDiff], note: str = "") -> Diff:
    """A diff of ``files`` within the caps: lines past ``MAX_LINES`` and files past ``MAX_FILES`` are counted, not kept."""
    kept: list[FileDiff] = []
    budget = MAX_LINES
    for diff in files[:MAX_FILES]:
        lines = sum(len(h.lines) for h in diff.hunks)
        if lines <= budget:
            kept.append(diff)
            budget -= lines
            continue
        hunks: list[Hunk] = []
        for hunk in diff.hunks:
            if budget <= 0:
                break
            take = hunk.lines[:budget]
            hunks.append(Hunk(hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count, hunk.section, take))
            budget -= len(take)
        kept.append(FileDiff(diff.path, diff.status, diff.old_path, diff.added, diff.removed, tuple(hunks), diff.more_lines + lines - sum(len(h.lines) for h in hunks)))
    return Diff(
        files=tuple(kept),
        more_files=max(0, len(files) - MAX_FILES),
        added=sum(f.added for f in files),
        removed=sum(f.removed for f in files),
        note=note,
    )


def cut(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + "…"


def _file_dict(f: FileDiff) -> dict[str, Any]:
    return {
        "path": f.path,
        "status": f.status,
        "old_path": f.old_path,
        "added": f.added,
        "removed": f.removed,
        "more_lines": f.more_lines,
        "hunks": [
            {
                "old_start": h.old_start,
                "old_count": h.old_count,
                "new_start": h.new_start,
                "new_count": h.new_count,
                "section": h.section,
                "lines": [[line.kind, line.text, line.old, line.new] for line in h.lines],
            }
            for h in f.hunks
        ],
    }


def _file_from(data: Any) -> FileDiff:
    if not isinstance(data, dict):
        raise ValueError("a file of a diff is an object")
    hunks = []
    for h in data.get("hunks") or []:
        if not isinstance(h, dict):
            raise ValueError("a hunk is an object")
        lines = []
        for item in (h.get("lines") or [])[:MAX_LINES]:
            if not isinstance(item, list) or len(item) != 4 or item[0] not in ("+", "-", " "):
                raise ValueError("a diff line is [kind, text, old, new]")
            lines.append(DiffLine(item[0], cut(str(item[1])), _int(item[2]), _int(item[3])))
        hunks.append(Hunk(_int(h.get("old_start")), _int(h.get("old_count")), _int(h.get("new_start")), _int(h.get("new_count")), str(h.get("section") or ""), tuple(lines)))
    return FileDiff(
        path=str(data.get("path") or ""),
        status=str(data.get("status") or "modified"),
        old_path=str(data.get("old_path") or ""),
        added=_int(data.get("added")),
        removed=_int(data.get("removed")),
        hunks=tuple(hunks),
        more_lines=_int(data.get("more_lines")),
    )


def _int(value: Any | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(0, value)


__all__ = ["MAX_FILES", "MAX_LINES", "Diff", "DiffLine", "FileDiff", "Hunk", "capped", "cut", "failed"]
