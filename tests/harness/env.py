"""The environment headspace runs in when a test starts it as a program.

HOME, the XDG folders (the runtime one 0700, as a login session makes it)
and optionally Claude's config dir are the test's own, never the user's.
"""

from __future__ import annotations

import os
from pathlib import Path


def private_env(home: Path, xdg: Path | None = None, *, claude_dir: Path | None = None, path: str | None = None, checkout: bool = True) -> dict[str, str]:
    """``xdg`` (default ``home``) holds config, state, data and run; ``checkout``: import headspace from this checkout."""
    xdg = xdg or home
    run = xdg / "run"
    run.mkdir(parents=True, mode=0o700, exist_ok=True)
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(xdg / "config"),
        "XDG_STATE_HOME": str(xdg / "state"),
        "XDG_DATA_HOME": str(xdg / "data"),
        "XDG_RUNTIME_DIR": str(run),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "PATH": path or os.environ.get("PATH", "/usr/bin:/bin"),
    }
    if claude_dir is not None:
        env["CLAUDE_CONFIG_DIR"] = str(claude_dir)
    if checkout:
        env["PYTHONPATH"] = os.getcwd()
    return env
