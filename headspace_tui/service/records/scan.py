"""Reading one pane: what its screen says, joined with what the agent says of itself.

Each reading of a watched pane (the monitor's, in the resident service and
in the one ``headspace status`` runs for a look): a screen is read by its
agent family's reader (for Claude, the rules table of the version that
draws it), and ``claude agents --json`` is asked about Claude agents
without a status file.  And the agent a first reading makes
(``new_agent``): one builder, dated by the one clock.
"""

from __future__ import annotations

from pathlib import Path

from ...detect.claude.agents_cli import list_agents, supports_agents
from ...detect.claude.process import ClaudeProcess, process_env
from ...detect.claude.status_files import ClaudeStatus
from ...detect.clock import Claim
from ...detect.families import CLAUDE
from ...detect.family import Family
from ...model import Agent, AgentState, Evidence, Observation
from ...shared.proctree import ProcessTable
from ...tmux.server import PaneRecord
from ...usage.limits import reset_at


def screen_observation(record: PaneRecord, agent_pid: int | None, ansi: str, version: str | None, family: Family | None, title: str | None = None) -> Observation:
    """What one capture of a pane says, given whether an agent runs in it (its family, its version).

    A dead pane is exited with the status tmux knows.  Otherwise the process
    tree is the authority on whether the agent runs here:
    ``#{pane_current_command}`` names the shell when it was started via
    ``sh -c``.  A pane whose agent has gone is read by the reader of the
    family that ran there, which knows its shell is back.  ``family`` is
    always said (a forgotten one must not silently mean Claude's rules);
    None says no agent was ever seen there, and then the first family's
    reader (Claude's) reads the pane as the shell or program it is.
    A family that reads its title too is given ``title`` (default the
    listing's ``#{pane_title}``).
    """
    if record.dead:
        return Observation(
            AgentState.EXITED,
            evidence=(Evidence("pane-dead", -1, f"exit status {record.dead_status}"),),
            exit_status=record.dead_status,
            confidence=1.0,
        )
    reader = family or CLAUDE
    command = reader.name if agent_pid else record.current_command
    return reader.read(ansi, command=command, version=version, title=record.title if title is None else title)


def other_version(remote: bool, family: Family | None, table: ProcessTable, pid: int | None) -> str | None:
    """A non-Claude agent's version, from its install on this machine (a remote host's is not read: None)."""
    info = table.get(pid) if pid else None
    if family is None or info is None or remote:
        return None
    return family.version_of(info)


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


def new_agent(
    record: PaneRecord,
    key: str,
    observation: Observation,
    claim: Claim,
    at: float,
    *,
    agent_pid: int | None,
    status: ClaudeStatus | None,
    agent_version: str,
    family: str,
    host: str = "local",
) -> Agent:
    """The agent a first reading of a pane makes, dated by ``claim`` (the one clock's, detect/clock.py) and read at ``at``.

    The one builder of an agent from a reading (the store's, store.py), so
    ``headspace status`` and the live table show the same agent, at the
    same time, for the same reading: both are the service's.
    """
    return Agent(
        pane_id=record.pane_id,
        target=record.target,
        session=record.session_name,
        cwd=(status.cwd if status and status.cwd else record.cwd),
        name=status.name if status else "",
        pid=record.pid,
        agent_pid=agent_pid or 0,
        observation=observation,
        since=claim.at,
        since_source=claim.source,
        prompt_since=at,
        agent_version=agent_version,
        family=family,
        key=key,
        host=host,
        limited_until=reset_at(observation.error) if observation.state is AgentState.LIMITED else 0.0,
    )
