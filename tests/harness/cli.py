"""Running the ``headspace`` command as a user would, for the tests that drive it from outside.

The command runs as a child process of this checkout's Python
(``python -m headspace_tui``) with the tests' environment minus ``TMUX`` and
``TMUX_PANE``, so it never takes the tmux the tests run inside for the one
it is pointed at (each test names its private server with ``-L``).
"""

from __future__ import annotations

import os
import subprocess
import sys


def headspace(*args: str, check: bool = True, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``headspace *args``, its output captured; with ``check`` a non-zero exit fails the test with its stderr.  ``env``: added to the tests' own."""
    env = {**{k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}, **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "headspace_tui", *args], capture_output=True, text=True, env=env, timeout=timeout)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc
