"""The file an edit would change, as it is now: read where the agent runs, so its approval can show the real diff.

A call's path is outside data: it may name a pipe, a device, a link to
another user's file, or a log of gigabytes.  Only a regular file within
``CAP`` is read (``shared/safe_files.read_regular``: not following a final
link, never blocking); anything else is refused with a one-line reason, and
the approval shows the call's own text instead (``proposed.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..shared.safe_files import Unreadable, read_regular

CAP = 2 << 20  # bytes: a source file an agent edits is far smaller; a diff past this would be capped anyway


def reader(cwd: str = "") -> Callable[[str], str]:
    """``read_current`` for a call made in ``cwd`` (a relative path is the agent's, not headspace's)."""

    def read(path: str) -> str:
        return read_current(path, cwd)

    return read


def read_current(path: str, cwd: str = "") -> str:
    """The text of the regular file ``path`` now (UTF-8, undecodable bytes replaced).

    Raises ``FileNotFoundError`` when it is not there and ``ValueError`` with
    the reason when it is not read (not a regular file, a link, over ``CAP``,
    a relative path with no folder to read it from).
    """
    if not os.path.isabs(path):
        if not os.path.isabs(cwd):
            raise ValueError("a relative path, and no folder it is relative to")
        path = os.path.join(cwd, path)
    try:
        data = read_regular(path, CAP)
    except Unreadable as exc:
        raise ValueError(str(exc)) from None
    return data.decode("utf-8", errors="replace")


__all__ = ["CAP", "read_current", "reader"]
