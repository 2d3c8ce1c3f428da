"""Gemini CLI's own count of a session's tokens: its chat record, ``~/.gemini/tmp/<project>/chats/session-*.jsonl``.

Measured on 0.61.0 (tests/e2e/test_usage_families.py, the real CLI against
the scripted API):

* The folder is ``$GEMINI_CLI_HOME/.gemini`` (else ``$HOME/.gemini``); the
  project's short name comes from ``projects.json`` (``{"projects": {cwd:
  name}}``), each project folder also holding its cwd in ``.project_root``.
* The record begins as the CLI starts (its header line's ``startTime``,
  1.5-2.2 s after the process), before any prompt; ``/clear`` begins a new
  one in the same process.  Nothing in it names the process, and the CLI
  holds no file open: the record is matched by folder and time
  (detect/session_usage.py).
* Lines: a header (``sessionId``, ``startTime``, ``kind``), messages by
  ``id`` (the same id written again as a message grows: the last wins, in
  its first place), ``{"$set": {"messages": [...]}}`` (the whole list,
  replacing what was read: on resume it repeats the history),
  ``{"$rewindTo": id}`` (that message and all after it are gone).
* A ``"type": "gemini"`` message is one model call, its ``tokens``:
  ``input`` (the prompt, cached part included), ``output``, ``cached``,
  ``thoughts``, ``tool`` (tool-use prompt), ``total``; and ``model``, the
  model the CLI asked for.  Side calls (the router, next-speaker checks)
  are not recorded.
"""

from __future__ import annotations

import os

from ...shared.json_lines import JsonLinesTail, first_object
from ...shared.safe_files import Unreadable, loads, read_regular
from ...usage.model import Tokens, Usage
from ..session_usage import AgentProcess, Follower, Kind, count, parse_time
from .process import recognise

HEAD_CAP = 1 << 20
PROJECTS_CAP = 4 << 20


class ChatFollower(Follower):
    """One chat record, read on from where it was last read; the messages kept as the CLI last wrote them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._tail = JsonLinesTail(path)
        self._messages: dict = {}  # id → message, in the order first written

    def read(self) -> Usage | None:
        for line in self._tail.read_objects():
            if isinstance(line, dict):
                self._fold(line)
        replies = [m for m in self._messages.values() if m.get("type") == "gemini" and isinstance(m.get("tokens"), dict)]
        if not replies:
            return None
        tokens, model = Tokens(), ""
        for reply in replies:
            n = reply["tokens"]
            cached = count(n.get("cached"))
            tokens += Tokens(max(0, count(n.get("input")) - cached) + count(n.get("tool")), count(n.get("output")) + count(n.get("thoughts")), cached, 0)
            model = reply["model"] if isinstance(reply.get("model"), str) else model
        last = replies[-1]["tokens"]
        return Usage(model, tokens, count(last.get("input")) + count(last.get("tool")))

    def _fold(self, line: dict) -> None:
        changed = line.get("$set")
        if isinstance(changed, dict) and isinstance(changed.get("messages"), list):
            self._messages = {}
            for message in changed["messages"]:
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    self._messages[message["id"]] = message
        elif isinstance(line.get("$rewindTo"), str):
            ids = list(self._messages)
            if line["$rewindTo"] in ids:  # one not read (a record cut by the CLI's clean-up) rewinds nothing known
                self._messages = {k: self._messages[k] for k in ids[: ids.index(line["$rewindTo"])]}
        elif isinstance(line.get("id"), str) and isinstance(line.get("type"), str):
            self._messages[line["id"]] = line


def project_folder(base: str, cwd: str) -> str | None:
    """``<base>/tmp/<name>`` of the project whose root is ``cwd``: by ``projects.json``, else by each folder's ``.project_root``."""
    try:
        projects = loads(read_regular(os.path.join(base, "projects.json"), PROJECTS_CAP))
    except (OSError, Unreadable, ValueError):
        projects = None
    named = projects.get("projects") if isinstance(projects, dict) else None
    if isinstance(named, dict) and isinstance(named.get(cwd), str) and "/" not in named[cwd] and named[cwd] not in ("", ".", ".."):
        return os.path.join(base, "tmp", named[cwd])
    try:
        names = os.listdir(os.path.join(base, "tmp"))
    except OSError:
        return None
    for name in names:
        try:
            root = read_regular(os.path.join(base, "tmp", name, ".project_root"), 64 << 10).decode("utf-8", "replace").strip()
        except (OSError, Unreadable):
            continue
        if root == cwd:
            return os.path.join(base, "tmp", name)
    return None


def begun_at(path: str) -> float | None:
    """When the record began: its header line's ``startTime`` (None: no header first, as after the CLI's own clean-up)."""
    line = first_object(path, HEAD_CAP)
    return parse_time(line.get("startTime")) if isinstance(line, dict) else None


def find(agent: AgentProcess) -> ChatFollower | None:
    """The agent's latest chat record (begun by it, in its project), or None."""
    base = os.path.join(agent.env.get("GEMINI_CLI_HOME") or agent.env.get("HOME") or os.path.expanduser("~"), ".gemini")
    project = project_folder(base, agent.cwd)
    if project is None:
        return None
    chats = os.path.join(project, "chats")
    try:
        names = os.listdir(chats)
    except OSError:
        return None
    best: tuple | None = None
    for name in names:
        if not (name.startswith("session-") and name.endswith(".jsonl")):
            continue
        path = os.path.join(chats, name)
        try:
            if os.stat(path).st_mtime < agent.started - 1:
                continue
            begun = begun_at(path)
        except OSError:
            continue
        if begun is None or not agent.owns(begun, at_start=True):
            continue
        if best is None or begun > best[0]:
            best = (begun, path)
    return ChatFollower(best[1]) if best is not None else None


# Gemini CLI's session records, as session_usage.py follows them: its chats under GEMINI_CLI_HOME.
USAGE = Kind(family="gemini", recognise=recognise, env=("GEMINI_CLI_HOME",), find=find)
