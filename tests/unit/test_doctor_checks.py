"""doctor's checks that need tmux but no Claude: the notification paths it names, control mode every time.

A private tmux server and a real tmux client in a pty (the user's
terminal); doctor is told it runs inside that server through ``$TMUX``, as
it would be in a pane there.
"""

from __future__ import annotations

import sys

import pytest

from headspace_tui.cli.doctor import FAIL, OK, WARN, check_notifications, check_spool, check_tmux
from headspace_tui.shared.config import Config
from headspace_tui.tmux.server import TmuxServer
from tests.harness.terminal import Terminal
from tests.harness.wait import poll


@pytest.fixture
def inside(private_tmux, tmp_path):
    """Two sessions, a user's client attached to the second; the env of a program in a pane of the first."""
    pane = private_tmux.new_session("hs", width=80, height=24, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])
    private_tmux.new_session("work", width=80, height=24, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])
    user = Terminal(private_tmux, "work")
    poll(lambda: private_tmux.run("list-clients", "-F", "#{client_tty}").strip(), bool, timeout=10)
    socket = private_tmux.run("display-message", "-p", "#{socket_path}").strip()
    try:
        yield {"TMUX": f"{socket},1,0", "TMUX_PANE": pane, "PATH": "/usr/bin:/bin"}, private_tmux.run("list-clients", "-F", "#{client_tty}").strip()
    finally:
        user.close()


def lines(checks) -> list[tuple[str, str, str]]:
    return [(c.name.strip(), c.verdict, c.detail) for c in checks]


def test_doctor_names_the_path_on_this_tmux_and_each_clients_terminal(inside):
    env, tty = inside
    version = TmuxServer(socket_path=env["TMUX"].split(",")[0]).run("display-message", "-p", "#{version}").strip()
    found = lines(check_notifications(env, Config()))
    assert found[0][:2] == ("notifications", OK)
    if version.startswith(("3.3", "3.2")):  # this machine's tmux: 3.3a
        assert "passthrough only to a client showing headspace's pane" in found[0][2]
        assert "every other client gets it straight to its terminal (client_tty)" in found[0][2]
    else:
        assert "passthrough (all) to every client whose session has headspace's window" in found[0][2]
    assert found[1] == ("client", OK, f"{tty}: its terminal can be written to, so it is reached in any session (direct when tmux would not pass it on)")
    # The pty's terminal says nothing of itself (no XTVERSION answer): TERM alone, not a terminal known to show OSC 9.
    assert found[2] == ("terminal", OK, f"{tty} (xterm-256color): not known to show OSC 9: the notice also goes to its tmux status line (display-message)")
    assert len(found) == 3  # headspace-less control clients are none here, and none would be listed


def test_doctor_names_bell_only_none_and_outside_tmux(inside):
    env, _ = inside
    assert "tmux rings the clients whose session has headspace's window" in lines(check_notifications(env, Config(notify="bell")))[0][2]
    assert lines(check_notifications(env, Config(notify="none"))) == [("notifications", OK, 'notify = "none": nothing is written to a terminal')]
    outside = lines(check_notifications({"PATH": "/usr/bin:/bin"}, Config(notify="osc777")))
    assert outside == [("notifications", OK, "not inside tmux: OSC 777 and a bell straight to headspace's terminal")]


def test_doctor_checks_the_notify_command(tmp_path):
    program = tmp_path / "tell"
    program.write_text(f"#!{sys.executable}\n")
    program.chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    (_, (name, verdict, detail)) = lines(check_notifications(env, Config(notify_command=("tell", "--topic", "a b"))))
    assert (name, verdict) == ("notify_command", OK) and detail.startswith("runs tell --topic 'a b' per notification (no shell")
    (_, (name, verdict, detail)) = lines(check_notifications(env, Config(notify_command=("~/nowhere/tell",))))
    assert (name, verdict) == ("notify_command", WARN) and "'~/nowhere/tell' not found or not executable" in detail


def test_control_mode_is_found_every_time(private_tmux, tmp_path):
    """tmux -C with stdin at its end may exit before the answer (3.3a: about one run in three): doctor keeps stdin open."""
    private_tmux.new_session("one", width=80, height=24, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])
    server = TmuxServer(socket_name=private_tmux.name)
    for _ in range(12):
        checks = {c.name: c for c in check_tmux(server)}
        assert checks["tmux server"].detail == f"1 session on socket {private_tmux.name!r}"
        assert checks["control mode"].verdict == OK, checks["control mode"].detail


