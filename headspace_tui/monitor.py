"""Keeping the agent model of one tmux server current, one detector per session.

A discovery loop lists panes and reads the process table every couple of
seconds (one ``list-panes`` and one /proc walk for the whole server), and runs
one async detector per tmux session that has agents.  A session's detector
captures and classifies its agent panes and reports only *changes*.  Claude's
status files are watched with watchfiles; a change there wakes the detectors
at once instead of waiting for their next tick.

No Textual here: the app passes callbacks and runs ``Monitor.run`` as a worker.
(Issue 5 replaces the capture polling with tmux control mode.)
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Callable

from .detect.claude_screen import classify_capture
from .detect.fusion import Fuser
from .detect.registry import ClaudeStatus, claude_config_dir, status_observation, watch_statuses
from .detect.transcript import TranscriptTail, transcript_path
from .hooks.spool import HookEvent, hook_observation, spool_dir, watch_spool
from .journal import Journal
from .model import Agent, AgentState, Evidence, Observation
from .tmux.proctree import find_claude, read_process_table
from .tmux.server import PaneRecord, TmuxCommandError, TmuxServer, TmuxUnavailable

DISCOVERY_INTERVAL = 2.0
CAPTURE_INTERVAL = 0.5
FOCUS_INTERVAL = 0.25


def same_observation(a: Observation, b: Observation) -> bool:
    """Equal for the table: same state, same prompt, same error (evidence may differ)."""
    return (
        a.state is b.state
        and (a.prompt.fingerprint if a.prompt else "") == (b.prompt.fingerprint if b.prompt else "")
        and a.error == b.error
        and a.retrying == b.retrying
        and a.exit_status == b.exit_status
    )


class Monitor:
    def __init__(
        self,
        server: TmuxServer,
        *,
        on_change: Callable[[Agent], None],
        on_remove: Callable[[str], None],
        on_problem: Callable[[str | None], None],
        include_all: bool = False,
        config_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
        idle_grace: float = 5.0,
        journal: Journal | None = None,
        spool: Path | None = None,
        hooks: bool = True,
    ) -> None:
        self.server = server
        self.on_change = on_change
        self.on_remove = on_remove
        self.on_problem = on_problem
        self.include_all = include_all
        self.config_dir = config_dir or claude_config_dir()
        self.clock = clock
        self.agents: dict[str, Agent] = {}
        self.records: dict[str, PaneRecord] = {}
        self.claude_pids: dict[str, int | None] = {}
        self.statuses: dict[int, ClaudeStatus] = {}
        self.captures: dict[str, str] = {}  # pane id -> last capture (the preview reads it)
        self.fusers: dict[str, Fuser] = {}
        self.idle_grace = idle_grace
        self.journal = journal
        self.hooks = hooks
        self.spool = spool
        self.tails: dict[str, TranscriptTail] = {}
        self.focused: str | None = None
        self._sessions: dict[str, asyncio.Task] = {}
        self._wake: dict[str, asyncio.Event] = {}
        self._problem: str | None = "starting"

    # -- the loops ----------------------------------------------------------
    async def run(self) -> None:
        watchers = [asyncio.create_task(self._watch_statuses())]
        if self.hooks:
            watchers.append(asyncio.create_task(self._watch_hooks()))
        try:
            while True:
                await self.discover()
                await asyncio.sleep(DISCOVERY_INTERVAL)
        finally:
            for watcher in watchers:
                watcher.cancel()
            for task in self._sessions.values():
                task.cancel()

    async def discover(self) -> None:
        """List panes and processes once; start or stop session detectors."""
        try:
            records, table = await asyncio.to_thread(lambda: (self.server.list_panes(), read_process_table()))
        except TmuxUnavailable as exc:
            self._report(str(exc))
            for pane_id in list(self.agents):
                self._forget(pane_id)
            return
        except TmuxCommandError as exc:
            self._report(f"tmux: {exc}")
            return
        self._report(None)
        seen: set[str] = set()
        for record in records:
            claude_pid = find_claude(record.pid, table)
            known = record.pane_id in self.agents
            if claude_pid is None and not known and not self.include_all:
                continue
            seen.add(record.pane_id)
            self.records[record.pane_id] = record
            self.claude_pids[record.pane_id] = claude_pid
        for pane_id in list(self.agents):
            if pane_id not in seen:
                self._forget(pane_id)
        sessions = {self.records[p].session_id for p in seen}
        for session_id in sessions - set(self._sessions):
            self._wake[session_id] = asyncio.Event()
            self._sessions[session_id] = asyncio.create_task(self._session_loop(session_id))
        for session_id in set(self._sessions) - sessions:
            self._sessions.pop(session_id).cancel()
            self._wake.pop(session_id, None)
        for session_id in sessions:
            self._wake[session_id].set()  # new panes get looked at now

    async def _session_loop(self, session_id: str) -> None:
        """The detector of one tmux session: observe its agent panes, report changes."""
        wake = self._wake[session_id]
        while True:
            panes = [p for p, r in self.records.items() if r.session_id == session_id]
            for pane_id in panes:
                await self.observe(pane_id)
            interval = FOCUS_INTERVAL if self.focused in panes else CAPTURE_INTERVAL
            wake.clear()
            try:
                await asyncio.wait_for(wake.wait(), timeout=interval)
            except asyncio.TimeoutError:
                pass

    async def _watch_statuses(self) -> None:
        async for statuses in watch_statuses(self.config_dir / "sessions"):
            self.statuses = statuses
            for event in self._wake.values():
                event.set()

    async def _watch_hooks(self) -> None:
        """Hook events (when installed): the most confident and often the first word on a change."""
        async for event in watch_spool(self.spool or spool_dir()):
            self.hook_event(event)

    def hook_event(self, event: HookEvent) -> None:
        record = self.records.get(event.pane_id)
        agent = self.agents.get(event.pane_id)
        if record is None or agent is None:
            return  # not a pane we watch (another server, or not yet discovered)
        claude_pid = self.claude_pids.get(event.pane_id)
        if event.pid and claude_pid and event.pid != claude_pid:
            return  # the same %N on another tmux server: not this agent
        if event.transcript_path and event.pane_id not in self.tails:
            self._open_transcript(agent, Path(event.transcript_path))
        observation = hook_observation(event)
        if observation is not None:
            fused = self.fusers.setdefault(event.pane_id, Fuser(self.idle_grace)).observe(observation, self.clock(), at=event.ts)
            self._update(record, self.claude_pids.get(event.pane_id), fused)
        self.refresh_soon(event.pane_id)

    # -- transcript ---------------------------------------------------------------
    def _open_transcript(self, agent: Agent, path: Path) -> None:
        """Follow an agent's transcript: replay what is there silently, then record what comes."""
        tail = TranscriptTail(path)
        self.tails[agent.pane_id] = tail
        if self.journal is not None:
            self.journal.turns(agent, tail.read_new(), record=False)

    def _read_transcript(self, agent: Agent, status: ClaudeStatus | None) -> None:
        tail = self.tails.get(agent.pane_id)
        if tail is None:
            if status is None or not status.session_id or not status.cwd:
                return
            path = transcript_path(self.config_dir, status.cwd, status.session_id)
            if not path.exists():
                return
            self._open_transcript(agent, path)
            return
        turns = tail.read_new()
        if turns and self.journal is not None:
            before = (agent.command, agent.outcome)
            self.journal.turns(agent, turns)
            if (agent.command, agent.outcome) != before:
                self.on_change(agent)

    # -- one pane -------------------------------------------------------------
    async def observe(self, pane_id: str) -> Agent | None:
        record = self.records.get(pane_id)
        if record is None:
            return None
        claude_pid = self.claude_pids.get(pane_id)
        try:
            ansi = await asyncio.to_thread(self.server.capture, pane_id, True)
        except (TmuxCommandError, TmuxUnavailable):
            self._forget(pane_id)
            return None
        changed = self.captures.get(pane_id) != ansi
        self.captures[pane_id] = ansi
        now = self.clock()
        fuser = self.fusers.setdefault(pane_id, Fuser(self.idle_grace))
        if record.dead:
            screen = Observation(
                AgentState.EXITED,
                evidence=(Evidence("pane-dead", -1, f"exit status {record.dead_status}"),),
                exit_status=record.dead_status,
                confidence=1.0,
            )
        else:
            screen = classify_capture(ansi, command="claude" if claude_pid else record.current_command)
        status = self.statuses.get(claude_pid) if claude_pid else None
        if status is not None:
            fuser.observe(status_observation(status), now, at=status.updated_at or now)
        elif "status-file" in fuser.verdicts:
            del fuser.verdicts["status-file"]  # Claude removed its file (it exited)
        observation = fuser.observe(screen, now, output_changed=changed)
        agent = self._update(record, claude_pid, observation)
        self._read_transcript(agent, status)
        return agent

    def _update(self, record: PaneRecord, claude_pid: int | None, observation: Observation, at: float | None = None) -> Agent:
        status = self.statuses.get(claude_pid) if claude_pid else None
        agent = self.agents.get(record.pane_id)
        now = self.clock() if at is None else at
        if agent is None:
            agent = Agent(
                pane_id=record.pane_id,
                target=record.target,
                session=record.session_name,
                cwd=(status.cwd if status and status.cwd else record.cwd),
                name=status.name if status else "",
                pid=record.pid,
                claude_pid=claude_pid or 0,
                observation=observation,
                since=now,
            )
            self.agents[record.pane_id] = agent
            if self.journal is not None:
                self.journal.state_changed(agent, None, observation.state, now)
            self.on_change(agent)
            return agent
        changed = not same_observation(agent.observation, observation) or agent.target != record.target
        if agent.observation.state is not observation.state:
            if self.journal is not None:
                self.journal.state_changed(agent, agent.observation.state, observation.state, now)
            agent.since = now
            agent.delivery = ""
        agent.observation = observation
        agent.target = record.target
        agent.claude_pid = claude_pid or 0
        if status and status.name:
            agent.name = status.name
        if changed:
            self.on_change(agent)
        return agent

    def _forget(self, pane_id: str) -> None:
        self.records.pop(pane_id, None)
        self.claude_pids.pop(pane_id, None)
        self.captures.pop(pane_id, None)
        self.fusers.pop(pane_id, None)
        self.tails.pop(pane_id, None)
        if self.agents.pop(pane_id, None) is not None:
            self.on_remove(pane_id)

    def _report(self, problem: str | None) -> None:
        if problem != self._problem:
            self._problem = problem
            self.on_problem(problem)

    def mark(self, pane_id: str, delivery: str) -> None:
        """Record the result of an action on the row ("not delivered: ...")."""
        agent = self.agents.get(pane_id)
        if agent is not None:
            agent.delivery = delivery
            self.on_change(agent)

    def refresh_soon(self, pane_id: str) -> None:
        record = self.records.get(pane_id)
        if record is not None and record.session_id in self._wake:
            self._wake[record.session_id].set()
