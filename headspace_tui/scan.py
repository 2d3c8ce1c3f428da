"""One look at a tmux server: which panes run Claude Code, and what each shows.

Used by ``headspace status`` and by the TUI's detectors.  One ``list-panes``
call and one read of /proc serve every pane; only agent panes are captured.
Each Claude process is asked (through /proc, never by running it) where its
config dir is and which version it is: its status file lives under *its*
config dir, and its version picks the rules table that reads its screen.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from .detect.agents_cli import list_agents, supports_agents
from .detect.claude import classify_capture
from .detect.fusion import claim_agrees, fuse
from .detect.registry import ClaudeStatus, claude_config_dir, read_statuses, status_observation
from .model import STATE_RANK, Agent, AgentState, Evidence, Observation
from .tmux.claude_process import ClaudeProcess, claude_process, process_env
from .tmux.proctree import ProcessTable, find_claude, read_process_table
from .tmux.server import PaneRecord, TmuxCommandError, TmuxServer


@dataclass
class PaneView:
    """A pane with what we know about it in this scan."""

    record: PaneRecord
    claude_pid: int | None
    observation: Observation
    status: ClaudeStatus | None
    process: ClaudeProcess | None = None


def screen_observation(record: PaneRecord, claude_pid: int | None, ansi: str, version: str | None = None) -> Observation:
    """What one capture of a pane says, given whether Claude runs in it (and which version).

    A dead pane is exited with the status tmux knows.  Otherwise the process
    tree is the authority on whether Claude runs here:
    ``#{pane_current_command}`` names the shell when Claude was started via
    ``sh -c``.
    """
    if record.dead:
        return Observation(
            AgentState.EXITED,
            evidence=(Evidence("pane-dead", -1, f"exit status {record.dead_status}"),),
            exit_status=record.dead_status,
            confidence=1.0,
        )
    return classify_capture(ansi, command="claude" if claude_pid else record.current_command, version=version)


def observe_pane(
    server: TmuxServer, record: PaneRecord, claude_pid: int | None, status: ClaudeStatus | None, version: str | None = None
) -> Observation:
    """Capture and classify one pane, fused with Claude's status file when there is one."""
    try:
        ansi = "" if record.dead else server.capture(record.pane_id, ansi=True)
    except TmuxCommandError as exc:  # the pane closed between listing and capture
        return Observation(AgentState.EXITED, evidence=(Evidence("pane-gone", -1, str(exc)),), confidence=0.5)
    screen = screen_observation(record, claude_pid, ansi, version)
    return fuse(screen, status_observation(status) if status is not None else None)


def read_all_statuses(folders: set[Path]) -> dict[int, ClaudeStatus]:
    """The status files of every config dir in use, by pid (pids are unique on one machine)."""
    statuses: dict[int, ClaudeStatus] = {}
    for folder in sorted(folders):
        statuses.update(read_statuses(folder / "sessions"))
    return statuses


async def ask_claude(processes: list[ClaudeProcess], missing: set[int]) -> dict[int, ClaudeStatus]:
    """``claude agents --json`` once per (binary, config dir) that has an agent without a status file."""
    groups: dict[tuple[str, Path | None], ClaudeProcess] = {}
    for process in processes:
        if process.pid in missing and process.binary and supports_agents(process.version):
            groups.setdefault((process.binary, process.config_dir), process)
    found: dict[int, ClaudeStatus] = {}
    for (binary, _), process in groups.items():
        found.update(await list_agents(binary, process_env(process.pid)))
    return {pid: status for pid, status in found.items() if pid in missing}


def scan(
    server: TmuxServer,
    *,
    include_all: bool = False,
    config_dir: Path | None = None,
    table: ProcessTable | None = None,
    ask: bool = True,
) -> list[PaneView]:
    """Every Claude pane of the server (every pane with ``include_all``), observed now.

    ``config_dir`` is assumed for processes whose environment cannot be read;
    with ``ask``, Claude itself (``claude agents --json``) is asked about
    agents whose status file was not found.
    """
    records = server.list_panes()
    table = table if table is not None else read_process_table()
    default_dir = config_dir or claude_config_dir()
    found: list[tuple[PaneRecord, ClaudeProcess | None]] = []
    for record in records:
        claude_pid = find_claude(record.pid, table)
        if claude_pid is None and not include_all:
            continue
        found.append((record, claude_process(claude_pid, table) if claude_pid else None))
    processes = [p for _, p in found if p is not None]
    statuses = read_all_statuses({p.config_dir or default_dir for p in processes} | {default_dir})
    missing = {p.pid for p in processes if p.pid not in statuses}
    if ask and missing:
        statuses.update(asyncio.run(ask_claude(processes, missing)))
    views = []
    for record, process in found:
        status = statuses.get(process.pid) if process else None
        version = process.version if process else None
        observation = observe_pane(server, record, process.pid if process else None, status, version)
        views.append(PaneView(record, process.pid if process else None, observation, status, process))
    return views


def to_agent(view: PaneView, now: float | None = None) -> Agent:
    status = view.status
    since = now or time.time()
    # Claude's time for the state, when its status agrees with what the screen shows.
    if status is not None and status.updated_at and claim_agrees(status_observation(status).state, view.observation.state):
        since = min(status.updated_at, since)
    return Agent(
        pane_id=view.record.pane_id,
        target=view.record.target,
        session=view.record.session_name,
        cwd=(status.cwd if status and status.cwd else view.record.cwd),
        name=status.name if status else "",
        pid=view.record.pid,
        claude_pid=view.claude_pid or 0,
        observation=view.observation,
        since=since,
        claude_version=view.process.version or "" if view.process else "",
    )


def sort_key(agent: Agent) -> tuple:
    """Agents that need you first, longest-waiting first; then working, idle, exited."""
    rank = STATE_RANK[agent.state]
    return (rank, agent.since if rank == 0 else 0.0, agent.target)
