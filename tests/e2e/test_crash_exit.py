"""A crash is never a success: one line, the log file's path, exit status 1 (seen through a real pty).

There is no known crash left to trigger, so the fault is injected: a small
driver replaces one action of the app with one that raises, then runs the
real ``headspace`` entry point inside ``script`` (a real pty, as a user's
terminal). This stands in for whatever bug comes next; everything else is
real (Textual's driver, the terminal, the log file).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.e2e

DRIVER = textwrap.dedent(
    """
    import sys
    from headspace_tui.app.main import HeadspaceApp

    def broken_help(self):
        raise RuntimeError("injected fault for the test")

    mount = HeadspaceApp.on_mount
    def on_mount(self):
        mount(self)
        self.set_timer(0.5, lambda: self.run_action("help"))

    HeadspaceApp.action_help = broken_help
    HeadspaceApp.on_mount = on_mount
    from headspace_tui.cli.main import main
    sys.exit(main(["--no-service", "-L", sys.argv[1]]))
    """
)


def test_a_crash_exits_1_with_one_line_and_the_log_path(tmp_path):
    if shutil.which("script") is None:
        if os.environ.get("CI"):
            pytest.fail("script (util-linux) is missing")
        pytest.skip("script (util-linux) is missing")
    driver = tmp_path / "drive.py"
    driver.write_text(DRIVER)
    state = tmp_path / "state"
    env = {
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "XDG_STATE_HOME": str(state),
        "XDG_RUNTIME_DIR": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": os.getcwd(),
    }
    typescript = tmp_path / "typescript"
    command = f"{sys.executable} {driver} hs-crash-{os.getpid()}"
    done = subprocess.run(
        ["script", "-q", "-e", "-c", command, str(typescript)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    written = typescript.read_bytes().decode("utf-8", "replace")
    assert done.returncode == 1, written[-2000:]
    log = state / "headspace" / "headspace.log"
    assert f"headspace: stopped on an unexpected error (RuntimeError: injected fault for the test); details in {log}" in written
    assert "Traceback" not in written, "a traceback reached the terminal"
    text = log.read_text()
    assert "Traceback" in text and "injected fault for the test" in text
