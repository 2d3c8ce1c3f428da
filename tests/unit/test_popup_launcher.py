"""The popup key's launcher (cli/popup.py): no Textual, what it tells the warm UI, where its private server lives.

The whole path, with a real terminal client pressing the key, is
tests/e2e/test_popup_warm.py.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from headspace_tui.cli import popup
from headspace_tui.shared.resident_place import Place, place_of


def test_the_launcher_imports_no_textual():
    """What the popup key runs before it becomes a tmux client: Python, the CLI and the launcher, never the app (nor Rich, nor asyncio)."""
    code = (
        "import sys; import headspace_tui.cli.main, headspace_tui.cli.popup, headspace_tui.cli.popup_key, headspace_tui.tmux.identify; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'aiohttp', 'asyncio')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_warm_ui_lives_beside_the_service_of_the_same_server(tmp_path):
    env = {"XDG_RUNTIME_DIR": str(tmp_path)}
    place = popup.ui_place("S:/tmp/tmux-1000/default", env)
    service = place_of("S:/tmp/tmux-1000/default", env)
    assert place.folder == tmp_path / "headspace" / "ui" and place.name == service.name
    assert popup.tmux_socket(place) == place.folder / f"{service.name}.tmux"
    assert popup.ui_place("S:/tmp/tmux-1000/work", env).name != place.name  # one warm UI per tmux server


def test_an_open_says_where_the_user_sits_and_the_popups_size_and_nothing_else_of_the_environment():
    env = {"TMUX": "/tmp/tmux-1/default,42,3", "HEADSPACE_CLIENT": "/dev/pts/7", "HOME": "/home/u", "ANTHROPIC_API_KEY": "secret"}
    said = popup.opening(env, (100, 30))
    assert said["here"] == {"TMUX": "/tmp/tmux-1/default,42,3", "HEADSPACE_CLIENT": "/dev/pts/7"}
    assert (said["cols"], said["rows"], said["open"]) == (100, 30, 1) and "secret" not in json.dumps(said)


def test_our_tmux_commands_never_run_inside_the_users_tmux():
    """No $TMUX for the private server's clients: ``attach`` would refuse to nest, and a command without -S would reach the user's server."""
    assert popup.private_env({"TMUX": "x", "TMUX_PANE": "%1", "HEADSPACE_CLIENT": "c", "PATH": "/bin"}) == {"PATH": "/bin"}


def test_the_private_server_is_a_bare_terminal_for_one_app():
    words = popup.server_options(truecolor=False)
    commands = " ".join(words).split(" ; ")
    for wanted in ("set-option -g status off", "set-option -g prefix None", "set-option -g prefix2 None", "set-option -s escape-time 0", "set-option -g default-terminal tmux-256color"):
        assert wanted in commands, commands
    assert not any("RGB" in c for c in commands)
    assert "set-option -sa terminal-features ,*:RGB" in " ".join(popup.server_options(truecolor=True))


def test_ask_gets_the_warm_uis_answer_and_none_when_nobody_listens(tmp_path):
    place = Place(tmp_path, "t")
    assert popup.ask(place, {"open": 1}, timeout=1) is None
    got: list[dict] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(place.socket))
        server.listen(1)

        def answer() -> None:
            conn, _ = server.accept()
            with conn:
                got.append(json.loads(conn.makefile().readline()))
                conn.sendall(b'{"ok": true}\n')

        thread = threading.Thread(target=answer)
        thread.start()
        assert popup.ask(place, {"open": 1, "cols": 80}, timeout=5) == {"ok": True}
        thread.join(5)
    assert got == [{"open": 1, "cols": 80}]


def test_a_killed_warm_uis_files_are_removed_before_a_new_one_starts(short_tmp, monkeypatch):
    tmp_path = short_tmp  # it binds Unix sockets there: a path under 108 bytes, as a real runtime folder gives
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    place = popup.ui_place("S:/nowhere/at-all", {"XDG_RUNTIME_DIR": str(tmp_path)})
    os.makedirs(place.folder, mode=0o700)
    for path in (place.socket, popup.tmux_socket(place)):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as left:
            left.bind(str(path))  # a socket file nobody listens on, as a SIGKILLed one leaves
    popup._remove_stale(place)
    assert not Path(place.socket).exists() and not popup.tmux_socket(place).exists()
