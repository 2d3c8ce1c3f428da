"""What Claude says about itself, per process: its version and config dir, its status file, ``claude agents``.

The screen is read for every pane; these facts come from Claude's own
files and commands and are kept here, by Claude's pid, for the monitor's
readings to join:

* each Claude process's version and config dir, read once when it is first
  seen (agents may run under different HOMEs and config dirs);
* the status files of every config dir in use, one watcher per dir;
* for versions that have it, what ``claude agents --json`` says about an
  agent that still has no status file a few seconds after it started.

Whenever a pid's facts change, ``changed`` is told the pids, so that only
those panes are read again.  No Textual, no tmux here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from ...detect.claude.process import ClaudeProcess
from ...detect.claude.status_files import ClaudeStatus
from ...shared.proctree import ProcessTable
from ..records.scan import ask_claude
from .host import Host
from .supervise import Supervisor

ASK_CLAUDE_AFTER = 5.0  # an agent without a status file this long is asked about through ``claude agents``...
ASK_CLAUDE_GAP = 30.0  # ...at most this often per binary and config dir

log = logging.getLogger(__name__)


class ClaudeFacts:
    """The facts of every Claude process on one host, kept current."""

    def __init__(self, host: Host, supervisor: Supervisor, config_dir: Path | None, changed: Callable[[set[int]], None]) -> None:
        self.host = host
        self.supervisor = supervisor
        self.config_dir = config_dir  # assumed for a Claude whose own config dir cannot be read
        self.changed = changed
        self.processes: dict[int, ClaudeProcess] = {}  # by pid: version and config dir, read once
        self.statuses: dict[int, ClaudeStatus] = {}  # every watched config dir's status files, by pid
        self.asked: dict[int, ClaudeStatus] = {}  # what ``claude agents --json`` said, for agents without a file
        self._statuses_by_dir: dict[Path, dict[int, ClaudeStatus]] = {}
        self._watchers: dict[Path, asyncio.Task] = {}
        self._first_seen: dict[int, float] = {}
        self._asked_at: dict[tuple[str, Path | None], float] = {}
        self._asking: asyncio.Task | None = None
        self.stopping = False

    # -- what a reading joins ------------------------------------------------
    def process(self, pid: int | None) -> ClaudeProcess | None:
        return self.processes.get(pid) if pid else None

    def status(self, pid: int | None) -> ClaudeStatus | None:
        return self.statuses.get(pid) if pid else None

    def asked_status(self, pid: int | None) -> ClaudeStatus | None:
        """``claude agents``'s word on an agent, only while it has no status file."""
        return self.asked.get(pid) if pid and pid not in self.statuses else None

    def config_dir_of(self, pid: int | None) -> Path | None:
        process = self.process(pid)
        return (process.config_dir if process else None) or self.config_dir

    # -- kept current ----------------------------------------------------------
    def start(self) -> None:
        self.stopping = False
        if self.config_dir is not None:
            self.watch_config_dir(self.config_dir)

    async def learn(self, pids: list[int], table: ProcessTable, now: float) -> None:
        """Read the version and config dir of Claudes seen for the first time; watch their config dirs."""
        if not pids:
            return
        for process in await self.host.claude_processes(pids, table):
            self.processes[process.pid] = process
            self._first_seen[process.pid] = now
            folder = process.config_dir or self.config_dir
            if folder is not None:
                self.watch_config_dir(folder)

    def forget_ended(self, table: ProcessTable, now: float) -> None:
        """Drop what is known of Claudes no longer running (a new one may reuse the pid), then ask about the rest."""
        for pid in [pid for pid in self.processes if pid not in table]:
            self.processes.pop(pid, None)
            self._first_seen.pop(pid, None)
            self.asked.pop(pid, None)
        self._ask_claude_soon(now)

    def watch_config_dir(self, folder: Path) -> None:
        """Watch one Claude config dir's status files (once per dir: agents may use different ones)."""
        if folder not in self._watchers and not self.stopping:
            self._watchers[folder] = self.supervisor.start(f"the status-file watcher of {folder}", lambda: self._watch_statuses(folder))

    async def stop(self) -> None:
        """End the ``claude agents`` call in flight (the watchers end with the supervisor)."""
        self.stopping = True
        if self._asking is not None:
            self._asking.cancel()
            await asyncio.gather(self._asking, return_exceptions=True)
        self._watchers.clear()

    async def _watch_statuses(self, folder: Path) -> None:
        async for statuses in self.host.watch_statuses(folder):
            self._statuses_by_dir[folder] = statuses
            merged: dict[int, ClaudeStatus] = {}
            for found in self._statuses_by_dir.values():
                merged.update(found)
            changed = {pid for pid in set(merged) | set(self.statuses) if merged.get(pid) != self.statuses.get(pid)}
            self.statuses = merged
            self.changed(changed)

    def _ask_claude_soon(self, now: float) -> None:
        """Ask ``claude agents --json`` about agents that still have no status file (in the background).

        Only for versions that have the command, only after ASK_CLAUDE_AFTER
        seconds without a file (Claude writes it a moment after start), at
        most every ASK_CLAUDE_GAP seconds per binary and config dir, one call
        at a time: it costs about 0.4 s of CPU.
        """
        if (self._asking is not None and not self._asking.done()) or not self.host.can_ask_claude:
            return
        due = [
            p
            for pid, p in self.processes.items()
            if pid not in self.statuses and now - self._first_seen.get(pid, now) >= ASK_CLAUDE_AFTER and now - self._asked_at.get((p.binary, p.config_dir), 0.0) >= ASK_CLAUDE_GAP
        ]
        if not due:
            return
        for process in due:
            self._asked_at[(process.binary, process.config_dir)] = now
        self._asking = asyncio.create_task(self._ask_claude(due))

    async def _ask_claude(self, processes: list[ClaudeProcess]) -> None:
        try:
            answers = await ask_claude(processes, {p.pid for p in processes})
        except Exception:
            log.exception("asking claude agents failed")
            return
        changed = {pid for pid, status in answers.items() if self.asked.get(pid) != status}
        self.asked.update(answers)
        self.changed(changed)
