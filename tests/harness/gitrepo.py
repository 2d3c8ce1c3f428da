"""git for the tests' own repositories: a fixed identity, no user or system config, and reads that take no lock (they refresh no index)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """``git args`` in ``folder``: its output; a failure raises."""
    base = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_ENV, **(env or {})}
    return subprocess.run(["git", *args], cwd=folder, env=base, capture_output=True, text=True, check=True).stdout
