"""The answer hook as Claude runs it (``program.py answer N``), started by a test with one request on its stdin.

A real process of the real hook program: what reaches the channel (here or
through a remote probe) is exactly what Claude's hook would send.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from headspace_tui.hooks.settings import PROGRAM


def answer_hook(runtime: str, record: Mapping[str, Any], pane: str = "%3", wait: float = 30) -> subprocess.Popen:
    """The hook for ``pane`` with ``record`` as its request, its spool under ``runtime`` (XDG_RUNTIME_DIR)."""
    env = {"XDG_RUNTIME_DIR": runtime, "PATH": "/usr/bin:/bin", "TMUX_PANE": pane}
    proc = subprocess.Popen([sys.executable, "-S", str(PROGRAM), "answer", str(wait)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(dict(record)).encode())
    proc.stdin.close()
    proc.stdin = None
    return proc
