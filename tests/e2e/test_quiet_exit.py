"""Quitting prints nothing: no traceback, no warning, no ``Exception ignored``.

About one quit in twelve printed ``Exception ignored in:
BaseSubprocessTransport.__del__ ... Event loop is closed``: a child's asyncio
transport (a tmux control client's) was still referenced when the event
loop closed and was collected afterwards, whenever the garbage collector
happened to run.  Here the real ``headspace`` entry point runs in a real pty
(``script``) against a private tmux server with sessions (so control clients
are attached), quits on ``q``, and then the driver collects garbage at once,
so what was left for later is found every time, not one time in twelve.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.e2e

DRIVER = textwrap.dedent(
    """
    import gc, sys
    from headspace_tui.app.main import HeadspaceApp
    from headspace_tui.cli.main import main

    mount = HeadspaceApp.on_mount
    def on_mount(self):
        mount(self)
        self.set_timer(2.5, lambda: self.run_action("quit"))  # the user's q, once the sessions are attached
    HeadspaceApp.on_mount = on_mount
    status = main(["--no-service", "-L", sys.argv[1]])  # the in-process mode: its own control clients end with it
    gc.collect()  # what the loop left behind is collected now, not by chance later
    sys.exit(status)
    """
)


def test_quitting_prints_no_warning_or_traceback(private_tmux, tmp_path):
    if shutil.which("script") is None:
        if os.environ.get("CI"):
            pytest.fail("script (util-linux) is missing")
        pytest.skip("script (util-linux) is missing")
    for name in ("one", "two", "three"):
        args = ["-f", "/dev/null"] if name == "one" else []
        private_tmux.run(*args, "new-session", "-d", "-s", name, "-x", "80", "-y", "24", "sleep 600")
    driver = tmp_path / "drive.py"
    driver.write_text(DRIVER)
    env = {
        **private_tmux.env,
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": os.getcwd(),
    }
    for attempt in range(3):
        typescript = tmp_path / f"typescript-{attempt}"
        started = time.monotonic()
        done = subprocess.run(
            ["script", "-q", "-e", "-c", f"{sys.executable} -W default {driver} {private_tmux.name}", str(typescript)],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
        )
        written = typescript.read_bytes().decode("utf-8", "replace")
        assert done.returncode == 0, written[-2000:]
        assert time.monotonic() - started < 30
        for bad in ("Exception ignored", "Traceback", "Warning", "unclosed"):
            assert bad not in written, f"{bad!r} reached the terminal on quit: {written[written.find(bad) - 200 :][:1200]}"
    assert private_tmux.run("list-clients").strip() == "", "a control client outlived headspace"
