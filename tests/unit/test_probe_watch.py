"""The probe's waker (remote/probe_watch.py): real inotify and pidfds on this kernel, real files in temp folders.

Every wait here is given a long timeout: a wake that comes back early
(``True``) came from the kernel, not from a timer.  The "nothing happened"
checks wait a short while and expect ``False``.
"""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from headspace_tui.remote import probe_watch
from headspace_tui.remote.probe import Probe
from headspace_tui.remote.probe_watch import Inotify, Waker

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify and pidfds are Linux's")

LONG = 20.0  # a kernel wake comes in milliseconds; a timer never before this


@pytest.fixture
def waker():
    waker = Waker()
    assert not waker.polling, waker.reason
    yield waker
    waker.close()


def settled(waker: Waker, folders=(), pids=()) -> Waker:
    """Watch these, and wait past the first wake (arming a new watch is one, for the caller's first look)."""
    waker.want([str(f) for f in folders], pids)
    while waker.wait(timeout=0.05):
        pass
    return waker


def woke(waker: Waker) -> float:
    """Seconds until the waker woke; fails the test if only the timer would have."""
    started = time.monotonic()
    assert waker.wait(timeout=LONG), "no wake from the kernel"
    return time.monotonic() - started


def test_a_file_written_replaced_or_deleted_in_a_watched_folder_wakes_it(waker, tmp_path):
    settled(waker, [tmp_path])
    assert not waker.wait(timeout=0.2)  # nothing happened: no wake

    (tmp_path / "1.json").write_text("{}")
    assert woke(waker) < 5
    settled(waker, [tmp_path])

    staged = tmp_path / ".1.json.tmp"
    staged.write_text('{"status": "busy"}')
    settled(waker, [tmp_path])  # the staged file's own events
    os.replace(staged, tmp_path / "1.json")  # as Claude rewrites its status file
    assert woke(waker) < 5
    settled(waker, [tmp_path])

    (tmp_path / "1.json").unlink()
    assert woke(waker) < 5


def test_a_folder_that_does_not_exist_yet_is_waited_for_on_its_parent(waker, tmp_path):
    folder = tmp_path / "config" / "sessions"
    settled(waker, [folder])

    (tmp_path / "unrelated").mkdir()  # another name in the parent: not a reason to look
    (tmp_path / "unrelated.txt").write_text("x")
    assert not waker.wait(timeout=0.3)

    (tmp_path / "config").mkdir()  # one step closer: the watch moves down
    assert woke(waker) < 5
    settled(waker, [folder])
    folder.mkdir()
    assert woke(waker) < 5
    settled(waker, [folder])
    (folder / "7.json").write_text("{}")  # now the folder itself is watched
    assert woke(waker) < 5


def test_a_folder_watched_itself_and_as_a_missing_ones_parent_wakes_for_both(waker, tmp_path):
    (tmp_path / "1.json").write_text("{}")
    settled(waker, [tmp_path])  # watched for itself first...
    inner = tmp_path / "spool"
    settled(waker, [tmp_path, inner])  # ...then also for a missing folder's name: the kernel keeps one watch, both masks
    (tmp_path / "1.json").unlink()
    assert woke(waker) < 5
    settled(waker, [tmp_path, inner])
    inner.mkdir()
    assert woke(waker) < 5


def test_a_folder_moved_in_whole_is_seen_and_then_watched(waker, tmp_path):
    folder = tmp_path / "spool"
    settled(waker, [folder])
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "a.json").write_text("{}")
    settled(waker, [folder])
    os.rename(staged, folder)
    assert woke(waker) < 5
    settled(waker, [folder])
    (folder / "b.json").write_text("{}")
    assert woke(waker) < 5


