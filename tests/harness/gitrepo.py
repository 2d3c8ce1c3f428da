"""git for the tests' own repositories: a fixed identity, no user or system config, and reads that take no lock (they refresh no index)."""

from __future__ import annotations

import hashlib
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


def dot_git(folder: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under ``folder``/.git, by its path there: mode, modification time, bytes (a hash).

    An object's time is left out, its bytes count: git refreshes the time of
    an object it finds it already has (so a collection keeps it), as any git
    command that writes objects does.
    """
    files = {}
    for path in sorted((folder / ".git").rglob("*")):
        info = path.lstat()
        mtime = 0 if "/objects/" in str(path) else info.st_mtime_ns
        files[str(path.relative_to(folder))] = (info.st_mode, mtime, hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "")
    return files
