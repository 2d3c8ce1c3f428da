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
import concurrent.futures
import logging
import os
import time
from pathlib import Path
from typing import Callable

from .detect.fusion import Fuser
from .detect.registry import ClaudeStatus, claude_config_dir, status_observation, watch_statuses
from .scan import ask_claude
from .detect.transcript import TranscriptTail, transcript_path
from .hooks.spool import HookEvent, SpoolRefused, hook_observation, spool_dir, watch_spool
from .journal import Journal, turn_time
from .scan import screen_observation
from .model import Agent, AgentState, Observation
from .tmux.claude_process import ClaudeProcess, claude_process
from .tmux.control import ControlClient, ControlError
from .tmux.proctree import find_claude, read_process_table
from .tmux.server import PaneRecord, TmuxCommandError, TmuxServer, TmuxUnavailable

DISCOVERY_INTERVAL = 30.0  # a full look even without any event (a safety net; events trigger it sooner)
DISCOVERY_MIN_GAP = 0.5
CAPTURE_GAP = 0.1  # a pane is re-read at most this often...
FOCUS_GAP = 0.05  # ...and the previewed one this often
QUIET = 0.02  # read once a burst of output has paused this long...
MAX_WAIT = 0.1  # ...or once it has been changing for this long
POLL_GAP = 0.5  # without a control client, every pane is polled this often
SMALL_WRITE = 400  # escaped bytes: a spinner tick, a streamed word; a dialog is kilobytes
LAZY_GAP = 1.0  # a working pane changed only by small writes is re-read this often...
FOCUS_LAZY_GAP = 0.2  # ...and the previewed one at the preview's pace
IDLE_WAKE = 30.0  # with a control client, an unchanged session sleeps this long
UNKNOWN_PANE_RECHECK = 5.0
TRANSCRIPT_LAG = 0.5  # after a state change, read the pane (and its transcript) once more this much later
ASK_CLAUDE_AFTER = 5.0  # an agent without a status file this long is asked about through ``claude agents``...
ASK_CLAUDE_GAP = 30.0  # ...at most this often per binary and config dir

