"""notify-send only on your own desktop, run without a shell; passthrough on headspace's pane only."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from headspace_tui.notifications.decide import Notification
from headspace_tui.notifications.deliver import desktop_notify, desktop_problem, enable_passthrough, notify_send_path, tmux_socket
from tests.harness.tmux import PrivateTmux


def stand_in(tmp_path, body: str = "") -> str:
    """A notify-send that writes the arguments it got to args.json (a real program, run as notify-send is)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    program = folder / "notify-send"
    program.write_text(f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open({str(tmp_path / 'args.json')!r}, 'w'))\n{body}\n")
    program.chmod(0o755)
    return str(folder)


def test_notify_send_gets_title_and_body_as_arguments_never_as_options(tmp_path):
    folder = stand_in(tmp_path)
    binary = notify_send_path({"PATH": folder})
    assert binary is not None
    hostile = Notification("-u critical $(touch PWNED)", "--icon=/etc/passwd `id`", ())
    assert desktop_notify(hostile, binary) == ""
    args = json.loads((tmp_path / "args.json").read_text())
    assert args == ["--app-name=headspace", "--", "-u critical $(touch PWNED)", "--icon=/etc/passwd `id`"]
    assert not (tmp_path / "PWNED").exists()


def test_a_failing_or_hanging_notify_send_is_a_line_not_a_crash(tmp_path, monkeypatch):
    binary = str(tmp_path / "bin" / "notify-send")
    stand_in(tmp_path, "sys.stderr.write('no bus'); sys.exit(3)")
    assert desktop_notify(Notification("t", "b", ()), binary) == "notify-send failed (exit status 3: no bus)"
    stand_in(tmp_path, "import time; time.sleep(30)")
    monkeypatch.setattr("headspace_tui.notifications.deliver.NOTIFY_SEND_TIMEOUT", 0.5)
    assert desktop_notify(Notification("t", "b", ()), binary) == "notify-send failed (TimeoutExpired)"
    assert desktop_notify(Notification("t", "b", ()), str(tmp_path / "missing")) == "notify-send failed (FileNotFoundError)"


@pytest.mark.parametrize(
    "env,problem",
    [
        ({"SSH_CONNECTION": "10.0.0.1 5 10.0.0.2 22", "DISPLAY": ":0"}, "over SSH"),
        ({"SSH_TTY": "/dev/pts/3", "WAYLAND_DISPLAY": "wayland-0"}, "over SSH"),
        ({}, "no desktop session"),
        ({"DISPLAY": ":0", "PATH": "/nonexistent"}, "notify-send is not installed"),
    ],
)
def test_notify_send_only_on_a_local_desktop(env, problem):
    assert problem in desktop_problem(env)


def test_a_local_desktop_with_notify_send_is_fine(tmp_path):
    assert desktop_problem({"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1/bus", "PATH": stand_in(tmp_path)}) == ""


def test_the_socket_is_the_one_headspace_runs_in():
    assert tmux_socket({"TMUX": "/tmp/tmux-1000/my,server,1234,0"}) == "/tmp/tmux-1000/my,server"
    assert tmux_socket({}) == ""
    assert enable_passthrough({}) == ("", "")  # outside tmux: nothing to do


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_passthrough_is_allowed_on_headspaces_own_pane_only(tmp_path):
    tmux = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"})
    try:
        mine = tmux.new_session("hs", width=80, height=24, cwd=str(tmp_path), command=["sleep", "60"])
        other = tmux.new_session("agent", width=80, height=24, cwd=str(tmp_path), command=["sleep", "60"])
        env = {"TMUX": f"{tmux.socket_path},1,0", "TMUX_PANE": mine}
        value, problem = enable_passthrough(env)
        assert problem == "" and value in ("all", "on")  # all from tmux 3.4, on before
        show = lambda pane: tmux.run("show-options", "-p", "-t", pane, "-v", "allow-passthrough", check=False).strip()  # noqa: E731
        assert show(mine) == value
        assert show(other) in ("", "off")
        assert tmux.run("show-options", "-g", "-v", "allow-passthrough").strip() == "off"
        value, problem = enable_passthrough({"TMUX": f"{tmux.socket_path},1,0", "TMUX_PANE": "%999"})
        assert value == "" and "cannot allow passthrough" in problem
    finally:
        tmux.close()
