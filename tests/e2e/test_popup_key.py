"""The popup key works whatever PATH the tmux server has: pressed by a real client.

The private server runs with PATH=/usr/bin:/bin, which holds no
``headspace`` (as a server started before ``pipx ensurepath`` would): the
README's old ``display-popup -E … headspace`` opens a popup that closes at
once.  The line ``headspace popup-binding`` prints, sourced into that server
and pressed (prefix, then ``h``) in a real terminal client, starts headspace
in the popup: its table is drawn and its control clients attach; ``q``
closes it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.harness.terminal import Terminal
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e
PREFIX_H = b"\x02h"  # C-b h


def popup_home(tmux, tmp_path: Path) -> None:
    """A "home" session to press the key in, and the test's own XDG folders (and code) for whatever the popup runs."""
    tmux.new_session("home", width=120, height=40, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])
    for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir(mode=0o700)
        tmux.run("set-environment", "-g", name, str(folder))  # headspace in the popup keeps to the test's folders
    if os.environ.get("PYTHONPATH"):
        tmux.run("set-environment", "-g", "PYTHONPATH", os.environ["PYTHONPATH"])  # this checkout's code, where it is not the installed one


def control_clients(tmux) -> list[str]:
    return [line for line in tmux.run("list-clients", "-F", "#{client_control_mode} #{client_name}").splitlines() if line.startswith("1 ")]


def test_the_printed_binding_opens_headspace_where_a_bare_one_closes_at_once(private_tmux, tmp_path: Path):
    server_path = private_tmux.env["PATH"]
    assert shutil.which("headspace", path=server_path) is None, f"the test needs a tmux PATH without headspace: {server_path}"
    popup_home(private_tmux, tmp_path)
    conf = tmp_path / "tmux.conf"
    user = Terminal(private_tmux, "home")
    try:
        poll(lambda: private_tmux.run("list-clients"), bool, timeout=10)
        conf.write_text("bind-key h display-popup -E -w 90% -h 90% headspace\n")  # the README's old line
        private_tmux.run("source-file", str(conf))
        user.type(PREFIX_H)
        time.sleep(3.0)  # long enough for headspace to attach, had it started
        assert control_clients(private_tmux) == []

        printed = subprocess.run([sys.executable, "-m", "headspace_tui", "popup-binding"], capture_output=True, text=True, timeout=30, check=True).stdout
        assert printed.startswith("bind-key h set-environment -gF HEADSPACE_CLIENT '#{client_name}' \\; display-popup -E -w 90% -h 90% '/") and printed.count("\n") == 1, printed
        conf.write_text(printed)
        private_tmux.run("source-file", str(conf))
        user.type(PREFIX_H)
        poll(lambda: control_clients(private_tmux), bool, timeout=30)
        poll(lambda: b"Waiting for" in (user.output or b""), bool, timeout=30)
        user.type(b"q")
        poll(lambda: control_clients(private_tmux), lambda clients: clients == [], timeout=15)
    finally:
        user.close()