log = logging.getLogger(__name__)


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
        on_capture: Callable[[str], None] = lambda pane_id: None,
        on_notice: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.server = server
        self.on_notice = on_notice  # one line for the user: a source turned off, a file refused
        self.on_capture = on_capture
        self.started = clock()
        self.on_change = on_change
        self.on_remove = on_remove
        self.on_problem = on_problem
        self.include_all = include_all
        self.config_dir = config_dir or claude_config_dir()
        self.clock = clock
        self.agents: dict[str, Agent] = {}
        self.records: dict[str, PaneRecord] = {}
        self.claude_pids: dict[str, int | None] = {}
        self.processes: dict[int, ClaudeProcess] = {}  # by pid: version and config dir, read once
        self.statuses: dict[int, ClaudeStatus] = {}  # every watched config dir's status files, by pid
        self.asked: dict[int, ClaudeStatus] = {}  # what ``claude agents --json`` said, for agents without a file
        self._statuses_by_dir: dict[Path, dict[int, ClaudeStatus]] = {}
        self._status_watchers: dict[Path, asyncio.Task] = {}
        self._first_seen: dict[int, float] = {}
        self._asked_at: dict[tuple[str, Path | None], float] = {}
        self._asking: asyncio.Task | None = None
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
        self._dirty: dict[str, set[str]] = {}  # session id -> panes to re-read (a set: stale work collapses)
        self._last_read: dict[str, float] = {}
        self._last_output: dict[str, float] = {}
        self._dirty_since: dict[str, float] = {}
        self._lazy_since: dict[str, float] = {}  # dirty only by small writes while working
        self._recheck: dict[str, float] = {}  # pane id -> when to look again without a change signal
        self._unknown_output: dict[str, float] = {}
        self._discover_soon = asyncio.Event()
        self.clients: dict[str, ControlClient] = {}
        self._stopping = False
        self.all_panes: set[str] = set()
        self._problem: str | None = "starting"

    # -- the loops ----------------------------------------------------------
    async def run(self) -> None:
        self._stopping = False
        self._watch_config_dir(self.config_dir)
        watchers = []
        if self.hooks:
            watchers.append(asyncio.create_task(self._watch_hooks()))
        try:
            while True:
                await self.discover()
                self._discover_soon.clear()
                try:
                    await asyncio.wait_for(self._discover_soon.wait(), DISCOVERY_INTERVAL)
                except asyncio.TimeoutError:
                    pass
                await asyncio.sleep(DISCOVERY_MIN_GAP)  # many events at once: one discovery
        finally:
            for watcher in watchers:
                watcher.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)
            await self.stop()

    async def stop(self) -> None:
        """Stop every detector and wait for it: each detaches its control client,
        so no tmux client or pipe outlives the monitor.  Safe to call twice."""
        self._stopping = True
        tasks = [*self._sessions.values(), *self._status_watchers.values(), *([self._asking] if self._asking else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._sessions.clear()
        self._status_watchers.clear()
        for client in list(self.clients.values()):
            await client.close()

    def _tell(self, callback: Callable, *args) -> None:
        """Report to the app, unless the monitor is stopping (the app may be tearing down its widgets).

        In Python 3.11 a cancelled ``wait_for`` can still return a result that
        arrived at the same moment, so a detector may finish one last read
        after it was told to stop; that read must not reach the UI.
        """
        if not self._stopping:
            callback(*args)

    def request_discovery(self) -> None:
        self._discover_soon.set()

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
        self.all_panes = {r.pane_id for r in records}
        now = self.clock()
        for record in records:
            claude_pid = find_claude(record.pid, table)
            if claude_pid is not None and claude_pid not in self.processes:
                self.processes[claude_pid] = process = claude_process(claude_pid, table)
                self._first_seen[claude_pid] = now
                self._watch_config_dir(process.config_dir or self.config_dir)
            known = record.pane_id in self.agents
            if claude_pid is None and not known and not self.include_all:
                continue
            seen.add(record.pane_id)
            old = self.records.get(record.pane_id)
            self.records[record.pane_id] = record
            self.claude_pids[record.pane_id] = claude_pid
            if old is None or old.dead != record.dead or old.current_command != record.current_command:
                self._mark(record.pane_id)
        for pane_id in list(self.agents):
            if pane_id not in seen:
                self._forget(pane_id)
        for pane_id in list(self.records):
            if pane_id not in seen:
                self.records.pop(pane_id, None)
        for pid in [pid for pid in self.processes if pid not in table]:
            self.processes.pop(pid, None)  # that Claude is gone (a new one may reuse the pid)
            self._first_seen.pop(pid, None)
            self.asked.pop(pid, None)
        self._ask_claude_soon(now)
        sessions = {self.records[p].session_id for p in seen}
        for session_id in sessions - set(self._sessions):
            self._wake[session_id] = asyncio.Event()
            self._dirty.setdefault(session_id, set()).update(p for p in seen if self.records[p].session_id == session_id)
            self._sessions[session_id] = asyncio.create_task(self._session_loop(session_id))
        for session_id in set(self._sessions) - sessions:
            self._sessions.pop(session_id).cancel()
            self._wake.pop(session_id, None)
            self._dirty.pop(session_id, None)

    def _mark(self, pane_id: str) -> None:
        """Note that a pane changed; its session's detector will re-read it (coalesced)."""
        record = self.records.get(pane_id)
        if record is None:
            return
        dirty = self._dirty.setdefault(record.session_id, set())
        if pane_id not in dirty:
            dirty.add(pane_id)
            self._dirty_since[pane_id] = self.clock()
        wake = self._wake.get(record.session_id)
        if wake is not None:
            wake.set()

    def _pane_output(self, pane_id: str, size: int = 1 << 20) -> None:
        if pane_id in self.records:
            now = self.clock()
            self._last_output[pane_id] = now
            agent = self.agents.get(pane_id)
            if size < SMALL_WRITE and agent is not None and agent.state is AgentState.WORKING:
                # A working agent's spinner ticks in small writes; a dialog or the end of
                # a turn is a large redraw.  Small writes are looked at lazily.
                self._lazy_since.setdefault(pane_id, now)
                self._mark(pane_id)
                return
            self._lazy_since.pop(pane_id, None)
            self._mark(pane_id)
        elif pane_id not in self.all_panes or self.clock() - self._unknown_output.get(pane_id, 0.0) > UNKNOWN_PANE_RECHECK:
            # A pane we do not watch is writing: maybe Claude just started in it.
            self._unknown_output[pane_id] = self.clock()
            self.request_discovery()

    def _control_event(self, name: str, args: str) -> None:
        if name in ("sessions-changed", "window-add", "window-close", "unlinked-window-close", "layout-change"):
            self.request_discovery()
        elif name == "pane-mode-changed":
            self._mark(args.strip())

    async def _session_loop(self, session_id: str) -> None:
        """The detector of one tmux session: re-read a pane only when it changed.

        Changes come from the session's control client (``%output``), from
        Claude's status file and hooks, and from the idle-grace clock.  Each
        pane is read at most every CAPTURE_GAP seconds (FOCUS_GAP for the
        previewed one); changes in between collapse into one read.  Without a
        control client (it could not attach) the panes are polled instead.
        """
        wake = self._wake[session_id]
        dirty = self._dirty.setdefault(session_id, set())
        attached = ControlClient(
            self.server,
            session_id,
            on_output=self._pane_output,
            on_event=self._control_event,
            on_exit=lambda reason: self.request_discovery(),
        )
        client: ControlClient | None = attached
        try:
            try:
                await attached.start()
                self.clients[session_id] = attached
            except TmuxUnavailable:
                client = None
            while not self._stopping:  # a swallowed cancel (see _tell) must still end the loop
                wake.clear()  # before looking: a change marked while we work wakes the next round
                now = self.clock()
                polling = client is None or client.closed
                panes = [p for p, r in self.records.items() if r.session_id == session_id]
                if polling:
                    dirty.update(panes)  # no change signal: poll
                for pane_id in panes:
                    deadline = self._recheck.get(pane_id)
                    if deadline is not None and deadline <= now:
                        del self._recheck[pane_id]
                        dirty.add(pane_id)
                timeout = POLL_GAP if polling else IDLE_WAKE
                for pane_id in list(dirty):
                    if pane_id not in self.records:
                        dirty.discard(pane_id)
                        continue
                    if polling:
                        due = self._last_read.get(pane_id, 0.0) + POLL_GAP
                    elif pane_id in self._lazy_since:
                        due = self._last_read.get(pane_id, 0.0) + (FOCUS_LAZY_GAP if pane_id == self.focused else LAZY_GAP)
                    else:
                        gap = FOCUS_GAP if pane_id == self.focused else CAPTURE_GAP
                        settled = min(self._last_output.get(pane_id, 0.0) + QUIET, self._dirty_since.get(pane_id, now) + MAX_WAIT)
                        due = max(self._last_read.get(pane_id, 0.0) + gap, settled)
                    if due <= now:
                        dirty.discard(pane_id)
                        self._dirty_since.pop(pane_id, None)
                        self._lazy_since.pop(pane_id, None)
                        self._last_read[pane_id] = now
                        await self.observe(pane_id, client)
                    else:
                        timeout = min(timeout, due - now)
                for pane_id in panes:
                    deadline = self._recheck.get(pane_id)
                    if deadline is not None:
                        timeout = min(timeout, deadline - self.clock())
                try:
                    await asyncio.wait_for(wake.wait(), timeout=max(timeout, 0.005))
                except asyncio.TimeoutError:
                    pass
        finally:
            # Also when cancelled while attaching: the tmux -C process is ours to end.
            self.clients.pop(session_id, None)
            await attached.close()

    def _watch_config_dir(self, folder: Path) -> None:
        """Watch one Claude config dir's status files (once per dir: agents may use different ones)."""
        if folder not in self._status_watchers and not self._stopping:
            self._status_watchers[folder] = asyncio.create_task(self._watch_statuses(folder))

    async def _watch_statuses(self, folder: Path) -> None:
        async for statuses in watch_statuses(folder / "sessions"):
            self._statuses_by_dir[folder] = statuses
            merged: dict[int, ClaudeStatus] = {}
            for found in self._statuses_by_dir.values():
                merged.update(found)
            changed = {pid for pid in set(merged) | set(self.statuses) if merged.get(pid) != self.statuses.get(pid)}
            self.statuses = merged
            for pane_id, pid in list(self.claude_pids.items()):
                if pid in changed:
                    self._mark(pane_id)

    def _ask_claude_soon(self, now: float) -> None:
        """Ask ``claude agents --json`` about agents that still have no status file (in the background).

        Only for versions that have the command, only after ASK_CLAUDE_AFTER
        seconds without a file (Claude writes it a moment after start), at
        most every ASK_CLAUDE_GAP seconds per binary and config dir, one call
        at a time: it costs about 0.4 s of CPU.
        """
        if self._asking is not None and not self._asking.done():
            return
        due = [
            p
            for pid, p in self.processes.items()
            if pid not in self.statuses
            and now - self._first_seen.get(pid, now) >= ASK_CLAUDE_AFTER
            and now - self._asked_at.get((p.binary, p.config_dir), 0.0) >= ASK_CLAUDE_GAP
        ]
        if not due:
            return
        for process in due:
            self._asked_at[(process.binary, process.config_dir)] = now
        self._asking = asyncio.create_task(self._ask_claude(due))

    async def _ask_claude(self, processes: list[ClaudeProcess]) -> None:
        answers = await ask_claude(processes, {p.pid for p in processes})
        changed = {pid for pid, status in answers.items() if self.asked.get(pid) != status}
        self.asked.update(answers)
        for pane_id, pid in list(self.claude_pids.items()):
            if pid in changed:
                self._mark(pane_id)

    async def _watch_hooks(self) -> None:
        """Hook events (when installed): the most confident and often the first word on a change.

        One bad event is skipped (and logged), never the end of the watch; an
        unsafe spool folder turns hooks off with one line to the user.
        """
        try:
            async for event in watch_spool(self.spool or spool_dir()):
                try:
                    self.hook_event(event)
                except Exception:  # noqa: BLE001 - one event must not end the watch
                    log.exception("hook event %s skipped", event.name)
        except SpoolRefused as exc:
            log.warning("%s", exc)
            self._tell(self.on_notice, str(exc))

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
            now = self.clock()
            fused = self.fusers.setdefault(event.pane_id, Fuser(self.idle_grace)).observe(observation, now, at=event.ts)
            self._update(record, claude_pid, fused)
        self.refresh_soon(event.pane_id)

    # -- transcript ---------------------------------------------------------------
    def _open_transcript(self, agent: Agent, path: Path) -> None:
        """Follow an agent's transcript: replay what is there silently, then record what comes."""
        tail = TranscriptTail(path)
        self.tails[agent.pane_id] = tail
        if self.journal is not None:
            turns = tail.read_new()
            # History from before headspace started is replayed silently (it is
            # in the log already, or was never ours to log); anything since is new.
            cut = next((i for i, t in enumerate(turns) if (turn_time(t) or 0.0) >= self.started), len(turns))
            self.journal.turns(agent, turns[:cut], record=False)
            if turns[cut:]:
                self.journal.turns(agent, turns[cut:])

    def _read_transcript(self, agent: Agent, status: ClaudeStatus | None) -> None:
        tail = self.tails.get(agent.pane_id)
        if tail is None:
            if status is None or not status.session_id or not status.cwd:
                return
            process = self.processes.get(agent.claude_pid)
            folder = (process.config_dir if process else None) or self.config_dir
            path = transcript_path(folder, status.cwd, status.session_id)
            if not path.exists():
                return
            self._open_transcript(agent, path)
            return
        turns = tail.read_new()
        if turns and self.journal is not None:
            before = (agent.command, agent.outcome)
            self.journal.turns(agent, turns)
            if (agent.command, agent.outcome) != before:
                self._tell(self.on_change, agent)

    # -- one pane -------------------------------------------------------------
    async def observe(self, pane_id: str, client: ControlClient | None = None) -> Agent | None:
        record = self.records.get(pane_id)
        if record is None:
            return None
        claude_pid = self.claude_pids.get(pane_id)
        try:
            if client is not None and not client.closed:
                ansi = await client.capture(pane_id)
            else:
                ansi = await asyncio.to_thread(self.server.capture, pane_id, True)
        except (TmuxCommandError, TmuxUnavailable, ControlError, asyncio.TimeoutError):
            self.request_discovery()  # the pane (or its session) is probably gone
            return None
        changed = self.captures.get(pane_id) != ansi
        self.captures[pane_id] = ansi
        if changed:
            self._tell(self.on_capture, pane_id)
        if claude_pid and not os.path.exists(f"/proc/{claude_pid}"):
            # Claude has exited since the last discovery: read the pane as what it is now.
            claude_pid = self.claude_pids[pane_id] = None
            self.request_discovery()
        now = self.clock()
        fuser = self.fusers.setdefault(pane_id, Fuser(self.idle_grace))
        process = self.processes.get(claude_pid) if claude_pid else None
        screen = screen_observation(record, claude_pid, ansi, process.version if process else None)
        status = self.statuses.get(claude_pid) if claude_pid else None
        asked = self.asked.get(claude_pid) if claude_pid and status is None else None
        if status is not None:
            fuser.observe(status_observation(status), now, at=status.updated_at or now)
        elif "status-file" in fuser.verdicts:
            del fuser.verdicts["status-file"]  # Claude removed its file (it exited)
        if asked is not None:
            fuser.observe(status_observation(asked, source="claude-agents"), now, at=asked.updated_at or now)
        elif "claude-agents" in fuser.verdicts:
            del fuser.verdicts["claude-agents"]
        observation = fuser.observe(screen, now, output_changed=changed)
        deadline = fuser.idle_deadline
        if deadline is not None:
            self._recheck[pane_id] = deadline + 0.05  # look again when the grace may have run out
        hook_deadline = fuser.hook_deadline
        if hook_deadline is not None:
            # Read the screen again once a redraw's time has passed since a hook it
            # contradicts: the hook is then dropped (a forged or stale event must not
            # hold the row while the pane stays quiet).  Never later than a look
            # already due; a look that comes earlier schedules this one again.
            due = self._recheck.get(pane_id)
            self._recheck[pane_id] = hook_deadline if due is None or due <= now or hook_deadline < due else due
        before = self.agents[pane_id].state if pane_id in self.agents else None
        agent = self._update(record, claude_pid, observation)
        if before is not None and agent.state is not before and pane_id not in self._recheck:
            # Claude writes a turn to its transcript a moment after drawing it:
            # look once more after a state change, so the last turn is not left
            # unread until the pane next changes.
            self._recheck[pane_id] = now + TRANSCRIPT_LAG
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
                prompt_since=now,
                claude_version=(self.processes[claude_pid].version or "") if claude_pid in self.processes else "",
            )
            self.agents[record.pane_id] = agent
            if self.journal is not None:
                self.journal.state_changed(agent, None, observation.state, now)
            self._tell(self.on_change, agent)
            return agent
        changed = not same_observation(agent.observation, observation) or agent.target != record.target
        old_print = agent.observation.prompt.fingerprint if agent.observation.prompt else ""
        new_print = observation.prompt.fingerprint if observation.prompt else ""
        if new_print != old_print:
            agent.prompt_since = now
        if agent.observation.state is not observation.state:
            if self.journal is not None:
                self.journal.state_changed(agent, agent.observation.state, observation.state, now)
            agent.since = now
            agent.delivery = ""
        if changed:
            agent.observation = observation  # an equal reading keeps the object the UI already shows
        agent.target = record.target
        agent.claude_pid = claude_pid or 0
        if status and status.name:
            agent.name = status.name
        if changed:
            self._tell(self.on_change, agent)
        return agent

    def _forget(self, pane_id: str) -> None:
        self.records.pop(pane_id, None)
        self.claude_pids.pop(pane_id, None)
        self.captures.pop(pane_id, None)
        self.fusers.pop(pane_id, None)
        self.tails.pop(pane_id, None)
        self._recheck.pop(pane_id, None)
        self._last_read.pop(pane_id, None)
        self._last_output.pop(pane_id, None)
        self._dirty_since.pop(pane_id, None)
        self._lazy_since.pop(pane_id, None)
        if self.agents.pop(pane_id, None) is not None:
            self._tell(self.on_remove, pane_id)

    def _report(self, problem: str | None) -> None:
        if problem != self._problem:
            self._problem = problem
            self._tell(self.on_problem, problem)

    def mark(self, pane_id: str, delivery: str) -> None:
        """Record the result of an action on the row ("not delivered: ...")."""
        agent = self.agents.get(pane_id)
        if agent is not None:
            agent.delivery = delivery
            self._tell(self.on_change, agent)

    def refresh_soon(self, pane_id: str) -> None:
        self._mark(pane_id)


class ControlPaneIO:
    """The guarded actions' view of tmux, for the app: no forks where a control client exists.

    Actions run in a worker thread; captures and keys are handed to the
    session's control client on the app's event loop and waited for.  The
    pane record (copy mode, current command) still comes from a forked
    ``display-message``, once per action.
    """

    def __init__(self, monitor: Monitor, loop: asyncio.AbstractEventLoop) -> None:
        self.monitor = monitor
        self.loop = loop

    def _client(self, pane_id: str) -> ControlClient | None:
        record = self.monitor.records.get(pane_id)
        client = self.monitor.clients.get(record.session_id) if record is not None else None
        return client if client is not None and not client.closed else None

    def _run(self, coroutine):
        try:
            return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=10)
        except ControlError as exc:
            raise TmuxCommandError(str(exc)) from None
        except (TimeoutError, concurrent.futures.TimeoutError):
            raise TmuxCommandError("tmux did not answer through the control client in time") from None
        except RuntimeError as exc:  # the app's loop is shutting down
            raise TmuxCommandError(f"headspace is shutting down ({exc})") from None

    def pane(self, pane_id: str) -> PaneRecord:
        return self.monitor.server.pane(pane_id)

    def capture(self, pane_id: str, ansi: bool = True) -> str:
        client = self._client(pane_id)
        if client is None:
            return self.monitor.server.capture(pane_id, ansi)
        return self._run(client.capture(pane_id, ansi))

    def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None:
        client = self._client(pane_id)
        if client is None:
            self.monitor.server.send_keys(pane_id, *keys, literal=literal)
            return
        self._run(client.send_keys(pane_id, *keys, literal=literal))
