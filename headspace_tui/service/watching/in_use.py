"""Which Claude config dirs and runtime folders a host's agents use, read now: what ``headspace doctor`` checks.

Found as the monitor finds them (``discovery.plan``, each Claude process's
environment), through the ``Host`` (this machine, or one over SSH), so
``doctor`` checks the folders the agents use, not its own.
"""

from __future__ import annotations

from pathlib import Path

from ...detect.claude.process import ClaudeProcess
from ...detect.families import CLAUDE
from . import discovery
from .host import Host


async def claudes_in_use(host: Host) -> list[tuple[str, ClaudeProcess | None]]:
    """Each Claude agent of the host (its target) and what its process tells (None: unreadable)."""
    records, table = await host.snapshot()
    found = [s for s in discovery.plan(records, table, {}, set(), host=host.name, server=host.server.key).watch if s.agent_pid and s.family is CLAUDE]
    processes = {p.pid: p for p in await host.claude_processes([s.agent_pid for s in found if s.agent_pid], table)}
    return [(s.record.target, processes.get(s.agent_pid) if s.agent_pid else None) for s in found]


async def config_dirs_in_use(host: Host) -> dict[Path, list[str]]:
    """Each Claude config dir the host's agents run with, and the agents (targets) that use it.

    Read from each Claude process's environment (HOME, CLAUDE_CONFIG_DIR), as
    the monitor does; a process whose environment cannot be read is counted
    under the host's default dir.  ``doctor`` checks these, not its own.
    """
    default = host.default_config_dir()
    folders: dict[Path, list[str]] = {}
    for target, process in await claudes_in_use(host):
        folder = (process.config_dir if process else None) or default
        if folder is not None:
            folders.setdefault(folder, []).append(target)
    return folders


async def runtimes_in_use(host: Host) -> dict[Path, list[str]]:
    """Each headspace runtime folder the host's agents' hooks write under (by their XDG_RUNTIME_DIR), and those agents.

    ``doctor`` compares them with its own: a hook under another one writes its
    events elsewhere (the monitor watches there too) and cannot reach the
    answer socket.  Agents whose environment cannot be read are left out.
    """
    folders: dict[Path, list[str]] = {}
    for target, process in await claudes_in_use(host):
        if process is not None and process.runtime is not None:
            folders.setdefault(process.runtime, []).append(target)
    return folders
