"""``headspace popup-binding`` and doctor's popup-key check, against a real private tmux server.

The server is started with PATH=/usr/bin:/bin (the harness's), so a bare
``headspace`` is not on it: the trap a server started before ``pipx
ensurepath`` sets.  What tmux parses out of the printed line is read back
through its own ``list-keys``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from headspace_tui.cli.doctor import OK, WARN, check_popup_key
from headspace_tui.cli.popup_key import PopupKey, binding, installed_command, popup_programs, tmux_quote, tmux_words
from headspace_tui.tmux.server import TmuxServer, server_path

HOSTILE = "we ird'$HOME #{pane_id};x\\y\"z"


def _stub(folder: Path) -> Path:
    folder.mkdir(parents=True)
    program = folder / "headspace"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    return program


def _source(private_tmux, tmp_path: Path, line: str) -> None:
    conf = tmp_path / "tmux.conf"
    conf.write_text(line + "\n")
    private_tmux.run("source-file", str(conf))


def test_the_printed_line_gives_tmux_the_exact_path_whatever_it_holds(private_tmux, tmp_path):
    private_tmux.new_session("s", width=80, height=24, cwd="/", command=["sh", "-c", "sleep 60"])
    program = _stub(tmp_path / HOSTILE)
    _source(private_tmux, tmp_path, binding("h", [str(program)]))
    assert popup_programs(private_tmux.run("list-keys")) == [PopupKey("h", str(program))]
    _source(private_tmux, tmp_path, binding("M-h", [sys.executable, "-m", "headspace_tui"]))
    assert PopupKey("M-h", sys.executable) in popup_programs(private_tmux.run("list-keys"))


def test_a_key_tmux_would_misread_is_quoted_and_a_control_character_refused(private_tmux, tmp_path):
    private_tmux.new_session("s", width=80, height=24, cwd="/", command=["sh", "-c", "sleep 60"])
    _source(private_tmux, tmp_path, binding(";", ["/opt/hs/headspace"]))
    assert popup_programs(private_tmux.run("list-keys")) == [PopupKey(";", "/opt/hs/headspace")]  # list-keys shows it as \;
    with pytest.raises(ValueError):
        binding("h\n")
    with pytest.raises(ValueError):
        binding("")


def test_tmux_quote_takes_a_single_quote_into_double_quotes():
    assert tmux_quote("a b") == "'a b'"
    assert tmux_quote("it's $x \\") == '"it\'s \\$x \\\\"'


def test_the_installed_command_is_the_script_that_runs_else_this_python(tmp_path):
    script = _stub(tmp_path / "bin")
    assert installed_command(str(script)) == [str(script)]
    assert installed_command("/nowhere/headspace", "/venv/bin/python") == ["/venv/bin/python", "-m", "headspace_tui"]
    assert installed_command(str(tmp_path / "headspace_tui" / "__main__.py"), "/venv/bin/python")[1:] == ["-m", "headspace_tui"]


def test_popups_that_are_not_headspace_are_not_read_as_it():
    keys = (
        "bind-key -T prefix g display-popup -E lazygit\n"
        "bind-key -T prefix h display-popup -EE -w 90% -h 90% headspace\n"
        "bind-key -T root F5 display-popup -d '#{pane_current_path}' -E 'exec /opt/x/headspace -L work'\n"
        "bind-key -T prefix d detach-client\n"
    )
    assert popup_programs(keys) == [PopupKey("h", "headspace"), PopupKey("F5 (table root)", "/opt/x/headspace")]


def test_tmux_words_reads_tmux_quoting():
    assert tmux_words("bind-key -T prefix \\; display-popup \"a \\$HOME \\\"q\\\\\" 'x \"y' ''") == [
        "bind-key",
        "-T",
        "prefix",
        ";",
        "display-popup",
        'a $HOME "q\\',
        'x "y',
        "",
    ]


def test_the_servers_path_is_read_from_its_global_environment():
    assert server_path("PATH=/usr/bin:/bin\n") == "/usr/bin:/bin"
    assert server_path("-PATH\n") is None


def test_doctor_warns_of_a_bare_headspace_the_servers_path_lacks_and_passes_the_printed_line(private_tmux, tmp_path):
    private_tmux.new_session("s", width=80, height=24, cwd="/", command=["sh", "-c", "sleep 60"])
    server = TmuxServer(socket_name=private_tmux.name)
    (check,) = check_popup_key(server)
    # The line to add names this headspace as it can be run (pytest's: no headspace script, so its Python with -m).
    from headspace_tui.cli.doctor import me

    assert check.verdict == OK and "no popup key bound" in check.detail and f"{me()} popup-binding" in check.detail
    assert me().endswith("headspace") or me().endswith("-m headspace_tui"), me()

    _source(private_tmux, tmp_path, "bind-key h display-popup -E -w 90% -h 90% headspace")
    (check,) = check_popup_key(server)
    assert check.verdict == WARN, check
    assert "'headspace'" in check.detail and "/usr/bin:/bin" in check.detail and "closes at once" in check.detail
    assert "bind-key h set-environment -gF HEADSPACE_CLIENT '#{client_name}' \\; display-popup -E -w 90% -h 90% '" in check.fix

    program = _stub(tmp_path / HOSTILE)
    _source(private_tmux, tmp_path, binding("h", [str(program)]))
    (check,) = check_popup_key(server)
    assert check.verdict == OK and str(program) in check.detail and "kept warm" in check.detail

    _source(private_tmux, tmp_path, f"bind-key h display-popup -E -w 90% -h 90% {tmux_quote(shlex.quote(str(program)))}")  # as printed before the warm popup
    (check,) = check_popup_key(server)
    assert check.verdict == OK and "starts it anew" in check.detail and " popup'" in check.fix, check

    program.unlink()  # uninstalled since
    (check,) = check_popup_key(server)
    assert check.verdict == WARN and "not there" in check.detail


def test_the_command_prints_one_line_naming_this_headspace(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8", "PYTHONPATH": os.getcwd()}
    out = subprocess.run([sys.executable, "-m", "headspace_tui", "popup-binding", "--key", "F5"], capture_output=True, text=True, env=env, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"bind-key F5 set-environment -gF HEADSPACE_CLIENT '#{{client_name}}' \\; display-popup -E -w 90% -h 90% '{sys.executable} -m headspace_tui popup'\n"
    bad = subprocess.run([sys.executable, "-m", "headspace_tui", "popup-binding", "--key", ""], capture_output=True, text=True, env=env, timeout=30)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1


def test_doctor_starts_no_tmux_server_where_there_is_none(private_tmux):
    """``tmux list-keys`` alone starts a server (and leaves its socket file): doctor only looks."""
    server = TmuxServer(socket_name=f"{private_tmux.name}-none")
    socket = Path(private_tmux.default_socket_path() + "-none")
    assert check_popup_key(server) == []
    assert not socket.exists()


def test_the_printed_line_names_the_client_then_opens_the_launcher(private_tmux, tmp_path):
    """tmux reads back one binding: HEADSPACE_CLIENT set from the pressing client, then the popup running ``headspace popup``."""
    private_tmux.new_session("s", width=80, height=24, cwd="/", command=["sh", "-c", "sleep 60"])
    _source(private_tmux, tmp_path, binding("h", ["/opt/hs/headspace"]))
    (line,) = [line for line in private_tmux.run("list-keys").splitlines() if " h " in line and "popup" in line]
    words = tmux_words(line)
    at = words.index("set-environment")
    assert sorted(words[at + 1]) == sorted("-gF") and words[at + 2 : at + 4] == ["HEADSPACE_CLIENT", "#{client_name}"], words  # list-keys prints -Fg
    assert words[-1] == "/opt/hs/headspace popup" and "display-popup" in words, words
    assert popup_programs(private_tmux.run("list-keys")) == [PopupKey("h", "/opt/hs/headspace")]
    assert popup_programs(private_tmux.run("list-keys"))[0].warm


def test_a_binding_that_names_the_client_first_is_read_too(private_tmux, tmp_path):
    """README: ``set-environment -gF HEADSPACE_CLIENT '#{client_name}' \\;`` before ``display-popup``."""
    private_tmux.new_session("s", width=80, height=24, cwd="/", command=["sh", "-c", "sleep 60"])
    line = "bind-key h set-environment -gF HEADSPACE_CLIENT '#{client_name}' \\; display-popup -E -w 90% -h 90% /opt/hs/headspace"  # written by hand, before popup-binding printed it
    _source(private_tmux, tmp_path, line)
    assert popup_programs(private_tmux.run("list-keys")) == [PopupKey("h", "/opt/hs/headspace")]