def test_a_folder_deleted_and_made_again_is_watched_again(waker, tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    settled(waker, [folder])
    folder.rmdir()
    assert woke(waker) < 5
    settled(waker, [folder])
    folder.mkdir()
    assert woke(waker) < 5
    settled(waker, [folder])
    (folder / "9.json").write_text("{}")  # the new folder, not the deleted one's inode
    assert woke(waker) < 5


def test_a_watched_folder_moved_away_is_watched_where_its_name_points(waker, tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    settled(waker, [folder])
    os.rename(folder, tmp_path / "old")
    assert woke(waker) < 5
    settled(waker, [folder])
    (tmp_path / "old" / "1.json").write_text("{}")  # the moved folder is no longer the one watched
    assert not waker.wait(timeout=0.3)
    folder.mkdir()
    assert woke(waker) < 5


def test_an_overflowing_event_queue_is_one_more_wake(waker, tmp_path):
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip(f"max_queued_events is {limit}: too many files to overflow it here")
    settled(waker, [tmp_path])
    for n in range(limit // 2 + 100):  # create + delete: two events each, never read meanwhile
        path = tmp_path / f"f{n}"
        path.touch()
        path.unlink()
    assert woke(waker) < 5
    assert waker.overflows >= 1
    settled(waker, [tmp_path])
    (tmp_path / "after.json").write_text("{}")  # still watching after the overflow
    assert woke(waker) < 5


def test_an_exiting_process_wakes_it_through_its_pidfd(waker):
    if not hasattr(os, "pidfd_open"):
        pytest.skip("no os.pidfd_open in this Python")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        settled(waker, pids=[child.pid])
        assert not waker.wait(timeout=0.2)
        child.kill()
        assert woke(waker) < 5
        # An exited process stays wanted until the probe's look forgets it: the wait must not spin on it.
        assert not waker.wait(timeout=0.3)
    finally:
        child.kill()
        child.wait()


def test_without_pidfds_a_watched_process_is_looked_at_on_the_slow_timer(tmp_path):
    waker = Waker(use_pidfd=False)  # as on a kernel before 5.3
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        settled(waker, [tmp_path], pids=[child.pid])
        child.kill()
        started = time.monotonic()
        assert not waker.wait()  # no wake from the exit itself...
        assert time.monotonic() - started < probe_watch.PID_PACE + 1  # ...but the next look comes at the slow pace, not the safety net's
    finally:
        child.kill()
        child.wait()
        waker.close()


def test_a_poke_wakes_it_from_another_thread(waker, tmp_path):
    settled(waker, [tmp_path])
    threading.Timer(0.1, waker.poke).start()
    assert woke(waker) < 5


def test_without_inotify_it_polls_at_the_old_pace(tmp_path):
    waker = Waker(use_inotify=False)
    try:
        assert waker.polling
        settled(waker, [tmp_path])
        (tmp_path / "1.json").write_text("{}")
        started = time.monotonic()
        assert not waker.wait()  # no kernel wake: the timer's
        assert 0.3 < time.monotonic() - started < 3 * probe_watch.POLL_PACE
    finally:
        waker.close()


def test_a_libc_without_inotify_falls_back_to_polling(monkeypatch):
    # A libc without the symbol cannot be had on this machine: its ctypes lookup failing is simulated.
    def no_symbol(self):
        raise AttributeError("undefined symbol: inotify_init1")

    monkeypatch.setattr(Inotify, "__init__", no_symbol)
    waker = Waker()
    try:
        assert waker.polling and "inotify_init1" in waker.reason
    finally:
        waker.close()


def test_the_watch_limit_reached_falls_back_to_polling(tmp_path, monkeypatch):
    # The per-user watch limit is system-wide (lowering it would hurt other programs here):
    # the kernel's ENOSPC answer to inotify_add_watch is simulated.
    def full(self, path, mask):
        raise OSError(errno.ENOSPC, "inotify_add_watch: No space left on device")

    monkeypatch.setattr(Inotify, "add", full)
    waker = Waker()
    try:
        waker.want([str(tmp_path)], [])
        assert waker.wait(timeout=LONG)  # the change of mode is a wake: the caller looks at once
        assert waker.polling and "No space left" in waker.reason
        started = time.monotonic()
        assert not waker.wait()
        assert time.monotonic() - started < 3 * probe_watch.POLL_PACE
    finally:
        waker.close()


# -- the probe, woken -----------------------------------------------------------------


class Lines(io.TextIOBase):
    """The probe's stdout: every line it pushed, for the test to wait on."""

    def __init__(self) -> None:
        self.lines: list[dict] = []
        self.changed = threading.Condition()

    def write(self, text: str) -> int:
        with self.changed:
            self.lines += [json.loads(line) for line in text.splitlines() if line.strip()]
            self.changed.notify_all()
        return len(text)

    def wait_for(self, test, timeout: float) -> dict | None:
        with self.changed:
            self.changed.wait_for(lambda: any(test(m) for m in self.lines), timeout)
            return next((m for m in self.lines if test(m)), None)


def status_file(folder: Path, pid: int, status: str) -> None:
    staged = folder / f".{pid}.tmp"
    staged.write_text(json.dumps({"pid": pid, "status": status, "sessionId": "s"}))
    os.replace(staged, folder / f"{pid}.json")


@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "polling"])
def test_the_probe_pushes_a_status_change(tmp_path, monkeypatch, inotify):
    if inotify:  # no timer could explain a push now: the kernel's event is the only wake
        monkeypatch.setattr(probe_watch, "POLL_PACE", 3600.0)
        monkeypatch.setattr(probe_watch, "SAFETY_PACE", 3600.0)
    out = Lines()
    probe = Probe(out, Waker(use_inotify=inotify))
    folder = tmp_path / "claude" / "sessions"  # not there yet, as on a host where Claude never ran
    threading.Thread(target=probe.watch, daemon=True).start()
    probe.handle({"op": "watch_statuses", "folder": str(folder)})
    assert out.wait_for(lambda m: m.get("push") == "statuses", 10) is not None  # the first look: empty

    folder.mkdir(parents=True)
    status_file(folder, 4242, "idle")
    pushed = out.wait_for(lambda m: m.get("push") == "statuses" and m["statuses"], 10)
    assert pushed is not None and pushed["statuses"][0]["status"] == "idle"

    status_file(folder, 4242, "waiting")
    pushed = out.wait_for(lambda m: m.get("push") == "statuses" and m["statuses"] and m["statuses"][0]["status"] == "waiting", 10)
    assert pushed is not None
    assert probe.waker.polling is (not inotify)
