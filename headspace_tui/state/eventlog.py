"""The event log: every state transition (and anything else worth an audit trail) in SQLite.

Why SQLite: one file, no server, safe for several processes (the TUI, a
``headspace hooks`` receiver, a ``headspace status`` call) writing at once,
and it survives a crash.  The settings that make that true:

* ``journal_mode=WAL``: readers never block the writer and the writer never
  blocks readers; a crash mid-write leaves the half-written transaction in the
  WAL, where it is ignored on the next open.
* ``synchronous=NORMAL``: with WAL a process crash (even SIGKILL) keeps
  every commit, and the log can never be corrupted; a power cut may roll back
  the last few commits.  ``FULL`` would fsync at every state change, on the
  UI's event loop: milliseconds each on a busy disk, for an audit trail that
  can afford to lose its last second.
* ``busy_timeout``: a second process that wants to write while another is
  writing waits (up to ``BUSY_TIMEOUT_MS``) instead of failing with
  "database is locked"; writes take the lock up front (``BEGIN IMMEDIATE``)
  so two writers never deadlock upgrading a read lock.
* ``cache_size``: SQLite keeps up to ``CACHE_KIB`` of the log's pages in
  memory.  Its default (2 MB) filled as the log grew (in the churn soak
  about 185 KB a minute), and headspace's C heap with it, where tracemalloc
  does not see it: a part of the soak's slow growth once the garbage was
  bounded (gc_pace.py).  The log is written far more than it is read, and
  a read (one agent's timeline, today's waits at start) finds its pages in
  the system's file cache.

Every SQLite failure reaches the caller as an ``EventLogError`` whose text is
one line a user can act on ("... is not a database", "... permission
denied"), never a traceback.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..shared.paths import state_dir
from ..shared.safe_files import Unreadable, loads, note_once

BUSY_TIMEOUT_MS = 10_000
CACHE_KIB = 256  # the log's pages SQLite keeps in memory (its default: 2 MB)
TABLE = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    agent TEXT,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL
)"""
INDEXES = (
    "CREATE INDEX IF NOT EXISTS events_agent_ts ON events (agent, ts)",
    "CREATE INDEX IF NOT EXISTS events_kind_ts ON events (kind, ts)",
)
COLUMNS = ("id", "ts", "agent", "kind", "payload")


class EventLogError(RuntimeError):
    """An event log that cannot be used; ``str()`` is one human-readable line."""


@dataclass(frozen=True)
class StoredEvent:
    id: int
    ts: float
    agent: str | None
    kind: str
    payload: dict[str, Any]


