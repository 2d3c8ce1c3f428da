"""git's unified diff text, read into the model (model.py) and written back out.

Read: ``git diff`` output made with the options ``snapshot.DIFF_OPTIONS``
gives (no colour, no external diff, renames found, ``a/`` and ``b/``
prefixes).  Paths git had to quote (C style, for control characters,
quotes and backslashes) are unquoted.  Written: the same text, for the
CLI and for scripts.  Standard library only (the probe runs it).
"""

from __future__ import annotations

import re

from .model import Diff, DiffLine, FileDiff, Hunk, capped, cut

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def parse(text: str, note: str = "") -> Diff:
    """The files of a ``git diff``, within the caps (model.capped)."""
    files: list[FileDiff] = []
    current: dict | None = None
    hunks: list[Hunk] = []
    lines: list[DiffLine] = []
    head: tuple[int, int, int, int, str] | None = None
    old_no = new_no = 0

    def close_hunk() -> None:
        nonlocal head, lines
        if head is not None:
            hunks.append(Hunk(head[0], head[1], head[2], head[3], head[4], tuple(lines)))
        head, lines = None, []

    def close_file() -> None:
        nonlocal current, hunks
        close_hunk()
        if current is not None:
            files.append(FileDiff(current["path"], current["status"], current["old_path"], current["added"], current["removed"], tuple(hunks)))
        current, hunks = None, []

    for line in text.split("\n"):
        if line.startswith("diff --git "):
            close_file()
            old, new = _git_paths(line[len("diff --git ") :])
            current = {"path": new or old, "old_path": "", "status": "modified", "added": 0, "removed": 0, "old": old}
            continue
        if current is None:
            continue
        if head is not None and (line[:1] in ("+", "-", " ") or line == "") and not _past(head, old_no, new_no):
            kind = line[0] if line else " "  # a blank context line without its space (diff.suppressBlankEmpty)
            if kind == "+":
                new_no += 1
                lines.append(DiffLine("+", cut(line[1:]), 0, new_no))
                current["added"] += 1
            elif kind == "-":
                old_no += 1
                lines.append(DiffLine("-", cut(line[1:]), old_no, 0))
                current["removed"] += 1
            else:
                old_no += 1
                new_no += 1
                lines.append(DiffLine(" ", cut(line[1:]), old_no, new_no))
            continue
        if line.startswith("\\"):  # "\ No newline at end of file"
            continue
        match = _HUNK.match(line)
        if match is not None:
            close_hunk()
            o, oc, n, nc, section = match.groups()
            head = (int(o), int(oc) if oc is not None else 1, int(n), int(nc) if nc is not None else 1, section)
            old_no, new_no = int(o) - 1, int(n) - 1
            continue
        if line.startswith("new file mode"):
            current["status"] = "added"
        elif line.startswith("deleted file mode"):
            current["status"] = "deleted"
        elif line.startswith("rename from "):
            current["status"] = "renamed"
            current["old_path"] = _unquote(line[len("rename from ") :])
        elif line.startswith("rename to "):
            current["path"] = _unquote(line[len("rename to ") :])
        elif line.startswith(("Binary files ", "GIT binary patch")):
            current["status"] = "binary" if current["status"] == "modified" else current["status"]
        elif line.startswith("+++ ") and line[4:] != "/dev/null":
            current["path"] = _strip_prefix(_unquote(line[4:]), "b/")
        elif line.startswith("--- ") and line[4:] != "/dev/null" and current["status"] == "deleted":
            current["path"] = _strip_prefix(_unquote(line[4:]), "a/")
    close_file()
    return capped(files, note)


