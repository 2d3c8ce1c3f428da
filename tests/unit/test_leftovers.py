"""The sweep at start (cli/leftovers.py): a dead headspace's things go, a live one's and everyone else's stay."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from headspace_tui.cli import leftovers


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _dead_socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()  # the file stays; nobody listens


def test_a_dead_owners_folder_goes_with_its_dead_sockets_and_a_live_ones_stays(tmp_path):
    dead = tmp_path / f"hs-ssh-{_dead_pid()}-abc"
    dead.mkdir(mode=0o700)
    _dead_socket(dead / "0123456789ab")
    live = tmp_path / f"hs-ssh-{os.getpid()}-def"
    live.mkdir(mode=0o700)
    assert leftovers.sweep_control_folders(str(tmp_path), time.time()) == [str(dead)]
    assert not dead.exists() and live.is_dir()


def test_a_socket_that_still_answers_or_a_file_keeps_its_folder(tmp_path):
    answering = tmp_path / f"hs-ssh-{_dead_pid()}-abc"
    answering.mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(answering / "master"))
    server.listen(1)
    other = tmp_path / f"hs-ssh-{_dead_pid()}-def"
    other.mkdir(mode=0o700)
    (other / "notes.txt").write_text("not ours to judge")
    try:
        assert leftovers.sweep_control_folders(str(tmp_path), time.time()) == []
    finally:
        server.close()
    assert answering.is_dir() and (other / "notes.txt").exists()


def test_old_style_folders_go_only_when_empty_and_long_untouched(tmp_path):
    old_empty = tmp_path / "hs-ssh-k2j4h5g6"
    old_empty.mkdir()
    recent_empty = tmp_path / "hs-ssh-a1b2c3d4"
    recent_empty.mkdir()
    old_full = tmp_path / "hs-ssh-z9y8x7w6"
    old_full.mkdir()
    _dead_socket(old_full / "sock")
    now = time.time()
    for folder in (old_empty, old_full):
        os.utime(folder, (now - 2 * leftovers.OLD_STYLE_AGE, now - 2 * leftovers.OLD_STYLE_AGE))
    assert leftovers.sweep_control_folders(str(tmp_path), now) == [str(old_empty)]
    assert recent_empty.is_dir() and old_full.is_dir()


def test_links_files_and_other_names_are_left_alone(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / f"hs-ssh-{_dead_pid()}-lnk").symlink_to(target)
    (tmp_path / f"hs-ssh-{_dead_pid()}-file").write_text("x")
    unrelated = tmp_path / "ssh-somebody"
    unrelated.mkdir()
    assert leftovers.sweep_control_folders(str(tmp_path), time.time()) == []
    assert target.is_dir() and unrelated.is_dir()


def test_a_stale_answer_socket_goes_and_a_held_channel_stays(tmp_path):
    import fcntl

    folder = tmp_path / "run" / "headspace"
    folder.mkdir(parents=True, mode=0o700)
    _dead_socket(folder / "answer.sock")
    held = os.open(folder / "answer.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)  # a live headspace holds the channel (its socket may be about to listen)
    try:
        assert leftovers.sweep({"XDG_RUNTIME_DIR": str(tmp_path / "run")}, temp=str(tmp_path)) == []
        assert (folder / "answer.sock").exists()
    finally:
        os.close(held)
    assert leftovers.sweep({"XDG_RUNTIME_DIR": str(tmp_path / "run")}, temp=str(tmp_path)) == [str(folder / "answer.sock")]
    assert not (folder / "answer.sock").exists()
