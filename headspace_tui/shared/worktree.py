"""A fresh git worktree for a new agent: ``git worktree add -b BRANCH PATH``.

Where it goes: beside the repository, in a folder named after it,
``<parent>/<repo>-worktrees/<branch>`` (a ``/`` in the branch becomes ``-``),
so every agent's tree of one repository sits in one place and none of them
inside the repository itself (where the main tree's tools would see it).

Refused, in one line each, before git changes anything: a folder that is
not in a git repository, a branch name git would not take, a branch that
already exists, a worktree folder that already exists.  git runs as argv
(no shell), with a timeout; its own message is passed on when it fails.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT_TIMEOUT = 30.0


class WorktreeError(Exception):
    """A worktree that cannot be made, in one line for the user."""


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise WorktreeError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise WorktreeError(f"git {args[0]} did not finish within {GIT_TIMEOUT:g}s") from None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def repo_root(folder: Path) -> Path:
    """The top of the (main or linked) working tree ``folder`` is in; refuse a folder outside git."""
    if not folder.is_dir():
        raise WorktreeError(f"no such folder: {folder}")
    found = _git(folder, "rev-parse", "--show-toplevel")
    if found.returncode != 0 or not found.stdout.strip():
        raise WorktreeError(f"{folder} is not in a git repository (--worktree needs one)")
    return Path(found.stdout.strip())


def worktree_path(root: Path, branch: str) -> Path:
    """Where the worktree of ``branch`` goes: ``<parent>/<repo>-worktrees/<branch, / as ->``."""
    return root.parent / f"{root.name}-worktrees" / branch.replace("/", "-")


def add_worktree(folder: Path, branch: str) -> Path:
    """Make a new branch ``branch`` from HEAD, checked out in a new worktree; its path."""
    if not branch or branch.startswith("-"):
        raise WorktreeError(f"not a branch name: {branch!r}")
    root = repo_root(folder)
    if _git(root, "check-ref-format", "--branch", branch).returncode != 0:
        raise WorktreeError(f"not a valid branch name: {branch!r}")
    if _git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}").returncode == 0:
        raise WorktreeError(f"branch {branch!r} already exists in {root}; pick a new name")
    path = worktree_path(root, branch)
    if path.exists():
        raise WorktreeError(f"{path} already exists; pick another branch name or remove it")
    made = _git(root, "worktree", "add", "-b", branch, "--", str(path))
    if made.returncode != 0:
        raise WorktreeError(f"git worktree add failed: {_first_line(made.stderr) or f'exit status {made.returncode}'}")
    return path
