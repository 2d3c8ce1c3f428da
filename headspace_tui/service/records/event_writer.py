"""The journal's writer: events to the event log, off the loop, and what waits when the log cannot take them.

Writing can fail for a while (a full disk, an I/O error, a log made
read-only).  What could not be written waits here, in order, and goes out at
the next try; the user is told once, and once more when it is written.
Without a log at all, events go to the journal's memory instead
(``remember``): the timeline still works, bounded, and forgets on exit.

In the service (``background``) one thread of its own does every write: an
event is queued on the loop in microseconds, and a slow disk, a WAL
checkpoint's sync or a log locked by ``headspace rules`` in another process
holds that thread, never the loop every client shares.  Readers that join
the log with what still waits (``reading``) see each event exactly once:
a batch leaves the queue in the same step as it enters the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator

from ...state.eventlog import EventLog, EventLogError, StoredEvent

UNWRITTEN_CAP = 20_000  # events kept while the log cannot be written (answers are never dropped)
AUDIT_KINDS = ("answer", "answer_evidence")  # never dropped from the backlog of a log that cannot be written
RETRY_FIRST, RETRY_MAX = 2.0, 30.0  # seconds before writing to a failing log again, doubling
CLOSE_WAIT = 10.0  # at the end, how long the writer may take to write what waits before it is given up

log = logging.getLogger(__name__)


def stored(event: dict) -> StoredEvent:
    """An event as the log would give it back (id 0: not in the log)."""
    rest = dict(event)
    return StoredEvent(0, rest.pop("ts"), rest.pop("agent", None), rest.pop("kind"), rest)


class EventWriter:
    def __init__(self, log_: EventLog | None, clock: Callable[[], float], remember: Callable[[list[dict]], None], *, background: bool = False) -> None:
        self.log = log_
        self.clock = clock
        self._remember = remember  # where events go when there is no log
        self._unwritten: deque[dict] = deque()
        self._failing: str | None = None
        self._retry_at = 0.0
        self._retry_gap = RETRY_FIRST
        self.on_notice: Callable[[str], None] = lambda text: None  # one line for the user (the monitor wires it)
        # ``_queue``: the queue itself (appended on the loop, taken by the writer: held for microseconds).
        # ``_commit``: one batch's write and its leaving the queue, as one step to readers (``reading``).
        self._queue, self._commit = threading.Lock(), threading.Lock()
        self._background = background and log_ is not None
        self._thread: threading.Thread | None = None
        self._kick = threading.Event()
        self._stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None  # where notices are told (the loop that first wrote)

    def write(self, events: list[dict]) -> None:
        """Stamp ``events`` (now, unless they say when) and write them, or keep them until they can be.

        In the background the writer thread writes them; here they are only
        queued (readers see them through ``waiting`` until they are in the log).
        """
        if not events:
            return
        now = self.clock()
        for event in events:
            event.setdefault("ts", now)
        if self.log is None:
            self._remember(events)
            return
        with self._queue:
            self._unwritten.extend(events)  # until written: the timeline shows them from there (one copy)
        if not self._background:
            self.flush(now)
            return
        if self._thread is None:
            self._start()
        self._kick.set()

    def _start(self) -> None:
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="headspace event log writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        """The writer thread: write what waits whenever some comes, and retry a failing log at its time."""
        while not self._stopping:
            wait = max(0.05, self._retry_at - self.clock()) if self._failing is not None else None
            self._kick.wait(wait)
            self._kick.clear()
            if self._stopping:
                return
            try:
                self.flush()
            except Exception:  # the writer goes on: the events wait for the next try
                log.exception("writing the event log failed")

    def flush(self, now: float | None = None, *, force: bool = False) -> None:
        """Write what waits to the log: at once while it works; after a failure, at most every few seconds.

        A failing write keeps the events, tells the user once, and is tried
        again after 2 s, doubling to 30 s; when it works again everything
        kept is written in order and the user is told.  Past UNWRITTEN_CAP
        events the oldest that are not answers are dropped: the audit of
        answers is kept whole.  One flush at a time (the writer thread's, or
        the last one at ``close``).
        """
        if self.log is None:
            return
        said = ""
        with self._commit:  # told after it: a notice's subscribers may read the journal (``reading``)
            now = self.clock() if now is None else now
            with self._queue:
                if not self._unwritten:
                    return
                if self._failing is not None and now < self._retry_at and not force:
                    self._bound_unwritten()
                    return
                batch = list(self._unwritten)
            try:
                self.log.write_many(batch)
            except EventLogError as exc:
                if self._failing is None:
                    log.warning("event log write failed; keeping events in memory: %s", exc)
                    said = f"{exc}; headspace keeps what happens in memory and writes it when it can"
                self._failing = str(exc)
                self._retry_at = now + self._retry_gap
                self._retry_gap = min(RETRY_MAX, self._retry_gap * 2)
                with self._queue:
                    self._bound_unwritten()
            else:
                with self._queue:
                    for _ in batch:  # only this flush takes from the left; writes only add on the right
                        self._unwritten.popleft()
                if self._failing is not None:
                    log.info("event log writing again (%d events kept meanwhile)", len(batch))
                    said = f"event log writing again: {len(batch)} events kept meanwhile are saved"
                self._failing = None
                self._retry_gap = RETRY_FIRST
        if said:
            self._say(said)

    def _say(self, text: str) -> None:
        """One line for the user, told on the loop that wrote (the store's subscribers live there)."""
        loop = self._loop
        if loop is None or threading.current_thread() is not self._thread:
            self.on_notice(text)
            return
        with contextlib.suppress(RuntimeError):  # the loop has closed: the log has the line
            loop.call_soon_threadsafe(self.on_notice, text)

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the writer between a reader's look at ``waiting`` and at the log: no batch moves from one to the other meanwhile.

        A reader looks at ``waiting`` first, then at the log: so it misses
        nothing however the two interleave.  Off the loop it waits for a write
        under way to end, and sees each event once.  On the loop it never
        waits for the disk: while a batch is being written it reads without
        holding the writer, and a batch committed between its two looks is
        seen twice in that one look.
        """
        try:
            asyncio.get_running_loop()
            on_loop = True
        except RuntimeError:
            on_loop = False
        held = self._commit.acquire(blocking=not on_loop)
        try:
            yield
        finally:
            if held:
                self._commit.release()

    def _bound_unwritten(self) -> None:
        if len(self._unwritten) <= UNWRITTEN_CAP:
            return
        kept = [e for e in self._unwritten if e.get("kind") in AUDIT_KINDS]
        others = [e for e in self._unwritten if e.get("kind") not in AUDIT_KINDS]
        room = max(0, UNWRITTEN_CAP - len(kept))
        keep_ids = {id(e) for e in kept} | {id(e) for e in others[len(others) - room :]}
        self._unwritten = deque(e for e in self._unwritten if id(e) in keep_ids)

    def waiting(self, key: str) -> list[StoredEvent]:
        """Agent ``key``'s events not written yet (a full disk's backlog, or a moment's queue), oldest first."""
        with self._queue:
            return [stored(e) for e in self._unwritten if e.get("agent") == key]

    def since(self, log: EventLog | None, kind: str, since: float) -> list[StoredEvent]:
        """The events of ``kind`` at or after ``since``, oldest first: ``log``'s, then those still waiting to be written (none missed); [] when the log cannot be read."""
        if log is None:
            return []
        try:
            with self.reading():
                waiting = [e for e in self.waiting_of(kind) if e.ts >= since]
                return log.query(kind=kind, since=since) + waiting
        except EventLogError:
            return []

    def waiting_of(self, kind: str) -> list[StoredEvent]:
        """The events of ``kind`` not written yet, oldest first."""
        with self._queue:
            return [stored(e) for e in self._unwritten if e.get("kind") == kind]

    def close(self) -> None:
        """Write what waits (a last try, even for a failing log) and close the log: nothing queued is left behind."""
        if self.log is None:
            return
        thread = self._thread
        if thread is not None:
            self._stopping = True
            self._kick.set()
            thread.join(CLOSE_WAIT)
            if thread.is_alive():  # a write stuck on the disk: its batch cannot be known written; what waits is said lost
                log.error("the event log writer did not finish within %gs; %d events not written", CLOSE_WAIT, len(self._unwritten))
                return
        self.flush(force=True)  # a last try for what waits (a disk that has room again)
        self.log.close()