def test_the_spool_check_names_agents_whose_hooks_write_under_another_xdg_runtime_dir(tmp_path):
    """The live split, with the real hook program and Claude: tests/e2e/test_spool_split.py."""
    import os
    from pathlib import Path

    ours, theirs, loose = tmp_path / "ours", tmp_path / "theirs", tmp_path / "loose"
    for folder in (ours, theirs, loose):
        folder.mkdir(mode=0o700)
    (loose / "headspace").mkdir(mode=0o777)
    os.chmod(loose / "headspace", 0o777)
    env = {"XDG_RUNTIME_DIR": str(ours)}
    same = check_spool(env, {ours / "headspace": ["a:0.0"]})
    assert [c.verdict for c in same] == [OK]
    fallback = Path(f"/tmp/headspace-{os.getuid()}")
    checks = check_spool(
        env,
        {
            ours / "headspace": ["a:0.0"],
            theirs / "headspace": ["b:0.0", "c:0.0"],
            tmp_path / "gone" / "headspace": ["d:0.0"],
            loose / "headspace": ["e:0.0"],
            fallback: ["f:0.0"],
        },
    )
    by_agent = {agent: c for c in checks[1:] for agent in "bdef" if f"{agent}:0.0" in c.detail}
    assert checks[0].verdict == OK and set(by_agent) == set("bdef"), checks
    assert by_agent["b"].verdict == OK and f"split: hooks write to {theirs / 'headspace' / 'spool'} (for b:0.0, c:0.0)" in by_agent["b"].detail
    assert "headspace watches and answers there too" in by_agent["b"].detail
    assert by_agent["d"].verdict == WARN and "does not exist" in by_agent["d"].detail and "dropped" in by_agent["d"].detail
    assert f"tmux set-environment -g XDG_RUNTIME_DIR {ours}" in by_agent["d"].fix
    assert by_agent["e"].verdict == FAIL and "writable by other users" in by_agent["e"].detail
    assert by_agent["f"].verdict == OK and "they have no XDG_RUNTIME_DIR" in by_agent["f"].detail
    unset = check_spool({}, {tmp_path / "gone" / "headspace": ["d:0.0"]})
    assert "tmux set-environment -g -u XDG_RUNTIME_DIR" in unset[-1].fix


def test_a_server_of_many_sessions_whose_timers_cannot_be_lined_up_hears_what_they_cost_and_the_fix(private_tmux, tmp_path):
    """At 100 sessions and more, with a hook on set-option (headspace then leaves the status timers out of line), doctor says how often tmux wakes for them.

    Without the hook, at 60 s or with the status line off: nothing.
    """
    private_tmux.new_session("s0", width=80, height=24, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])
    server = TmuxServer(socket_name=private_tmux.name)
    private_tmux.run("set-hook", "-g", "after-set-option", "display-message set")
    assert "tmux at rest" not in {c.name for c in check_tmux(server)}, "said with one session"
    for n in range(1, 120):
        private_tmux.run("new-session", "-d", "-s", f"s{n}", "sleep 600")
    said = {c.name: c for c in check_tmux(server)}["tmux at rest"]
    assert said.verdict == WARN and "120 sessions" in said.detail and "about 8 times a second" in said.detail and "status-interval 15" in said.detail, said
    assert "set -g status-interval 60" in said.fix and "a hook on set-option" in said.detail, said
    private_tmux.run("set-hook", "-g", "-u", "after-set-option")
    assert "tmux at rest" not in {c.name for c in check_tmux(server)}, "said while headspace lines the timers up"
    private_tmux.run("set-hook", "-g", "after-set-option", "display-message set")
    private_tmux.run("set-option", "-g", "status-interval", "60")
    assert "tmux at rest" not in {c.name for c in check_tmux(server)}
    private_tmux.run("set-option", "-g", "status-interval", "5")
    private_tmux.run("set-option", "-g", "status", "off")
    assert "tmux at rest" not in {c.name for c in check_tmux(server)}
