"""Which process is Claude Code, and what it tells about itself: its config dir and its version.

``is_claude`` is Claude's ``Family.recognise``: its native binary, its npm
``cli.js`` under node or bun, or the native installer's versioned binary.

Claude keeps its status files under *its own* ``$CLAUDE_CONFIG_DIR`` (or
``$HOME/.claude``), which need not be headspace's: an agent started with
another HOME or config dir writes somewhere else.  So both are read from the
process's environment (``/proc/<pid>/environ``, readable for our own
processes), not assumed.

The version decides which rules table reads its screen.  It comes from the
install, never from running anything: the native installer runs
``~/.local/share/claude/versions/<x.y.z>`` itself; npm installs carry a
``package.json`` next to ``cli.js`` or the native binary.

Files are read defensively: regular files only, sizes capped.  Where there
is no /proc (macOS, BSD) psutil reads the environment and the executable.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...shared.paths import runtime_dir
from ...shared.proctree import ProcessInfo, ProcessTable, find_first
from ..install import version_above
from .status_files import claude_config_dir

ENVIRON_CAP = 1 << 20  # an environment larger than this is not read
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
PROGRAM = "claude"  # what a person types to start Claude Code (and what ``hooks/settings.py`` looks for on PATH)
PROBE_OP = "claude"  # the remote probe's request for these facts of a host's Claude processes: one name for both ends
_CLAUDE_NAMES = frozenset({PROGRAM, "claude.exe"})
_JS_RUNTIME = re.compile(r"^(node|nodejs|bun)(\d[\w.-]*)?(\.exe)?$")
_PACKAGE_NAMES = ("@anthropic-ai/claude-code",)


def is_claude(info: ProcessInfo) -> bool:
    """Does this process look like Claude Code: native binary, npm ``cli.js``, or versioned binary?"""
    names = {info.comm, info.argv0_name}
    if names & _CLAUDE_NAMES:
        return True
    # The native installer runs ~/.local/share/claude/versions/<x.y.z> itself.
    if any(_VERSION.match(n) for n in names if n):
        return True
    if any(_JS_RUNTIME.match(n) for n in names if n):
        for arg in info.argv[1:]:
            if arg.endswith("/cli.js") and "claude-code" in arg:
                return True
    return False


def find_claude(root_pid: int, table: ProcessTable) -> int | None:
    """The first Claude Code process in the tree under ``root_pid`` (``find_first``)."""
    found = find_first(root_pid, table, lambda info: True if is_claude(info) else None)
    return found[0] if found is not None else None


@dataclass(frozen=True)
class ClaudeProcess:
    """The Claude Code process under a pane, as far as /proc tells."""

    pid: int
    version: str | None = None  # from its install; None: unknown (read with the newest table)
    config_dir: Path | None = None  # from its environment; None: unreadable (headspace's own is assumed)
    binary: str = ""  # its executable, for ``claude agents``
    # headspace's runtime folder by its environment's XDG_RUNTIME_DIR: where its hooks write their
    # events and look for the answer socket; None: unreadable (headspace's own is assumed).
    runtime: Path | None = None


ENV_KEYS = ("HOME", "CLAUDE_CONFIG_DIR", "XDG_RUNTIME_DIR")


def claude_process(pid: int, table: ProcessTable, *, proc: str = "/proc") -> ClaudeProcess:
    """Everything /proc tells about the Claude process ``pid`` (a snapshot ``table`` entry)."""
    info = table.get(pid)
    env = process_env(pid, ENV_KEYS, proc=proc)
    return ClaudeProcess(
        pid,
        version_of(info, proc=proc) if info is not None else None,
        claude_config_dir(env) if env else None,
        executable(pid, proc=proc),
        runtime_dir(env) if env else None,
    )


def _portable(proc: str) -> bool:
    """No /proc here (macOS, BSD): ask psutil instead."""
    return proc == "/proc" and not os.path.isdir("/proc/self")


def executable(pid: int, *, proc: str = "/proc") -> str:
    if _portable(proc):
        import psutil

        try:
            return psutil.Process(pid).exe()
        except psutil.Error:
            return ""
    try:
        return os.readlink(f"{proc}/{pid}/exe")
    except OSError:
        return ""


def process_env(pid: int, keys: tuple[str, ...] = ("HOME", "CLAUDE_CONFIG_DIR"), *, proc: str = "/proc") -> dict[str, str]:
    """The named variables of a process's environment ({} if it cannot be read)."""
    if _portable(proc):
        import psutil

        try:
            environ = psutil.Process(pid).environ()
        except psutil.Error:
            return {}
        return {k: v for k, v in environ.items() if k in keys}
    try:
        with open(f"{proc}/{pid}/environ", "rb") as f:
            raw = f.read(ENVIRON_CAP + 1)
    except OSError:
        return {}
    if len(raw) > ENVIRON_CAP:
        return {}
    found: dict[str, str] = {}
    for entry in raw.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and name.decode("utf-8", "replace") in keys:
            found[name.decode()] = value.decode("utf-8", "replace")
    return found


def config_dir_of(pid: int, *, proc: str = "/proc") -> Path | None:
    """Where the Claude process ``pid`` writes its status files' folder, or None if unknown."""
    env = process_env(pid, proc=proc)
    if not env:
        return None
    return claude_config_dir(env)


def version_of(info: ProcessInfo, *, proc: str = "/proc") -> str | None:
    """The Claude Code version of a Claude process, from its install (None if it cannot tell)."""
    for name in (info.comm, info.argv0_name):
        if name and _VERSION.match(name):
            return name  # the native installer's versions/<x.y.z>
    candidates: list[str] = []
    for arg in info.argv[1:3]:
        if arg.endswith("cli.js"):
            candidates.append(os.path.dirname(arg))  # node .../claude-code/cli.js
    exe = executable(info.pid, proc=proc)
    if exe:
        base = os.path.basename(exe)
        if _VERSION.match(base):
            return base
        candidates.append(os.path.dirname(exe))
    if info.argv:
        candidates.append(os.path.dirname(info.argv[0]))
    for folder in candidates:
        version = _package_version(folder)
        if version:
            return version
    return None


def _package_version(folder: str) -> str | None:
    """The version in the Claude Code ``package.json`` at or up to three folders above ``folder``."""
    return version_above(Path(folder), 3, lambda name: name.startswith(_PACKAGE_NAMES), _VERSION)
