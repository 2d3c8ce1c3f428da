"""Quill's own count of a session's tokens: ``$QUILL_HOME/session.json`` (``~/.quill`` when unset).

Made up, as Quill is: one JSON object, ``{"model": …, "input": N, "output": M}``,
rewritten as the session goes.  Its ``USAGE`` is what a family declares for
detect/session_usage.py to follow; the family's record carries it only when a
test gives it (tests/unit/test_fifth_family.py).
"""

from __future__ import annotations

import json
import os

from headspace_tui.detect.session_usage import AgentProcess, Follower, Kind
from headspace_tui.usage.model import Tokens, Usage

from . import recognise


class SessionFile(Follower):
    def __init__(self, path: str) -> None:
        self.path = path

    def read(self) -> Usage | None:
        try:
            with open(self.path, encoding="utf-8") as handle:
                record = json.load(handle)
        except (OSError, ValueError):
            return None
        return Usage(model=str(record.get("model", "")), tokens=Tokens(input=int(record.get("input", 0)), output=int(record.get("output", 0))))


def find(agent: AgentProcess) -> SessionFile | None:
    path = os.path.join(agent.home("QUILL_HOME", ".quill"), "session.json")
    return SessionFile(path) if os.path.isfile(path) else None


USAGE = Kind(family="quill", recognise=recognise, env=("QUILL_HOME",), find=find)
