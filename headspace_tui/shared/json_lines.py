"""Following a JSON-lines file an agent appends to: the objects added since the last read.

Claude's transcripts, Codex's rollouts and Gemini's chat records are all
one JSON object per line, appended while the session runs.  A last line
without its newline is still being written: it is kept and completed on a
later read.  When the file shrinks below the offset or is replaced
(another inode), reading starts over from its beginning; a missing file
reads as nothing new.  Only a regular file is read (a named pipe would
block the caller).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .safe_files import Unreadable, note_once, open_regular

# One call reads at most READ_CHUNK bytes (a first read of a long file takes a few calls); a single line larger than
# MAX_LINE (a pasted binary?) is skipped.
READ_CHUNK = 64 << 20
MAX_LINE = 8 << 20


class JsonLinesTail:
    """One file followed from where it was last read."""

    def __init__(self, path: Path | str, offset: int = 0) -> None:
        self.path = Path(path)
        self.offset = offset  # bytes consumed, the kept partial line included
        self._partial = b""
        self._inode: tuple[int, int] | None = None
        self._skipping = False  # inside a line too long to keep
        self.restarts = 0  # how often truncation or replacement was seen

    @property
    def opened(self) -> bool:
        """Has the file been read at least once (what is read first is history)?"""
        return self._inode is not None

    @classmethod
    def at_end(cls, path: Path | str):
        """A tail that skips what the file holds now (history) and reads only what comes."""
        tail = cls(path)
        try:
            st = os.stat(tail.path)
        except OSError:
            return tail
        tail.offset, tail._inode = st.st_size, (st.st_dev, st.st_ino)
        return tail

    def read_objects(self) -> list[Any]:
        """The JSON values of the complete lines added since the last call (at most READ_CHUNK bytes of file per call).

        A line longer than MAX_LINE is skipped whole, and one that is not
        JSON, or nested too deep, is skipped alone.
        """
        try:
            fd, st = open_regular(self.path)
        except (OSError, Unreadable) as exc:
            if isinstance(exc, Unreadable):
                note_once(f"{self.path.name} skipped: {exc}")
            return []
        with os.fdopen(fd, "rb") as handle:
            inode = (st.st_dev, st.st_ino)
            if (self._inode is not None and inode != self._inode) or st.st_size < self.offset:
                self.offset, self._partial, self._skipping = 0, b"", False
                self.restarts += 1
            self._inode = inode
            handle.seek(self.offset)
            chunk = handle.read(READ_CHUNK)
        self.offset += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        if self._skipping and lines:
            lines.pop(0)  # the rest of an over-long line
            self._skipping = False
        if len(self._partial) > MAX_LINE:
            note_once(f"{self.path}: a line over {MAX_LINE >> 20} MB skipped")
            self._partial, self._skipping = b"", True
        values = []
        for line in lines:
            if not line.strip() or len(line) > MAX_LINE:
                continue
            try:
                values.append(json.loads(line.decode("utf-8", errors="replace")))
            except (ValueError, RecursionError):
                continue
        return values


def first_object(path: Path | str, cap: int) -> Any:
    """The JSON value of a file's first line, reading at most ``cap`` bytes (None: no complete line within them, not JSON, not a regular file)."""
    try:
        fd, _ = open_regular(path)
    except (OSError, Unreadable):
        return None
    with os.fdopen(fd, "rb") as handle:
        head = handle.read(cap)
    line, newline, _ = head.partition(b"\n")
    if not newline:
        return None
    try:
        return json.loads(line.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
