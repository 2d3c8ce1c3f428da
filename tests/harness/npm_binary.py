"""A pinned agent binary from npm, kept in the tests' cache, and the one rule for when it is missing.

Every family's real binary (Claude Code, Codex CLI, Gemini CLI, opencode)
is an npm package installed into its own folder of the test cache,
``$HEADSPACE_TEST_CACHE/<name>-<version>/node_modules/.bin/<bin>`` (the cache
defaults to ``$XDG_CACHE_HOME/headspace-tests``).  ``find_npm_binary`` finds
it there at the asked version, or installs it with npm when allowed.  Each
family's module keeps a thin wrapper (``find_claude``, ``find_codex``, ...)
that names its package and how its version is read.

``require`` is the rule the live tests share: a missing binary skips the
test locally, with the reason, and fails it under ``CI=true``, so CI can
never pass without testing for real.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path


class BinaryUnavailable(RuntimeError):
    """The binary is not in the cache at that version and could not (or may not) be installed."""


def cache_root() -> Path:
    base = os.environ.get("HEADSPACE_TEST_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "headspace-tests")
    return Path(base)


def reported_version(binary: str, *, word: int) -> str | None:
    """What ``binary --version`` prints, its ``word``-th word (0: "2.1.3 (Claude Code)", -1: "codex-cli 0.169.0"); None if it does not run."""
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30, env={"PATH": os.environ.get("PATH", ""), "HOME": "/nonexistent"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.stdout.split()
    return words[word] if out.returncode == 0 and words else None


def package_version(folder: Path, package: str) -> str | None:
    """The version in ``folder``'s installed ``package.json`` of ``package`` (without running anything)."""
    try:
        data = json.loads((folder / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


def find_npm_binary(
    package: str,
    version: str,
    bin_name: str,
    *,
    folder: Path,
    version_of: Callable[[str], str | None],
    install: bool,
    unavailable: type[BinaryUnavailable] = BinaryUnavailable,
    also: Iterable[str | None] = (),
) -> str:
    """``folder/node_modules/.bin/<bin_name>`` at ``version`` (or the first of ``also`` that is); npm-installed there if ``install``.

    ``version_of`` reads a candidate's version; raises ``unavailable`` with
    the reason (and the npm command that would install it) when none fits.
    """
    cached = folder / "node_modules" / ".bin" / bin_name
    for candidate in (*also, str(cached)):
        if candidate and os.path.exists(candidate) and version_of(candidate) == version:
            return candidate
    command = ["install", "--no-audit", "--no-fund", "--prefix", str(folder), f"{package}@{version}"]
    if not install:
        raise unavailable(f"{bin_name} {version} is not installed in {folder} (npm {' '.join(command)})")
    npm = shutil.which("npm")
    if npm is None:
        raise unavailable(f"npm is not installed, so {package} cannot be installed for the tests")
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([npm, *command], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or version_of(str(cached)) != version:
        raise unavailable(f"npm install {package}@{version} failed: {proc.stderr.strip()[-400:]}")
    return str(cached)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def require(find: Callable[[], str], what: str) -> str:
    """``find()`` for a test: a missing binary (or tmux) skips locally with the reason, and fails under ``CI=true``."""
    import pytest

    if shutil.which("tmux") is None:
        (pytest.fail if in_ci() else pytest.skip)("tmux is not installed")
    try:
        return find()
    except BinaryUnavailable as exc:
        if in_ci():
            pytest.fail(f"CI=true and {what} is unavailable: {exc}")
        pytest.skip(str(exc))
        raise  # unreachable: skip raises
