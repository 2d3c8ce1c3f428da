"""The service's event log is written by a thread of its own: the loop every client shares never waits on the disk.

A real SQLite event log in a temporary folder; only its disk's speed is
played: ``write_many`` is held at a gate (as a slow disk, a WAL
checkpoint's sync or another process's lock would hold it) and the test
says when the disk answers.
"""

from __future__ import annotations

import asyncio
import threading
import time

from headspace_tui.service.records.journal import Journal
from headspace_tui.state.eventlog import EventLog, EventLogError


def _until(predicate, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _slow_disk(log: EventLog) -> tuple[threading.Event, list[threading.Thread]]:
    """Hold every write of ``log`` until the gate opens; note which thread wrote."""
    gate, writers = threading.Event(), []
    real = log.write_many

    def held(events):
        writers.append(threading.current_thread())
        assert gate.wait(30), "the disk was never let answer"
        return real(events)

    log.write_many = held  # type: ignore[method-assign]
    return gate, writers


def _event(n: int) -> dict:
    return {"kind": "answer", "agent": "local|s|%1|7@1", "what": f"answer {n}"}


def test_writes_return_at_once_while_the_disk_is_slow_and_each_event_is_read_exactly_once(tmp_path):
    log = EventLog(tmp_path / "events.db")
    journal = Journal(log, background=True)
    gate, writers = _slow_disk(log)
    key = "local|s|%1|7@1"

    async def on_the_loop() -> list[str]:
        for n in range(50):
            journal.writer.write([_event(n)])
        # The disk has not answered yet, and the loop went on: every write was only queued
        # (a write on this thread would have waited at the gate, which nothing here opens).
        assert not gate.is_set() and threading.main_thread() not in writers
        return [e.payload["what"] for e in journal.timeline(key)]

    seen = asyncio.run(on_the_loop())
    assert seen == [f"answer {n}" for n in range(50)]  # still waiting, shown from the queue
    _until(lambda: writers, "the writer thread to reach the disk")
    assert all(thread is not threading.main_thread() for thread in writers)
    gate.set()
    _until(lambda: not journal.writer.waiting(key), "everything written")
    assert [e.payload["what"] for e in journal.timeline(key)] == [f"answer {n}" for n in range(50)]  # once each, from the log
    journal.close()
    with EventLog(tmp_path / "events.db") as again:
        assert [e.payload["what"] for e in again.query(agent=key, limit=100)] == [f"answer {n}" for n in range(50)]


def test_a_reader_off_the_loop_never_sees_a_batch_twice_or_not_at_all_while_it_moves_into_the_log(tmp_path):
    """``timeline`` (served in a thread) joins the queue and the log; a batch leaving the queue as it enters the log is one step to it."""
    log = EventLog(tmp_path / "events.db")
    journal = Journal(log, background=True)
    key = "local|s|%1|7@1"
    written = 0
    looks = 0
    stop = threading.Event()
    wrong: list[list[str]] = []

    def reader() -> None:
        nonlocal looks
        while not stop.is_set():
            got = [e.payload["what"] for e in journal.timeline(key, limit=10_000)]
            if got != [f"answer {n}" for n in range(len(got))]:
                wrong.append(got)
            looks += 1

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for n in range(400):
            journal.writer.write([_event(n)])
            written += 1
            if n % 40 == 0:
                time.sleep(0.005)  # let the writer take a batch
    finally:
        _until(lambda: not journal.writer.waiting(key), "everything written")
        stop.set()
        thread.join()
    assert written == 400 and looks > 0
    assert not wrong, f"a look saw an event twice or skipped one: {wrong[0][:20]}"
    journal.close()


def test_a_close_writes_what_the_thread_had_not_yet_written(tmp_path):
    log = EventLog(tmp_path / "events.db")
    journal = Journal(log, background=True)
    gate, _ = _slow_disk(log)
    for n in range(20):
        journal.writer.write([_event(n)])
    threading.Timer(0.2, gate.set).start()  # the disk answers a moment after the service began to stop
    journal.close()
    with EventLog(tmp_path / "events.db") as again:
        assert [e.payload["what"] for e in again.query(agent="local|s|%1|7@1", limit=100)] == [f"answer {n}" for n in range(20)]


def test_a_failing_log_is_told_once_on_the_loop_and_everything_is_written_when_it_works_again(tmp_path):
    log = EventLog(tmp_path / "events.db")
    now = [1_000.0]
    journal = Journal(log, clock=lambda: now[0], background=True)
    real = log.write_many
    failing = {"on": True}

    def write_many(events):
        if failing["on"]:
            raise EventLogError("disk full")
        return real(events)

    log.write_many = write_many  # type: ignore[method-assign]
    told: list[tuple[str, bool]] = []

    async def on_the_loop() -> None:
        loop_thread = threading.current_thread()
        journal.on_notice = lambda text: told.append((text, threading.current_thread() is loop_thread))
        for n in range(10):
            journal.writer.write([_event(n)])
            now[0] += 1.0
        while not told:
            await asyncio.sleep(0.01)
        failing["on"] = False
        now[0] += 60.0  # past the retry time: the writer tries again by itself
        while len(told) < 2:
            await asyncio.sleep(0.01)

    asyncio.run(asyncio.wait_for(on_the_loop(), 20))
    assert [text for text, _ in told] == ["disk full; headspace keeps what happens in memory and writes it when it can", "event log writing again: 10 events kept meanwhile are saved"]
    assert all(on_loop for _, on_loop in told), "a notice is told on the loop (the store's subscribers live there)"
    journal.close()
    with EventLog(tmp_path / "events.db") as again:
        assert len(again.query(agent="local|s|%1|7@1", limit=100)) == 10
