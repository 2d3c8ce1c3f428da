"""Claude's own list of live sessions: ``claude agents --json`` (Claude Code 2.1.145 and later).

It prints one object per running session of *its* config dir: ``pid``,
``sessionId``, ``cwd``, ``status`` and, from about 2.1.162, ``waitingFor``
(later versions add ``state``: working / blocked / done for background
sessions).  That is the same news as the status files, through Claude's
documented interface, so headspace asks it only for agents whose status file
it could not find, at most once per discovery, and never blocks on it.

Measured here (2.1.330, 2 cores): one call takes about 0.9 s of wall time and
0.4 s of CPU (the binary's start-up), so it is a fallback, not a poll.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

from ...shared.lifeline import release
from .status_files import ClaudeStatus, parse_status
from .tables import version_key

MIN_VERSION = (2, 1, 145)
OUTPUT_CAP = 1 << 20
TIMEOUT = 5.0


def supports_agents(version: str | None) -> bool:
    return version is not None and bool(version) and version_key(version) >= MIN_VERSION


def parse_agents(output: str | bytes) -> dict[int, ClaudeStatus]:
    """The sessions in ``claude agents --json`` output, by pid; anything malformed is skipped."""
    try:
        data: Any = json.loads(output)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, list):
        return {}
    found: dict[int, ClaudeStatus] = {}
    for item in data:
        status = parse_status(item)
        if status is not None:
            found[status.pid] = status
    return found


def agents_env(config_env: dict[str, str]) -> dict[str, str]:
    """The environment to run ``claude agents`` in: the agent's own HOME / config dir, nothing else inherited."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "NO_COLOR": "1",
    }
    for key in ("HOME", "CLAUDE_CONFIG_DIR"):
        if config_env.get(key):
            env[key] = config_env[key]
    return env


def runnable(binary: str) -> bool:
    """A regular, executable file that only its owner (us or root) can change."""
    try:
        info = os.stat(binary)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and os.access(binary, os.X_OK) and info.st_uid in (0, os.getuid()) and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


async def list_agents(binary: str | Path, config_env: dict[str, str], *, timeout: float = TIMEOUT) -> dict[int, ClaudeStatus]:
    """Run ``binary agents --json`` with the agent's config env; {} on any failure or after ``timeout``."""
    binary = str(binary)
    if not runnable(binary):
        return {}
    try:
        proc = await asyncio.create_subprocess_exec(
            binary,
            "agents",
            "--json",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=agents_env(config_env),
        )
    except OSError:
        return {}
    try:
        out = await asyncio.wait_for(proc.stdout.read(OUTPUT_CAP + 1), timeout)  # type: ignore[union-attr]
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        await _end(proc)
        return {}
    except asyncio.CancelledError:
        await _end(proc)
        raise
    finally:
        release(proc)  # nothing left for the garbage collector after the loop has closed
    if proc.returncode != 0 or len(out) > OUTPUT_CAP:
        return {}
    return parse_agents(out)


async def _end(proc: asyncio.subprocess.Process) -> None:
    """Kill a ``claude agents`` we started and reap it."""
    if proc.returncode is None:
        try:
            proc.kill()
        except ProcessLookupError:
            pass
        await proc.wait()
