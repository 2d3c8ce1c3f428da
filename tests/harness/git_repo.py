"""A throwaway git repository for the tests of ``headspace new --worktree``: one commit on ``main``, a fixed author."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(folder: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True, env=env).stdout


def make_repo(folder: Path) -> Path:
    """``folder`` made a repository with one committed README."""
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    (folder / "README").write_text("a project\n")
    git(folder, "add", "README")
    git(folder, "commit", "-q", "-m", "first")
    return folder
