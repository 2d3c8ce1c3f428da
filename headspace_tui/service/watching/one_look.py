"""One look at a host's agents, now: ``headspace status`` on this machine and on remote hosts alike.

The app keeps its agents current with a monitor per host; a one-shot
command needs the same answer once.  Both decide which panes hold agents
with ``discovery.plan``, read a screen with ``scan.screen_observation`` and
join Claude's status file the same way, and both ask the ``Host`` (this
machine, or one over SSH) for everything outside headspace, so a pane reads
the same in ``status`` as in the table, here or there.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ...detect.claude.process import ClaudeProcess
from ...detect.claude.status_files import ClaudeStatus
from ...detect.families import CLAUDE
from ...model import Agent
from ...tmux.server import TmuxServer
from ..records.scan import PaneView, ask_claude, observe_pane, other_version, to_agent
from . import discovery
from .host import Host, LocalHost

HOST_TIMEOUT = 30.0  # one host's look, connecting included


async def scan_host(host: Host, *, include_all: bool = False, config_dir: Path | None = None, ask: bool = True) -> list[PaneView]:
    """Every agent's pane of the host (every pane with ``include_all``), observed now.

    ``config_dir`` is assumed for processes whose environment cannot be read
    (the host's default otherwise); with ``ask``, Claude itself (``claude
    agents --json``, where the host can run it) is asked about agents whose
    status file was not found.
    """
    records, table = await host.snapshot()
    found = discovery.plan(records, table, {}, set(), host=host.name, server=host.server.key, include_all=include_all).watch
    processes = {p.pid: p for p in await host.claude_processes([s.agent_pid for s in found if s.agent_pid and s.family is CLAUDE], table)}
    default = config_dir or host.default_config_dir()
    folders = {p.config_dir or default for p in processes.values()} | {default}
    statuses: dict[int, ClaudeStatus] = {}
    for folder in sorted(f for f in folders if f is not None):
        statuses.update(await host.statuses(folder))
    missing = {pid for pid in processes if pid not in statuses}
    if ask and missing and host.can_ask_claude:
        statuses.update(await ask_claude(list(processes.values()), missing))
    views = []
    for sighting in found:
        pid = sighting.agent_pid
        process = processes.get(pid) if pid else None
        status = statuses.get(pid) if pid else None
        family = sighting.family
        version = (process.version if process else None) or (other_version(host.remote, family, table, pid) if family is not CLAUDE else None)
        observation = await asyncio.to_thread(observe_pane, host.server, sighting.record, pid, status, version, family)
        views.append(PaneView(sighting.record, pid, observation, status, process, family, version or "", sighting.key))
    return views


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


def scan(server: TmuxServer, *, include_all: bool = False, config_dir: Path | None = None, ask: bool = True) -> list[PaneView]:
    """``scan_host`` of this machine's server, for callers without an event loop."""
    return asyncio.run(scan_host(LocalHost(server), include_all=include_all, config_dir=config_dir, ask=ask))


async def look_at(
    hosts: Sequence[Host], *, include_all: bool = False, remember: Callable[[str], tuple[str, float] | None] | None = None
) -> tuple[list[Agent], list[tuple[Host, Exception | None, str]]]:
    """Every host looked at together; (their agents, one (host, error, line) per host that could not be read).

    ``remember``: the event log's last word on an agent (``to_agent``).

    A host that fails or does not answer within HOST_TIMEOUT is one line;
    the others' agents are still returned.  Every host is closed after.
    """

    async def one(host: Host) -> tuple[list[Agent], Exception | None, str]:
        try:
            views = await asyncio.wait_for(scan_host(host, include_all=include_all), HOST_TIMEOUT)
        except TimeoutError:
            return [], None, f"{host.name}: no answer within {HOST_TIMEOUT:g}s"
        except Exception as exc:  # noqa: BLE001 - one line per host that could not be read; the others still count
            return [], exc, str(exc) if str(exc).startswith(host.name) else f"{host.name}: {exc}"
        finally:
            await host.close()
        now = time.time()
        agents = [to_agent(view, now, remember) for view in views]
        for agent in agents:
            agent.host = host.name
        return agents, None, ""

    agents: list[Agent] = []
    problems: list[tuple[Host, Exception | None, str]] = []
    for host, (found, error, line) in zip(hosts, await asyncio.gather(*(one(h) for h in hosts)), strict=True):
        agents += found
        if line:
            problems.append((host, error, line))
    return agents, problems
