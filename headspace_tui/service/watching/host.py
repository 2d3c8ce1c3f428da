"""A host: one tmux server and the machine it runs on, as the monitor reaches them.

The monitor asks its host for everything outside headspace: the panes and
the process table, a pane's screen, a session's control client, whether a
process still runs, and the agents' files (Claude's status files and
transcripts, the others' session records).  The
local host does this with this machine's tmux, /proc (or psutil) and file
system; a remote host (``remote/host.py``, another machine over SSH)
answers the same questions through its own transport.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Protocol

from ...changes.trees import LocalTrees, Trees
from ...detect.claude.process import ClaudeProcess, claude_process
from ...detect.claude.status_files import ClaudeStatus, claude_config_dir, read_statuses
from ...detect.claude.transcript import TranscriptTail
from ...detect.families import usage_kinds
from ...detect.session_usage import SessionUsage
from ...hooks.channel import AnswerChannel, MakeChannel, socket_path
from ...hooks.spool import HookEvent, spool_dir
from ...model import LOCAL_HOST
from ...shared.proctree import ProcessTable, process_exists, read_process_table
from ...tmux.control import ControlClient, run_via
from ...tmux.server import PANE_FORMAT, PaneRecord, TmuxServer, parse_pane_records
from ...usage.model import Usage
from .folder_watch import watch_spool, watch_statuses
from .pane_watch import Tail


class Host(Protocol):
    """What the monitor asks of a host: this machine (``LocalHost``) or one over SSH (``remote.host.RemoteHost``).

    The monitor never asks which kind it has: where they differ, the
    difference is in the answers (a remote host's answer channel is relayed by
    its probe, it asks no ``claude agents``, and when out of reach keeps its
    rows as offline).
    """

    @property
    def name(self) -> str: ...
    @property
    def remote(self) -> bool:
        """Out of reach is not gone: rows stay, marked offline, and the link is tried again."""

    @property
    def can_ask_claude(self) -> bool: ...
    @property
    def server(self) -> TmuxServer: ...

    on_lost: Callable[[], None]  # told when the link drops between discoveries
    on_notice: Callable[[str], None]  # one line for the user from the host's side

    def default_config_dir(self) -> Path | None: ...
    def watch_hooks(self, spool: Path | None, *, create: bool = True) -> AsyncIterator[HookEvent]: ...
    def answer_channel(self, spool: Path | None) -> MakeChannel | None: ...
    async def close(self) -> None: ...
    async def lost(self) -> None: ...
    async def snapshot(self, via: ControlClient | None = None) -> tuple[list[PaneRecord], ProcessTable]: ...
    async def claude_processes(self, pids: list[int], table: ProcessTable) -> list[ClaudeProcess]: ...
    def process_exists(self, pid: int) -> bool: ...
    def socket_file(self) -> str: ...
    def watch_statuses(self, config_dir: Path) -> AsyncIterator[dict[int, ClaudeStatus]]: ...
    async def statuses(self, config_dir: Path) -> dict[int, ClaudeStatus]: ...
    def transcript(self, path: Path) -> Tail: ...
    async def exists(self, path: Path) -> bool: ...
    async def session_usage(self, family: str, pid: int) -> Usage | None:
        """The agent's tokens as its own CLI counts them in its session record (detect/session_usage.py), read where it runs.

        An empty ``Usage``: nothing counted (or not told apart); None: the host could not be asked.
        """

    async def record_path(self, family: str, pid: int) -> str | None:
        """The session record the agent owns, searched for now (detect/session_usage.py); None when not told apart or not known here."""

    def trees(self) -> Trees:
        """Where snapshots of its agents' work trees are taken (service/watching/work_changes.py)."""


class LocalHost:
    """This machine's tmux server (``-L``/``-S`` as given) and its files."""

    name = LOCAL_HOST
    remote = False  # a lost server here means its panes are gone; a remote host's may only be out of reach
    can_ask_claude = True  # ``claude agents --json`` runs here

    def __init__(self, server: TmuxServer) -> None:
        self.server = server
        self._usage = SessionUsage(usage_kinds())  # the registered families' (a plug-in's too)
        self._usage_lock = threading.Lock()  # one reader of the followers at a time (reads run in worker threads)
        self.on_lost: Callable[[], None] = lambda: None  # never told here: the server's end is seen by discovery
        self.on_notice: Callable[[str], None] = lambda text: None

    def default_config_dir(self) -> Path | None:
        """Claude's config dir for processes whose own cannot be read: headspace's."""
        return claude_config_dir()

    def watch_hooks(self, spool: Path | None, *, create: bool = True) -> AsyncIterator[HookEvent]:
        """The spool's events; ``create=False`` for an agent's spool elsewhere, made by its hooks, not here."""
        return watch_spool(spool or spool_dir(), create=create)

    def answer_channel(self, spool: Path | None) -> MakeChannel:
        """This host's answer hooks find headspace on a socket beside the spool."""
        return functools.partial(AnswerChannel, socket_path(spool or spool_dir()))

    async def close(self) -> None:
        """Nothing to end here (a remote host ends its connection)."""

    async def lost(self) -> None:
        """Nothing to drop here: a lost local server is forgotten by the monitor."""

    async def snapshot(self, via: ControlClient | None = None) -> tuple[list[PaneRecord], ProcessTable]:
        """Every pane and the process table: the panes through ``via`` (an attached control client of this server) when there is one.

        A discovery every 30 s by a tmux client of its own was most of an idle
        tmux's cost at 300 sessions (control.py ``run_via``).
        """
        listing = await run_via(via, self.server, "list-panes", "-a", "-F", PANE_FORMAT)
        return [self.server.addressed(r) for r in parse_pane_records(listing)], await asyncio.to_thread(read_process_table)

    async def claude_processes(self, pids: list[int], table: ProcessTable) -> list[ClaudeProcess]:
        """Each Claude's version and config dir (files to read: off the loop)."""
        return await asyncio.to_thread(lambda: [claude_process(pid, table) for pid in pids])

    def process_exists(self, pid: int) -> bool:
        return process_exists(pid)

    def socket_file(self) -> str:
        return self.server.socket_file()

    def watch_statuses(self, config_dir: Path) -> AsyncIterator[dict[int, ClaudeStatus]]:
        return watch_statuses(config_dir / "sessions")

    async def statuses(self, config_dir: Path) -> dict[int, ClaudeStatus]:
        """The status files of one config dir, read once (``headspace status``)."""
        return await asyncio.to_thread(read_statuses, config_dir / "sessions")

    def transcript(self, path: Path) -> TranscriptTail:
        return TranscriptTail(path)

    async def exists(self, path: Path) -> bool:
        return await asyncio.to_thread(path.exists)

    async def session_usage(self, family: str, pid: int) -> Usage | None:
        def read() -> Usage:
            with self._usage_lock:
                return self._usage.read(family, pid)

        return await asyncio.to_thread(read)

    async def record_path(self, family: str, pid: int) -> str | None:
        def find() -> str | None:
            with self._usage_lock:
                return self._usage.record_path(family, pid)

        return await asyncio.to_thread(find)

    def trees(self) -> Trees:
        return LocalTrees()
