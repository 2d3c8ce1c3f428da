"""Reading one pane: what its screen says, joined with what the agent says of itself.

Shared by the monitor (each reading of a watched pane) and ``one_look``
(``headspace status``): a screen is read by its agent family's reader (for
Claude, the rules table of the version that draws it), fused with Claude's
status file when there is one, and ``claude agents --json`` is asked about
Claude agents without one.  And the agent a reading makes (``new_agent``):
one builder, dated by the one clock, for the live table's store and for
``headspace status`` alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...detect.claude.agents_cli import list_agents, supports_agents
from ...detect.claude.process import ClaudeProcess, process_env
from ...detect.claude.status_files import ClaudeStatus, status_observation
from ...detect.clock import Claim, Clock, remembered_claim
from ...detect.families import CLAUDE
from ...detect.family import Family
from ...detect.fusion import claim_agrees, fuse
from ...detect.sources import Source
from ...model import Agent, AgentState, Evidence, Observation
from ...shared.proctree import ProcessTable
from ...tmux.server import PaneRecord, TmuxCommandError, TmuxServer
from ...usage.limits import reset_at


@dataclass
class PaneView:
    """A pane with what we know about it in this scan."""

    record: PaneRecord
    agent_pid: int | None
    observation: Observation
    status: ClaudeStatus | None
    process: ClaudeProcess | None = None
    family: Family | None = None  # the agent's family; None: no agent runs there
    version: str = ""  # the agent's version, for a family other than Claude (Claude's: ``process``)
    key: str = ""  # the agent's identity for history (pane_watch.agent_key): the event log knows it by this


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


def observe_pane(server: TmuxServer, record: PaneRecord, agent_pid: int | None, status: ClaudeStatus | None, version: str | None, family: Family | None) -> Observation:
    """Capture and classify one pane, fused with Claude's status file when there is one."""
    try:
        ansi = "" if record.dead else server.capture(record.pane_id, ansi=True)
    except TmuxCommandError as exc:  # the pane closed between listing and capture
        return Observation(AgentState.EXITED, evidence=(Evidence("pane-gone", -1, str(exc)),), confidence=0.5)
    screen = screen_observation(record, agent_pid, ansi, version, family)
    return fuse(screen, status_observation(status) if status is not None else None)


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


def status_claims(status: ClaudeStatus | None, shown: AgentState) -> dict[str, float]:
    """When Claude's status file says the state began, if it can date the state shown (``claim_agrees``): the one clock's candidate."""
    if status is not None and status.updated_at and claim_agrees(status_observation(status).state, shown):
        return {Source.STATUS_FILE: status.updated_at}
    return {}


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

    The one builder of an agent from a reading: the live table's store
    (store.py) and ``headspace status`` (``to_agent``) both call it, so the
    two show the same agent, at the same time, for the same reading.
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


def to_agent(view: PaneView, now: float | None = None, remember: Callable[[str], tuple[str, float] | None] | None = None) -> Agent:
    """The agent of one look at a pane (``headspace status``): dated as the live table dates a first reading.

    A fresh ``Clock`` given Claude's status file's time, when it agrees with
    what the screen shows, and the journal's (``remember``: the event log's
    last word on the agent, as the live table asks it), weighed by the one
    ranking; else "sight" (only now: nothing says when the state began).
    """
    at = now or time.time()
    observation = view.observation
    claims = status_claims(view.status, observation.state)
    if remember is not None and view.key:
        claims |= remembered_claim(remember(view.key), observation.state)
    claim = Clock().update(observation.state, claims, at, observation.prompt.fingerprint if observation.prompt else "")
    return new_agent(
        view.record,
        view.key,
        observation,
        claim,
        at,
        agent_pid=view.agent_pid,
        status=view.status,
        agent_version=(view.process.version or "" if view.process else view.version),
        family=(view.family or CLAUDE).name,
    )
