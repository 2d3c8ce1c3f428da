"""A full disk under the event log: said once, nothing lost, written when space returns.

A real tmpfs (mounted for the test, 1 MiB) holds the state folder and the
real SQLite event log.  The disk is filled with a file, answers are recorded
(the audit the log exists for), the disk is freed again:

* the journal tells the user exactly once that the log cannot be written,
  and once that it writes again;
* nothing raises to the caller (headspace keeps running);
* every answer recorded meanwhile is in the log afterwards, in order.

Mounting needs root (CI runs as root); elsewhere the test says why it skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from headspace_tui.events import Answered
from headspace_tui.model import Agent
from headspace_tui.service.records.journal import Journal
from headspace_tui.state.eventlog import EventLog

pytestmark = pytest.mark.e2e


@pytest.fixture
def tiny_disk(tmp_path):
    mount = tmp_path / "state"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"cannot mount a tmpfs: {done.stderr.strip()}")
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _fill(folder: Path) -> Path:
    """Fill the disk to the last byte."""
    ballast = folder / "ballast"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    return ballast


def _answer(agent: Agent, n: int, at: float) -> Answered:
    return Answered(agent, channel="keys", what=f"answer {n}", tool="Bash", tool_input=f'{{"command": "touch file-{n}"}}', at=at)


def _until(predicate, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.mark.parametrize("background", [False, True], ids=["inline", "writer-thread"])
def test_a_full_disk_is_said_once_and_the_answers_reach_the_log_when_space_returns(tiny_disk, background):
    """Both ways of writing: inline (one-shot commands) and the service's writer thread (``Journal.open``)."""
    now = [1_000.0]
    told: list[str] = []
    journal = Journal(EventLog(tiny_disk / "events.db"), clock=lambda: now[0], background=background)
    journal.on_notice = told.append
    agent = Agent(pane_id="%1", target="work:0.0", session="work", key="local|s|%1|7@1")
    journal.on_event(_answer(agent, 0, now[0]))  # the log works
    _until(lambda: not journal.writer.waiting(agent.key), "the first answer written")
    ballast = _fill(tiny_disk)
    for n in range(1, 41):  # answers while the disk is full, some after a retry time has passed
        now[0] += 1.0
        journal.on_event(_answer(agent, n, now[0]))
    _until(lambda: told, "the full disk said")
    assert len(told) == 1, told
    assert "full" in told[0] or "disk" in told[0], told[0]
    assert [e.payload["what"] for e in journal.timeline(agent.key)][-1] == "answer 40"  # the timeline still shows them
    ballast.unlink()
    now[0] += 60.0
    journal.on_event(_answer(agent, 41, now[0]))
    _until(lambda: len(told) == 2, "writing again said")
    assert len(told) == 2 and "writing again" in told[1], told
    journal.close()
    with EventLog(tiny_disk / "events.db") as log:
        answers = [e.payload["what"] for e in log.query(agent=agent.key, kind="answer", limit=1000)]
    assert answers == [f"answer {n}" for n in range(42)]
