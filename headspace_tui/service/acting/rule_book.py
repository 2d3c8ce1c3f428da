"""The rules file, as the service reads it: loaded again whenever it changed, its errors told once per version."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ...rules.rules_file import Loaded, load


class RuleBook:
    """The rules file, loaded again whenever it changed; errors told once per version."""

    def __init__(self, path: Path, notice: Callable[[str], None]) -> None:
        self.path = path
        self.notice = notice
        self._seen: tuple | None = None
        self.loaded = Loaded(path=str(path))

    def current(self) -> Loaded:
        try:
            st = os.stat(self.path)
            seen: tuple | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            seen = None
        if seen != self._seen:
            self._seen = seen
            self.loaded = load(self.path) if seen is not None else Loaded(path=str(self.path))
            for error in self.loaded.errors:
                self.notice(error)
        return self.loaded
