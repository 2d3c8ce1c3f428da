"""Files that must not stop a reader: pipes, links, devices, huge and deep files (real files, no mocks)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from headspace_tui.hooks.settings import HooksError, install
from headspace_tui.shared.config import ConfigError, load_config, parse_config
from headspace_tui.shared.safe_files import Unchanged, Unreadable, depth, is_private_dir, loads, read_regular
from headspace_tui.state.eventlog import EventLog


def _finishes(fn, seconds: float = 5.0):
    """Run ``fn`` in a thread; fail (rather than hang the run) if it blocks."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the reader blocked"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def test_a_named_pipe_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "44444.json"
    os.mkfifo(fifo)
    with pytest.raises(Unreadable, match="named pipe"):
        _finishes(lambda: read_regular(fifo, 1 << 16))


def test_links_devices_and_folders(tmp_path):
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(Unreadable, match="symbolic link"):
        read_regular(tmp_path / "zero.json", 100)
    with pytest.raises(Unreadable, match="character device"):
        read_regular(tmp_path / "zero.json", 100, follow=True)
    with pytest.raises(Unreadable, match="directory"):
        read_regular(tmp_path / "dir.json", 100)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing.json", 100)


def test_size_cap(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(50 << 20)
    with pytest.raises(Unreadable, match="50.0 MB, over the 64 KB limit"):
        read_regular(big, 64 << 10)


def test_json_depth_and_recursion():
    with pytest.raises(Unreadable, match="nested too deeply"):
        loads("[" * 200_000)
    with pytest.raises(Unreadable, match="more than 64 levels"):
        loads("[" * 100 + "]" * 100)
    assert loads('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    assert depth([[[]]]) == 3


def test_unchanged_files_are_not_read_again(tmp_path):
    path = tmp_path / "s.json"
    path.write_text("1")
    reads = []
    cache: Unchanged[str] = Unchanged()
    make = lambda: reads.append(1) or path.read_text()  # noqa: E731
    assert cache.get(path, make) == "1" and cache.get(path, make) == "1"
    assert len(reads) == 1
    path.write_text("22")
    assert cache.get(path, make) == "22" and len(reads) == 2


def test_private_dir(tmp_path):
    folder = tmp_path / "spool"
    folder.mkdir(mode=0o700)
    assert is_private_dir(folder) is None
    os.chmod(folder, 0o777)
    assert "writable by other users" in is_private_dir(folder)
    link = tmp_path / "link"
    link.symlink_to(folder)
    assert "symbolic link" in is_private_dir(link)


def test_config_errors_are_one_line(tmp_path):
    bad = tmp_path / "config.toml"
    bad.write_bytes(b'nudge_text = "\xff\xfe"\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(bad)
    with pytest.raises(ConfigError, match="confirm_timeout must be a number"):
        parse_config({"confirm_timeout": True})
    with pytest.raises(ConfigError, match="idle_grace must be a number"):
        parse_config({"idle_grace": False})
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="named pipe"):
        _finishes(lambda: load_config(fifo))


def test_deep_settings_json_is_one_line_and_left_untouched(tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("[" * 100_000 + "]" * 100_000)
    before = settings.read_bytes()
    with pytest.raises(HooksError, match="nested too deeply"):
        install(settings)
    assert settings.read_bytes() == before
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]  # no stray backup or lock file


def test_a_failed_install_leaves_no_stray_backup(tmp_path):
    """The backup is written, then writing the settings fails (a file-size limit stands in for a full disk)."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "x"}))
    # In a child process: RLIMIT_FSIZE lets the small backup through and stops the larger new settings.
    code = (
        "import resource, signal, sys; from pathlib import Path;"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN);"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200));"
        "from headspace_tui.hooks.settings import install;"
        "install(Path(sys.argv[1]))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(settings)], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "File too large" in done.stderr
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]
    assert json.loads(settings.read_text()) == {"model": "x"}


def test_event_log_rows_with_a_text_time_are_skipped(tmp_path):
    path = tmp_path / "events.db"
    with EventLog(path) as log:
        log.write_many([{"kind": "agent_state", "agent": "%1", "ts": 1.0, "to": "idle"}])
    db = sqlite3.connect(path)
    db.execute("INSERT INTO events (ts, agent, kind, payload) VALUES ('yesterday', '%1', 'agent_state', '{}')")
    db.execute("INSERT INTO events (ts, agent, kind, payload) VALUES (2.0, '%1', 'agent_state', ?)", ("[" * 100_000,))
    db.commit()
    db.close()
    with EventLog(path) as log:
        rows = log.query(agent="%1")
    assert [r.ts for r in rows] == [1.0, 2.0]
    assert "_unreadable" in rows[1].payload


def test_concurrent_installs_and_uninstalls_are_serialised(tmp_path):
    """Eight processes install at once, then eight uninstall: one valid file, the user's settings back exactly."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps({"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}, indent=1)
    settings.write_text(original)
    code = "import sys; from pathlib import Path; from headspace_tui.hooks import settings as s; getattr(s, sys.argv[1])(Path(sys.argv[2]))"
    for action in ("install", "uninstall"):
        procs = [subprocess.Popen([sys.executable, "-c", code, action, str(settings)], stderr=subprocess.PIPE) for _ in range(8)]
        errors = [p.communicate(timeout=60)[1].decode() for p in procs]
        assert all(p.returncode == 0 for p in procs), errors
        if action == "install":
            data = json.loads(settings.read_text())
            assert data["model"] == "opus"
            stop = [h["command"] for group in data["hooks"]["Stop"] for h in group["hooks"]]
            assert stop.count("mine") == 1 and sum("headspace-hook" in c for c in stop) == 1
    assert settings.read_text() == original
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]