def render(diff: Diff) -> str:
    """The diff as unified text (what ``headspace diff`` prints), with what the caps left out said in a line."""
    out: list[str] = []
    for f in diff.files:
        old, path = f.old_path or f.path, f.path
        out.append(f"diff --git {_quote('a/' + old)} {_quote('b/' + path)}")
        if f.status == "added":
            out.append("new file")
        elif f.status == "deleted":
            out.append("deleted file")
        elif f.status == "renamed":
            out.append(f"rename from {_quote(old)}")
            out.append(f"rename to {_quote(path)}")
        elif f.status == "binary":
            out.append("Binary files differ")
        if f.hunks:
            out.append("--- /dev/null" if f.status == "added" else f"--- {_quote('a/' + old)}")
            out.append("+++ /dev/null" if f.status == "deleted" else f"+++ {_quote('b/' + path)}")
        for h in f.hunks:
            out.append(h.header)
            out.extend(f"{line.kind}{line.text}" for line in h.lines)
        if f.more_lines:
            out.append(f"… {f.more_lines} more lines")
    if diff.more_files:
        out.append(f"… {diff.more_files} more files")
    return "\n".join(out) + ("\n" if out else "")


def stat(diff: Diff) -> str:
    """``--stat``: one line per file with its counts, then the totals."""
    rows = [f"{f.added:>6} {f.removed:>6}  {f.path}" + (f" (from {f.old_path})" if f.old_path else "") + (f" [{f.status}]" if f.status != "modified" else "") for f in diff.files]
    if diff.more_files:
        rows.append(f"{'':>13}  … {diff.more_files} more files")
    rows.append(diff.summary() or "no change")
    return "\n".join(rows) + "\n"


def _quote(path: str) -> str:
    """A path as git writes it in a header: C-style quoted when it holds a control character, a quote or a backslash
    (a newline in a name must never start a line of its own)."""
    if not any(ord(c) < 0x20 or c in '"\\\x7f' for c in path):
        return path
    names = {v: k for k, v in _ESCAPES.items()}
    out = "".join(f"\\{names[ord(c)]}" if ord(c) in names else f"\\{ord(c):03o}" if ord(c) < 0x20 or c == "\x7f" else c for c in path)
    return f'"{out}"'


def _git_paths(rest: str) -> tuple[str, str]:
    """``a/X b/Y`` (either may be quoted) into X and Y; ("", "") where it cannot be split."""
    if rest.startswith('"'):
        first, end = _quoted(rest)
        second = rest[end:].lstrip()
        second = _unquote(second)
        return _strip_prefix(first, "a/"), _strip_prefix(second, "b/")
    if rest.endswith('"'):
        start = rest.rfind(' "')
        return _strip_prefix(rest[:start], "a/"), _strip_prefix(_unquote(rest[start + 1 :]), "b/")
    # Unquoted: the two halves are the same length when the path did not change (the common case).
    half = (len(rest) - 1) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[2:half] == rest[half + 3 :]:
        return rest[2:half], rest[half + 3 :]
    parts = rest.split(" b/", 1)
    return _strip_prefix(parts[0], "a/"), parts[1] if len(parts) > 1 else ""


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if path.startswith(prefix) else path


def _unquote(text: str) -> str:
    """git's C-style quoted path (``"a\\tb\\303\\251"``) as text; an unquoted one as it is."""
    text = text.rstrip("\t")
    if not text.startswith('"'):
        return text
    value, _end = _quoted(text)
    return value


def _quoted(text: str) -> tuple[str, int]:
    """The C-style string at the start of ``text`` (opening quote included) and where it ends."""
    out = bytearray()
    i = 1
    while i < len(text):
        char = text[i]
        if char == '"':
            return out.decode("utf-8", "replace"), i + 1
        if char == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if nxt.isdigit() and i + 3 < len(text) + 1:
                out.append(int(text[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
        out.extend(char.encode("utf-8"))
        i += 1
    return out.decode("utf-8", "replace"), len(text)


def _past(head: tuple[int, int, int, int, str], old_no: int, new_no: int) -> bool:
    """Whether the hunk already has all its lines (then a ``--- a/…`` line starts the next file's header)."""
    return old_no - head[0] + 1 >= head[1] and new_no - head[2] + 1 >= head[3]
