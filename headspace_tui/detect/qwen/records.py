"""Qwen Code's own count of a session's tokens: its conversation record, ``~/.qwen/projects/<cwd>/chats/<session>.jsonl``.

Measured on 0.24.4 (the real CLI against the scripted API):

* The folder is ``$QWEN_HOME`` (else ``$HOME/.qwen``).  Each running CLI
  writes ``sessions/<pid>.json`` (``pid``: its inner node process, two under
  the launcher that is the agent; ``sessionId``; ``cwd``; ``startedAt``), so
  the record is the agent's by process, not by folder and time: two Qwen
  agents in one folder are told apart.
* The conversation is ``projects/<cwd, "/" as "-">/chats/<sessionId>.jsonl``
  (``<sessionId>.runtime.json`` beside it names the same pid).  Each
  ``"type": "assistant"`` line is one model call with its ``model`` and
  ``usageMetadata``: ``promptTokenCount`` (the prompt, its cached part
  included), ``candidatesTokenCount``, ``thoughtsTokenCount``,
  ``cachedContentTokenCount``.  ``usage/token-usage-YYYY-MM.jsonl`` holds
  the same per call for every session: not read (the record is this
  agent's alone).

Runs where the agent runs (the probe on an SSH host too): the standard
library and probe-safe modules only.
"""

from __future__ import annotations

import glob
import os
import re

from ...shared.proctree import descends
from ...shared.safe_files import Unreadable, loads, read_regular
from ..session_usage import AgentProcess, Call, CallsFollower, Kind, count, env_folder
from .process import recognise

SESSION_CAP = 64 << 10
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")  # a uuid: never a path


class ChatFollower(CallsFollower):
    """One conversation record, read on from where it was last read."""

    def call_of(self, line: object) -> Call | None:
        if not isinstance(line, dict) or line.get("type") != "assistant" or not isinstance(line.get("usageMetadata"), dict):
            return None
        used = line["usageMetadata"]
        output = count(used.get("candidatesTokenCount")) + count(used.get("thoughtsTokenCount"))
        model = line["model"] if isinstance(line.get("model"), str) else ""
        return Call(count(used.get("promptTokenCount")), output, count(used.get("cachedContentTokenCount")), 0, model)


def find(agent: AgentProcess) -> ChatFollower | None:
    """The conversation of the agent's own CLI (a ``sessions/<pid>.json`` of a process under it), or None."""
    base = env_folder(agent.env, "QWEN_HOME", ".qwen")
    try:
        names = os.listdir(os.path.join(base, "sessions"))
    except OSError:
        return None
    best: tuple[float, str] | None = None
    for name in names:
        pid = name.removesuffix(".json")
        if not (name.endswith(".json") and pid.isdigit() and descends(int(pid), agent.pid)):
            continue
        try:
            session = loads(read_regular(os.path.join(base, "sessions", name), SESSION_CAP))
        except (OSError, Unreadable, ValueError):
            continue
        ident = session.get("sessionId") if isinstance(session, dict) else None
        if not isinstance(ident, str) or not SESSION_ID.match(ident):
            continue
        for path in glob.glob(os.path.join(glob.escape(base), "projects", "*", "chats", f"{ident}.jsonl")):
            started = session.get("startedAt")
            at = float(started) if isinstance(started, int | float) else 0.0
            if best is None or at > best[0]:
                best = (at, path)
    return ChatFollower(best[1]) if best is not None else None


# Qwen Code's session records, as session_usage.py follows them: its conversations under QWEN_HOME.
USAGE = Kind(family="qwen", recognise=recognise, env=("QWEN_HOME",), find=find)
