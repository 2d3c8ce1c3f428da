"""The rules file, as the service reads it: loaded again whenever it or the families it is read against changed, its errors told once per version."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ...detect.families import vocabulary
from ...rules.rules_file import Loaded, load


class RuleBook:
    """The rules file, loaded again whenever it changed (or a family was registered since: a rule may name it); errors told once per version."""

    def __init__(self, path: Path, notice: Callable[[str], None]) -> None:
        self.path = path
        self.notice = notice
        self._seen: tuple | None = None
        self.loaded = Loaded(path=str(path))

    def current(self) -> Loaded:
        tools = vocabulary()
        try:
            st = os.stat(self.path)
            seen: tuple | None = (st.st_mtime_ns, st.st_size, st.st_ino, tuple(tools.items()))
        except OSError:
            seen = None
        if seen != self._seen:
            self._seen = seen
            self.loaded = load(self.path, tools=tools) if seen is not None else Loaded(path=str(self.path))
            for error in self.loaded.errors:
                self.notice(error)
        return self.loaded
