"""opencode's own count of a session's tokens: its SQLite database, ``$XDG_DATA_HOME/opencode/opencode.db``.

Measured on 1.18.33 (tests/e2e/test_usage_families.py, the real binary
against the scripted API):

* One database for every session (WAL mode; readable by another process
  while opencode runs, opened read-only here).  A ``session`` row appears
  at the first prompt, with ``directory`` (the agent's cwd), ``parent_id``
  (a subagent's session), ``time_created`` / ``time_updated`` (epoch ms),
  ``model`` (JSON ``{"id", "providerID"}``) and opencode's own running
  totals: ``tokens_input`` (uncached), ``tokens_output`` (without
  reasoning), ``tokens_reasoning``, ``tokens_cache_read``,
  ``tokens_cache_write`` and ``cost``; they equal the sums over its
  assistant messages.  Nothing in it names the process: the session is
  matched by folder and time (detect/session_usage.py).
* Each model step is an assistant ``message`` row whose ``data`` JSON has
  ``tokens`` (``input``, ``output``, ``reasoning``, ``cache.read``,
  ``cache.write``) and ``modelID``; while it streams its tokens are 0.  The
  context is the last finished step's prompt (input and cache).
"""

from __future__ import annotations

import json
import os
import sqlite3
from urllib.parse import quote

from ...usage.model import Tokens, Usage
from ..session_usage import AgentProcess, Follower, Kind, count
from .process import recognise

TOTALS = """
SELECT sum(tokens_input), sum(tokens_output) + sum(tokens_reasoning), sum(tokens_cache_read), sum(tokens_cache_write)
FROM session WHERE id = :id OR parent_id = :id
"""
LAST_STEP = """
SELECT data FROM message WHERE session_id = :id AND json_extract(data, '$.role') = 'assistant'
AND json_extract(data, '$.time.completed') IS NOT NULL ORDER BY time_created DESC LIMIT 1
"""
SESSIONS = """
SELECT id, time_created FROM session
WHERE directory = :cwd AND parent_id IS NULL AND time_created >= :since ORDER BY time_created DESC
"""


def database(agent: AgentProcess) -> str:
    return os.path.join(agent.env.get("XDG_DATA_HOME") or os.path.join(agent.env.get("HOME") or os.path.expanduser("~"), ".local", "share"), "opencode", "opencode.db")


def connect(path: str) -> sqlite3.Connection:
    """Read-only, never creating the file, giving up on a lock after a second (opencode is the writer)."""
    return sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=1.0)


class SessionFollower(Follower):
    """One opencode session's totals, queried again only when the database (or its write-ahead log) changed."""

    def __init__(self, path: str, session: str) -> None:
        self.path = path + "#" + session  # one database, many sessions: the follower is the pair
        self.db = path
        self.session = session
        self._seen: tuple = ()
        self._usage: Usage | None = None

    def read(self) -> Usage | None:
        try:
            seen = tuple((st.st_mtime_ns, st.st_size) for st in (os.stat(self.db), *_wal(self.db)))
        except OSError:
            return self._usage
        if seen == self._seen:
            return self._usage
        db, last = None, None
        try:
            db = connect(self.db)
            totals = db.execute(TOTALS, {"id": self.session}).fetchone()
            try:
                last = db.execute(LAST_STEP, {"id": self.session}).fetchone()
            except sqlite3.Error:
                pass  # no JSON functions in this SQLite, or a step that is not JSON: the totals stand, the context is not known
        except sqlite3.Error:
            return self._usage  # busy or mid-migration: the next change reads again
        finally:
            if db is not None:
                db.close()  # no reader left open on the user's database
        self._seen = seen
        if not totals or totals[0] is None:
            return self._usage
        step = _loads(last[0]) if last else {}
        tokens = _dict(step.get("tokens"))
        cache = _dict(tokens.get("cache"))
        context = count(tokens.get("input")) + count(cache.get("read")) + count(cache.get("write"))
        named = step.get("modelID")
        model = named if isinstance(named, str) else (self._usage.model if self._usage else "")
        self._usage = Usage(model, Tokens(*(count(n) for n in totals)), context)
        return self._usage


def _wal(path: str) -> list:
    try:
        return [os.stat(path + "-wal")]
    except OSError:
        return []


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _loads(text: object) -> dict:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def find(agent: AgentProcess) -> SessionFollower | None:
    """The agent's latest session (begun by it, in its folder), or None before its first prompt."""
    path = database(agent)
    if not os.path.isfile(path):
        return None
    db = None
    try:  # a busy or locked database raises: the search failed, and what was found before is kept (detect/session_usage.py)
        db = connect(path)
        rows = db.execute(SESSIONS, {"cwd": agent.cwd, "since": int((agent.started - 1) * 1000)}).fetchall()
    finally:
        if db is not None:
            db.close()
    owned = [session for session, created in rows if isinstance(session, str) and isinstance(created, (int, float)) and agent.owns(created / 1000, at_start=False)]
    return SessionFollower(path, owned[0]) if owned else None


# opencode's session records, as session_usage.py follows them: its database under XDG_DATA_HOME.
USAGE = Kind(family="opencode", recognise=recognise, env=("XDG_DATA_HOME",), find=find)