def default_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/headspace/events.db`` (``~/.local/state`` when unset or relative, per XDG)."""
    return state_dir(env) / "events.db"


class EventLog:
    """An open event log.  Thread-safe within a process; safe across processes.

    Use as a context manager, or call ``close()``.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = self._open()

    # -- opening ----------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        path = self.path
        if path.is_dir():
            raise EventLogError(f"event log {path} is a directory, not a file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EventLogError(f"cannot create the folder for event log {path}: {exc.strerror or exc}") from exc
        if path.exists() and not os.access(path, os.R_OK | os.W_OK):
            raise EventLogError(f"cannot open event log {path}: permission denied")
        try:
            db = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise EventLogError(f"cannot open event log {path}: {exc}") from exc
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
            mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise EventLogError(f"event log {path}: cannot switch to WAL mode (got {mode})")
            # WAL with NORMAL cannot corrupt the log; it may lose the last events on a power cut,
            # and it keeps an fsync (milliseconds on a busy disk) out of every state change.
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(TABLE)
                columns = tuple(row[1] for row in db.execute("PRAGMA table_info(events)"))
                if columns != COLUMNS:
                    raise EventLogError(f"event log {path} has an events table of another shape: {', '.join(columns)}")
                for index in INDEXES:
                    db.execute(index)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except EventLogError:
            db.close()
            raise
        except sqlite3.Error as exc:
            db.close()
            raise EventLogError(_describe(path, exc)) from exc
        return db

    # -- writing ----------------------------------------------------------
    def write(self, kind: str, agent: str | None, payload: Mapping[str, Any] | None = None, ts: float | None = None) -> int:
        """Append one event in its own transaction; return its id."""
        return self._insert([(kind, agent, dict(payload or {}), ts)])[0]

    def write_many(self, events: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append several events in one transaction (all or nothing); return their ids.

        Each event is a dict with ``kind``, optionally ``agent`` and ``ts``;
        every other key goes into the payload.  That is exactly the shape
        ``machine.apply_turn`` returns, so ``log.write_many(events)`` stores them.
        """
        rows = []
        for event in events:
            rest = dict(event)
            try:
                kind = rest.pop("kind")
            except KeyError:
                raise EventLogError(f"an event needs a 'kind': {event!r}") from None
            rows.append((kind, rest.pop("agent", None), rest, rest.pop("ts", None)))
        return self._insert(rows)

    def _insert(self, rows: list[tuple[str, str | None, dict[str, Any], float | None]]) -> list[int]:
        if not rows:
            return []
        now = time.time()
        try:
            encoded = [(now if ts is None else float(ts), agent, kind, json.dumps(payload, default=str)) for kind, agent, payload, ts in rows]
        except (TypeError, ValueError) as exc:
            raise EventLogError(f"an event payload cannot be stored as JSON: {exc}") from exc
        with self._lock:
            db = self._connection()
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    ids = [db.execute("INSERT INTO events (ts, agent, kind, payload) VALUES (?, ?, ?, ?)", row).lastrowid for row in encoded]
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise EventLogError(_describe(self.path, exc)) from exc
        return [int(i) for i in ids if i is not None]

    # -- reading ----------------------------------------------------------
    def query(
        self,
        agent: str | None = None,
        kind: str | None = None,
        since: float | None = None,
        limit: int | None = None,
        *,
        after_id: int | None = None,
        kinds: Iterable[str] | None = None,
    ) -> list[StoredEvent]:
        """Events matching every filter given, oldest first.

        ``since`` keeps events at or after that time; ``after_id`` those newer
        than an id already seen (for tailing without repeats); ``kinds`` any of
        several kinds; ``limit`` keeps the *newest* ``limit`` matches (still
        returned oldest first).
        """
        where: list[str] = []
        args: list[Any] = []
        for clause, value in (("agent = ?", agent), ("kind = ?", kind), ("ts >= ?", since), ("id > ?", after_id)):
            if value is not None:
                where.append(clause)
                args.append(value)
        if kinds is not None:
            names = list(kinds)
            # Tailing (``after_id``) walks the ids past the last one seen; by the kind index it would read every old row of those kinds.
            column = "+kind" if after_id is not None else "kind"
            where.append(f"{column} IN ({', '.join('?' for _ in names)})" if names else "0")
            args.extend(names)
        sql = "SELECT id, ts, agent, kind, payload FROM events"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(max(int(limit), 0))
        with self._lock:
            try:
                rows = self._connection().execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise EventLogError(_describe(self.path, exc)) from exc
        out = []
        for id_, ts, who, what, payload in reversed(rows):
            # The file is on disk and anyone with the user's rights may edit it:
            # a row whose time is not a number is skipped (and noted), one whose
            # payload is not JSON is shown as unreadable; the rest stay.
            if not isinstance(ts, (int, float)) or isinstance(ts, bool) or not isinstance(id_, int):
                note_once(f"event log {self.path}: rows with a malformed time or id skipped")
                continue
            try:
                data = loads(payload if isinstance(payload, (str, bytes)) else "", what="event payload")
            except Unreadable:
                data = {"_unreadable": str(payload)[:200]}
            out.append(StoredEvent(id_, float(ts), who if isinstance(who, str) else None, str(what), data if isinstance(data, dict) else {"value": data}))
        return out

    def tail(self, kinds: Iterable[str], after_id: int) -> tuple[list[StoredEvent], int]:
        """Events of ``kinds`` newer than ``after_id``, and the newest id of the whole log read: where the next tail starts.

        The next tail starts past every row read now, of any kind: a log of
        many other events between two of these costs one short walk of ids
        each time, never the whole history again.
        """
        with self._lock:
            try:
                row = self._connection().execute("SELECT max(id) FROM events").fetchone()
            except sqlite3.Error as exc:
                raise EventLogError(_describe(self.path, exc)) from exc
        newest = int(row[0]) if row and isinstance(row[0], int) else after_id
        if newest <= after_id:
            return [], after_id
        found = [e for e in self.query(kinds=kinds, after_id=after_id) if e.id <= newest]
        return found, newest

    def count(self) -> int:
        with self._lock:
            try:
                return int(self._connection().execute("SELECT count(*) FROM events").fetchone()[0])
            except sqlite3.Error as exc:
                raise EventLogError(_describe(self.path, exc)) from exc

    # -- closing ----------------------------------------------------------
    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            raise EventLogError(f"event log {self.path} is closed")
        return self._db

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _describe(path: Path, exc: sqlite3.Error) -> str:
    """One line for a user: what is wrong with which file."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    lowered = message.lower()
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return f"event log {path} is damaged or not a database ({message}); move it aside and headspace will start a new one"
    if "locked" in lowered or "busy" in lowered:
        return f"event log {path} stayed locked by another process for {BUSY_TIMEOUT_MS // 1000}s ({message})"
    if "readonly" in lowered or "read-only" in lowered:
        return f"event log {path} is read-only ({message})"
    if "unable to open" in lowered:
        return f"cannot open event log {path} ({message})"
    return f"event log {path}: {message}"
