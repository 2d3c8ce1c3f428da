"""One look at a tmux server: which panes run Claude Code, and what each shows.

Used by ``headspace status`` and by the TUI's detectors.  One ``list-panes``
call and one read of /proc serve every pane; only agent panes are captured.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from .detect.claude_screen import classify_capture
from .detect.fusion import fuse
from .detect.registry import ClaudeStatus, claude_config_dir, read_statuses, status_observation
from .model import STATE_RANK, Agent, AgentState, Evidence, Observation
from .tmux.proctree import ProcessTable, find_claude, read_process_table
from .tmux.server import PaneRecord, TmuxCommandError, TmuxServer


@dataclass
class PaneView:
    """A pane with what we know about it in this scan."""

    record: PaneRecord
    claude_pid: int | None
    observation: Observation
    status: ClaudeStatus | None


def screen_observation(record: PaneRecord, claude_pid: int | None, ansi: str) -> Observation:
    """What one capture of a pane says, given whether Claude runs in it.

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
    return classify_capture(ansi, command="claude" if claude_pid else record.current_command)


def observe_pane(server: TmuxServer, record: PaneRecord, claude_pid: int | None, status: ClaudeStatus | None) -> Observation:
    """Capture and classify one pane, fused with Claude's status file when there is one."""
    try:
        ansi = "" if record.dead else server.capture(record.pane_id, ansi=True)
    except TmuxCommandError as exc:  # the pane closed between listing and capture
        return Observation(AgentState.EXITED, evidence=(Evidence("pane-gone", -1, str(exc)),), confidence=0.5)
    return fuse(screen_observation(record, claude_pid, ansi), status_observation(status) if status is not None else None)


def scan(server: TmuxServer, *, include_all: bool = False, config_dir: Path | None = None, table: ProcessTable | None = None) -> list[PaneView]:
    """Every Claude pane of the server (every pane with ``include_all``), observed now."""
    records = server.list_panes()
    table = table if table is not None else read_process_table()
    statuses = read_statuses((config_dir or claude_config_dir()) / "sessions")
    views = []
    for record in records:
        claude_pid = find_claude(record.pid, table)
        if claude_pid is None and not include_all:
            continue
        status = statuses.get(claude_pid) if claude_pid else None
        views.append(PaneView(record, claude_pid, observe_pane(server, record, claude_pid, status), status))
    return views


def to_agent(view: PaneView, now: float | None = None) -> Agent:
    status = view.status
    since = (status.updated_at if status and status.updated_at else None) or (now or time.time())
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
    )


def sort_key(agent: Agent) -> tuple:
    """Agents that need you first, longest-waiting first; then working, idle, exited."""
    rank = STATE_RANK[agent.state]
    return (rank, agent.since if rank == 0 else 0.0, agent.target)
