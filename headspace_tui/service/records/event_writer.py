"""The journal's writer: events to the event log, and what waits when the log cannot take them.

Writing can fail for a while (a full disk, an I/O error, a log made
read-only).  What could not be written waits here, in order, and goes out at
the next try; the user is told once, and once more when it is written.
Without a log at all, events go to the journal's memory instead
(``remember``): the timeline still works, bounded, and forgets on exit.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable

from ...state.eventlog import EventLog, EventLogError, StoredEvent

UNWRITTEN_CAP = 20_000  # events kept while the log cannot be written (answers are never dropped)
AUDIT_KINDS = ("answer", "answer_evidence")  # never dropped from the backlog of a log that cannot be written
RETRY_FIRST, RETRY_MAX = 2.0, 30.0  # seconds before writing to a failing log again, doubling

log = logging.getLogger(__name__)


def stored(event: dict) -> StoredEvent:
    """An event as the log would give it back (id 0: not in the log)."""
    rest = dict(event)
    return StoredEvent(0, rest.pop("ts"), rest.pop("agent", None), rest.pop("kind"), rest)


class EventWriter:
    def __init__(self, log_: EventLog | None, clock: Callable[[], float], remember: Callable[[list[dict]], None]) -> None:
        self.log = log_
        self.clock = clock
        self._remember = remember  # where events go when there is no log
        self._unwritten: deque[dict] = deque()
        self._failing: str | None = None
        self._retry_at = 0.0
        self._retry_gap = RETRY_FIRST
        self.on_notice: Callable[[str], None] = lambda text: None  # one line for the user (the monitor wires it)

    def write(self, events: list[dict]) -> None:
        """Stamp ``events`` (now, unless they say when) and write them, or keep them until they can be."""
        if not events:
            return
        now = self.clock()
        for event in events:
            event.setdefault("ts", now)
        if self.log is None:
            self._remember(events)
            return
        self._unwritten.extend(events)  # until written: the timeline shows them from there (one copy)
        self.flush(now)

    def flush(self, now: float | None = None, *, force: bool = False) -> None:
        """Write what waits to the log: at once while it works; after a failure, at most every few seconds.

        A failing write keeps the events, tells the user once, and is tried
        again after 2 s, doubling to 30 s; when it works again everything
        kept is written in order and the user is told.  Past UNWRITTEN_CAP
        events the oldest that are not answers are dropped: the audit of
        answers is kept whole.
        """
        if self.log is None or not self._unwritten:
            return
        now = self.clock() if now is None else now
        if self._failing is not None and now < self._retry_at and not force:
            self._bound_unwritten()
            return
        batch = list(self._unwritten)
        try:
            self.log.write_many(batch)
        except EventLogError as exc:
            if self._failing is None:
                log.warning("event log write failed; keeping events in memory: %s", exc)
                self.on_notice(f"{exc}; headspace keeps what happens in memory and writes it when it can")
            self._failing = str(exc)
            self._retry_at = now + self._retry_gap
            self._retry_gap = min(RETRY_MAX, self._retry_gap * 2)
            self._bound_unwritten()
            return
        self._unwritten.clear()
        if self._failing is not None:
            log.info("event log writing again (%d events kept meanwhile)", len(batch))
            self.on_notice(f"event log writing again: {len(batch)} events kept meanwhile are saved")
        self._failing = None
        self._retry_gap = RETRY_FIRST

    def _bound_unwritten(self) -> None:
        if len(self._unwritten) <= UNWRITTEN_CAP:
            return
        kept = [e for e in self._unwritten if e.get("kind") in AUDIT_KINDS]
        others = [e for e in self._unwritten if e.get("kind") not in AUDIT_KINDS]
        room = max(0, UNWRITTEN_CAP - len(kept))
        keep_ids = {id(e) for e in kept} | {id(e) for e in others[len(others) - room :]}
        self._unwritten = deque(e for e in self._unwritten if id(e) in keep_ids)

    def waiting(self, key: str) -> list[StoredEvent]:
        """Agent ``key``'s events not written yet (a full disk's backlog), oldest first."""
        return [stored(e) for e in self._unwritten if e.get("agent") == key]

    def waiting_of(self, kind: str) -> list[StoredEvent]:
        """The events of ``kind`` not written yet, oldest first."""
        return [stored(e) for e in self._unwritten if e.get("kind") == kind]

    def close(self) -> None:
        if self.log is not None:
            self.flush(force=True)  # a last try for what waits (a disk that has room again)
            self.log.close()
