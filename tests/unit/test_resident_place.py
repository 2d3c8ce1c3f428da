"""Where the resident service lives (shared/resident_place.py): one place per tmux server, private, its card read defensively."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from headspace_tui.shared.resident_place import PlaceError, Taken, is_held, make_folder, place_of, read_card, take_lock, where, write_card


def test_each_tmux_server_has_its_own_place_named_within_a_sockets_limits(short_tmp):
    # A runtime folder as short as a real one (/run/user/1000): pytest's own tmp_path is 10 bytes longer under
    # xdist ("popen-gw1/"), and the name's bound is what is tested here, not the test's folder.
    tmp_path = short_tmp
    env = {"XDG_RUNTIME_DIR": str(tmp_path)}
    names = {place_of(key, env).name for key in ("L:default", "L:work", "S:/tmp/x", "S:" + "/very/long" * 40, "L:ü ; rm -rf /")}
    assert len(names) == 5
    for key in ("S:" + "/very/long" * 40, "L:ü ; rm -rf /"):
        place = place_of(key, env)
        assert place.socket.parent == tmp_path / "headspace" / "service"
        assert len(str(place.socket).encode()) < 108 and place.name.isascii() and "/" not in place.name


def test_the_folder_is_made_private_and_refused_when_it_is_not(tmp_path):
    place = place_of("L:work", {"XDG_RUNTIME_DIR": str(tmp_path / "run")})
    (tmp_path / "run").mkdir(mode=0o700)
    make_folder(place)
    assert oct(place.folder.stat().st_mode & 0o777) == "0o700"
    place.folder.chmod(0o777)
    with pytest.raises(PlaceError, match="writable|others"):
        make_folder(place)
    place.folder.rmdir()
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    place.folder.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PlaceError, match="symbolic link"):
        make_folder(place)


def test_one_lock_per_server_and_the_second_is_told_where_the_first_is(tmp_path):
    place = place_of("L:work", {"XDG_RUNTIME_DIR": str(tmp_path)})
    make_folder(place)
    assert not is_held(place)
    fd = take_lock(place)
    try:
        write_card(place, {"pid": 4242, "version": "9.9", "started": 0})
        assert is_held(place)
        # Another process asks for it (flock is per open file: another process is the real case).
        other = subprocess.run(
            [sys.executable, "-c", "import sys; from headspace_tui.shared.resident_place import *; take_lock(place_of('L:work', {'XDG_RUNTIME_DIR': sys.argv[1]}))", str(tmp_path)],
            capture_output=True, text=True,
        )  # fmt: skip
        assert other.returncode != 0 and "Taken" in other.stderr and "pid 4242" in other.stderr, other.stderr
        with pytest.raises(Taken, match="pid 4242, version 9.9"):
            take_lock(place)
    finally:
        os.close(fd)
    assert not is_held(place)


@pytest.mark.parametrize(
    "make",
    [
        lambda path: path.write_text("{not json"),
        lambda path: path.write_text(json.dumps(["a", "list"])),
        lambda path: path.write_text(json.dumps({"pid": 1, "pad": "x" * 10_000})),
        lambda path: os.mkfifo(path),
        lambda path: path.symlink_to("/dev/zero"),
        lambda path: path.mkdir(),
    ],
    ids=["not json", "not a card", "too large", "a fifo", "a link", "a folder"],
)
def test_a_card_that_is_not_one_is_no_card_and_never_blocks(tmp_path, make):
    place = place_of("L:work", {"XDG_RUNTIME_DIR": str(tmp_path)})
    make_folder(place)
    make(place.card)
    assert read_card(place) is None
    assert "pid unknown, version unknown" in where(place)


def test_a_card_says_who_runs_and_for_how_long(tmp_path):
    import time

    place = place_of("L:work", {"XDG_RUNTIME_DIR": str(tmp_path)})
    make_folder(place)
    write_card(place, {"pid": 31337, "version": "1.2.3", "started": time.time() - 3700})
    assert read_card(place) == {"pid": 31337, "version": "1.2.3", "started": pytest.approx(time.time() - 3700, abs=5)}
    assert oct(place.card.stat().st_mode & 0o777) == "0o600"
    assert "pid 31337, version 1.2.3, up 61m" in where(place)


def test_a_service_killed_a_moment_ago_lets_the_next_one_take_its_lock(tmp_path):
    """The trial's restart after kill -9: the next service waits for the lock of one that is gone (here a zombie whose
    forked child still holds the lock for a second), instead of saying one already runs.  Real processes, no tmux."""
    from headspace_tui.shared import resident_place as places

    folder = tmp_path / "service"
    folder.mkdir(mode=0o700)
    place = places.Place(folder, "tmux-test")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, time, fcntl\n"
            f"fd = os.open({str(place.lock)!r}, os.O_RDWR | os.O_CREAT, 0o600); fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "if os.fork() == 0:\n    time.sleep(1.0); os._exit(0)\n"
            "os._exit(0)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    places.write_card(place, {"pid": holder.pid, "version": "0", "started": time.time()})
    time.sleep(0.2)  # the holder has exited (a zombie: not reaped yet); its child holds the lock a little longer
    began = time.monotonic()
    fd = places.take_lock(place)
    assert 0.5 < time.monotonic() - began < places.ENDING_PATIENCE
    os.close(fd)
    holder.wait()


def test_a_holder_seen_ending_once_is_waited_for_though_a_later_look_finds_it_running(tmp_path, monkeypatch):
    """Between a SIGKILL taken from the pending set and the zombie, a look finds the process neither pending nor dead.

    That window cannot be held open here, so the looks are replayed (ending, then running, as seen then); the
    lock is a real one, held by a real process that lets go of it after 0.8 s.
    """
    from headspace_tui.shared import resident_place as places

    folder = tmp_path / "service"
    folder.mkdir(mode=0o700)
    place = places.Place(folder, "tmux-test")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import os, time, fcntl\nfd = os.open({str(place.lock)!r}, os.O_RDWR | os.O_CREAT, 0o600); fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(0.8)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    looks = iter([True])
    monkeypatch.setattr(places, "_holder_ended", lambda place: next(looks, False))
    fd = places.take_lock(place)  # before: Taken at 0.5 s, the look then finding it running
    os.close(fd)
    holder.wait()


def test_a_process_being_torn_down_is_told_by_its_flags():
    """PF_EXITING read from /proc: this process is not exiting; a zombie (its flags kept) is."""
    from headspace_tui.shared import resident_place as places

    assert not places._exiting(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and b") Z " not in open(f"/proc/{child.pid}/stat", "rb").read():
        time.sleep(0.01)
    assert places._exiting(child.pid)
    child.wait()
    assert not places._exiting(child.pid)  # gone: nothing to read
