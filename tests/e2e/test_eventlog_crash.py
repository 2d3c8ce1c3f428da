"""The event log keeps every committed event when its writer is killed, and two writers share it.

The crash tests run real child processes (``sys.executable``) that write to a
temporary database and report each commit on stdout; the parent kills them
with SIGKILL mid-loop and reopens the file.  The rest are quick checks of the
query filters and of the one-line errors a user sees for a bad file.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from headspace_tui.state import machine
from headspace_tui.state.eventlog import EventLog, EventLogError, default_path

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]

# argv: db path, agent name, batch size, batches (0: forever).  Waits for "go" on stdin when asked.
WRITER = textwrap.dedent(
    """
    import sys
    from headspace_tui.state.eventlog import EventLog

    path, agent, batch, batches, wait = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "wait"
    log = EventLog(path)
    done = sum(1 for e in log.query(agent=agent))
    print("ready", flush=True)
    if wait:
        sys.stdin.readline()
    n = 0
    while batches == 0 or n < batches:
        log.write_many(
            {"kind": "state_transition", "agent": agent, "seq": done + i, "pad": "x" * 200} for i in range(batch)
        )
        done += batch
        n += 1
        print(done, flush=True)
    log.close()
    """
)


def writer(db: Path, agent: str, *, batch: int = 10, batches: int = 0, wait: bool = False) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), agent, str(batch), str(batches), "wait" if wait else "go"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", f"writer did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}"
    return proc


def integrity(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


# --------------------------------------------------------------------------
# Crashes and concurrency (real processes)


@pytest.mark.parametrize("commits_before_kill", [3, 25, 60])
def test_sigkill_mid_write_loses_no_committed_event(tmp_path, commits_before_kill):
    db = tmp_path / "events.db"
    proc = writer(db, "crasher", batch=10)
    reported = 0
    try:
        assert proc.stdout is not None
        for _ in range(commits_before_kill):
            line = proc.stdout.readline()
            assert line, "the writer died on its own"
            reported = int(line)
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # mid-loop: it never stops between our reads
        proc.wait(timeout=10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert proc.returncode == -signal.SIGKILL
    assert integrity(db) == "ok"
    with EventLog(db) as log:
        events = log.query(agent="crasher")
    seqs = [e.payload["seq"] for e in events]
    assert len(seqs) >= reported, f"{reported} reported committed, {len(seqs)} found"
    assert seqs == list(range(len(seqs))), "events are whole batches, in order, with no gaps"
    assert len(seqs) % 10 == 0, "a half-written batch never shows"


def test_a_killed_writer_can_be_followed_by_another(tmp_path):
    """Kill, reopen, kill again: the log keeps growing and stays consistent."""
    db = tmp_path / "events.db"
    total = 0
    for _ in range(3):
        proc = writer(db, "again", batch=5)
        assert proc.stdout is not None
        for _ in range(4):
            total = int(proc.stdout.readline())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert integrity(db) == "ok"
    with EventLog(db) as log:
        seqs = [e.payload["seq"] for e in log.query(agent="again")]
    assert len(seqs) >= total and seqs == list(range(len(seqs)))


def test_two_processes_write_at_once(tmp_path):
    db = tmp_path / "events.db"
    EventLog(db).close()  # both writers open an existing log
    procs = [writer(db, name, batch=5, batches=60, wait=True) for name in ("left", "right")]
    for proc in procs:  # start both together
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = [proc.communicate(timeout=60) for proc in procs]
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert out.split()[-1] == "300"
    assert integrity(db) == "ok"
    with EventLog(db) as log:
        left, right = log.query(agent="left"), log.query(agent="right")
        assert [e.payload["seq"] for e in left] == list(range(300))
        assert [e.payload["seq"] for e in right] == list(range(300))
        assert log.count() == 600
        ids = [e.id for e in left + right]
        assert len(set(ids)) == 600


# --------------------------------------------------------------------------
# Writing and querying


def test_write_and_query_filters(tmp_path):
    with EventLog(tmp_path / "e.db") as log:
        log.write("state_transition", "a", {"to": "commanded"}, ts=10.0)
        log.write("state_transition", "b", {"to": "processing"}, ts=20.0)
        log.write("agent_inactive", "a", {"state": "processing"}, ts=30.0)
        ids = log.write_many([{"kind": "state_transition", "agent": "a", "to": "complete", "ts": 40.0}, {"kind": "note", "text": "no agent"}])
        assert len(ids) == 2 and ids[0] < ids[1]

        assert [e.ts for e in log.query(agent="a")] == [10.0, 30.0, 40.0]
        assert [e.agent for e in log.query(kind="state_transition")] == ["a", "b", "a"]
        assert [e.ts for e in log.query(agent="a", kind="state_transition")] == [10.0, 40.0]
        assert [e.ts for e in log.query(since=20.0, kind="state_transition")] == [20.0, 40.0]
        assert [e.ts for e in log.query(agent="a", limit=2)] == [30.0, 40.0], "limit keeps the newest, oldest first"
        assert log.query(limit=0) == []
        first = log.query()[0]
        assert [e.id for e in log.query(after_id=first.id)] == [e.id for e in log.query()[1:]]
        (note,) = log.query(kind="note")
        assert note.agent is None and note.payload == {"text": "no agent"}
        assert log.query(agent="a", kind="state_transition")[-1].payload == {"to": "complete"}


def test_machine_events_go_straight_into_the_log(tmp_path):
    agent = machine.AgentCommands("agent-7")
    agent, events = machine.apply_turns(agent, [machine.Turn("u1", "user", "fix it", ts=1.0), machine.Turn("a1", "agent", "Let me look.", ts=2.0)])
    _, ended = machine.end_session(agent, ts=3.0)
    with EventLog(tmp_path / "e.db") as log:
        log.write_many(events + ended)
        stored = log.query(agent="agent-7")
    assert [e.kind for e in stored] == ["state_transition", "state_transition", "agent_inactive"]
    assert stored[1].payload["from"] == "commanded" and stored[1].payload["to"] == "processing"
    assert stored[2].ts == 3.0 and stored[2].payload["state"] == "processing"


def test_write_many_is_all_or_nothing(tmp_path):
    with EventLog(tmp_path / "e.db") as log:
        with pytest.raises(EventLogError, match="needs a 'kind'"):
            log.write_many([{"kind": "ok", "agent": "a"}, {"agent": "a"}])
        with pytest.raises(EventLogError):
            log.write_many([{"kind": "ok", "agent": "a", "ts": 1.0}, {"kind": "bad", "agent": "a", "ts": "not a time"}])
        assert log.count() == 0
        assert log.write_many([]) == []


def test_the_log_uses_wal_and_survives_reopening(tmp_path):
    path = tmp_path / "deep" / "er" / "events.db"
    with EventLog(path) as log:
        log.write("k", "a", {"n": 1})
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()
    with EventLog(path) as log:
        assert [e.payload for e in log.query()] == [{"n": 1}]


def test_a_closed_log_says_so(tmp_path):
    log = EventLog(tmp_path / "e.db")
    log.close()
    log.close()  # twice is fine
    with pytest.raises(EventLogError, match="is closed"):
        log.write("k", "a", {})


def test_default_path_follows_xdg_state_home(tmp_path):
    assert default_path({"XDG_STATE_HOME": str(tmp_path), "HOME": "/home/x"}) == tmp_path / "headspace" / "events.db"
    assert default_path({"HOME": "/home/x"}) == Path("/home/x/.local/state/headspace/events.db")
    assert default_path({"XDG_STATE_HOME": "relative/dir", "HOME": "/home/x"}) == Path("/home/x/.local/state/headspace/events.db")


# --------------------------------------------------------------------------
# Bad files: one clear line, never a traceback


def one_line(exc: pytest.ExceptionInfo[EventLogError], path: Path) -> str:
    message = str(exc.value)
    assert "\n" not in message and str(path) in message
    return message


def test_garbage_file_is_reported_clearly(tmp_path):
    path = tmp_path / "events.db"
    path.write_bytes(os.urandom(8192))
    with pytest.raises(EventLogError) as exc:
        EventLog(path)
    assert "not a database" in one_line(exc, path)


def test_text_file_is_reported_clearly(tmp_path):
    path = tmp_path / "events.db"
    path.write_text("these are my notes, not a database\n" * 200)
    with pytest.raises(EventLogError) as exc:
        EventLog(path)
    assert "not a database" in one_line(exc, path)


def test_damaged_database_is_reported_clearly(tmp_path):
    path = tmp_path / "events.db"
    with EventLog(path) as log:
        log.write_many({"kind": "k", "agent": "a", "pad": "y" * 500} for _ in range(200))
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(path.read_bytes())
    data[4096 : len(data)] = os.urandom(len(data) - 4096)  # keep the header, wreck every page after it
    path.write_bytes(bytes(data))
    with pytest.raises(EventLogError) as exc:
        with EventLog(path) as log:
            log.query()
    assert "damaged" in one_line(exc, path)


def test_a_foreign_events_table_is_reported(tmp_path):
    path = tmp_path / "events.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE events (name TEXT)")
    con.commit()
    con.close()
    with pytest.raises(EventLogError) as exc:
        EventLog(path)
    assert "another shape" in one_line(exc, path)


def test_a_directory_is_reported(tmp_path):
    with pytest.raises(EventLogError) as exc:
        EventLog(tmp_path)
    assert "is a directory" in one_line(exc, tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_reported(tmp_path):
    path = tmp_path / "events.db"
    EventLog(path).close()
    path.chmod(0)
    try:
        with pytest.raises(EventLogError) as exc:
            EventLog(path)
        assert "permission denied" in one_line(exc, path)
    finally:
        path.chmod(0o600)


def test_a_folder_that_cannot_be_created_is_reported(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    path = blocker / "sub" / "events.db"
    with pytest.raises(EventLogError) as exc:
        EventLog(path)
    assert "cannot create the folder" in one_line(exc, path)
