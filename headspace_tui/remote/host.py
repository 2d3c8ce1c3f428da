"""A remote host: another machine's tmux server and Claude files, reached through SSH.

It answers the monitor's questions as ``LocalHost`` does (service/watching/host.py), so one
``Monitor`` per host runs unchanged:

* tmux (listing panes, captures, keys, one control client per session) is
  the same tmux commands, run there by the probe and carried on its one
  SSH channel (probe_tmux.py, mux.py; before the probe runs, each is its
  own ssh session over the master: ``ssh.SshTmuxServer``); pane ids carry
  the host (``%3@box``);
* the process table, each Claude's version and config dir, status files,
  transcripts and hook events come from the probe (probe.py), headspace's
  own readers running there, which pushes what changes;
* the answer hooks there wait at the probe, and reach the answer desk
  through ``answers.RemoteAnswerChannel``.

A dropped connection is a ``TmuxUnavailable`` with ssh's reason; the
monitor then keeps the rows (marked offline) and calls ``lost``, and the
next discovery connects again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from ..changes.model import Diff
from ..changes.trees import ChangeError, Trees
from ..detect.claude.process import PROBE_OP, ClaudeProcess
from ..detect.claude.status_files import ClaudeStatus
from ..detect.turns import ToolOutcome, Turn
from ..hooks.channel import MakeChannel
from ..hooks.spool import HookEvent
from ..shared.config import HostSpec
from ..shared.proctree import ProcessInfo, ProcessTable
from ..tmux.server import PaneRecord, TmuxUnavailable
from ..usage.model import Usage
from .answers import RemoteAnswerChannel
from .mux import ProbeMux
from .probe_client import CLOSE_GRACE, ProbeClient, ProbeError
from .ssh import SshLink, SshTmuxServer

log = logging.getLogger(__name__)


class RemoteTail:
    """A transcript on the remote host, followed there; ``read_new`` runs in the monitor's reader thread."""

    def __init__(self, host: RemoteHost, path: Path) -> None:
        self.host = host
        self.path = path
        self.opened = False

    def read_new(self) -> list[Turn]:
        probe = self.host.probe
        if probe is None:
            return []
        try:
            answer = probe.call_from_thread("tail", path=str(self.path))
        except (ProbeError, TimeoutError, RuntimeError):
            return []
        self.opened = True
        return [_turn(row) for row in answer.get("turns", []) if isinstance(row, dict)]


def _turn(row: dict[str, Any]) -> Turn:
    """A turn as the probe sent it (``dataclasses.asdict``, through JSON): tuples came back as lists."""
    uses = tuple((str(name), dict(data)) for name, data in row.get("tool_uses", ()) if isinstance(data, dict))
    ids = tuple(str(i) for i in row.get("tool_use_ids", ()))
    outcomes = tuple(
        ToolOutcome(str(o.get("tool_use_id", "")), str(o.get("by", "")), o.get("accepted") if isinstance(o.get("accepted"), bool) else None, str(o.get("reason", "")))
        for o in row.get("outcomes", ())
        if isinstance(o, dict)
    )
    usage = tuple(n for n in row.get("usage", ()) if isinstance(n, int) and not isinstance(n, bool))
    plain = {k: v for k, v in row.items() if k in _TURN_FIELDS}
    return Turn(**{**plain, "tool_uses": uses, "tool_use_ids": ids, "outcomes": outcomes, "usage": usage})


_TURN_FIELDS = {f.name for f in dataclasses.fields(Turn)}


TREE_TIMEOUT = 40.0  # s for a snapshot or diff there (git's own limit is 30 s)


class RemoteHost:
    """One remote host (``[hosts.NAME]`` or ``--host``) as the monitor's host."""

    remote = True
    can_ask_claude = False  # ``claude agents`` would run there; its status files are read instead

    def __init__(self, spec: HostSpec, link: SshLink | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.link = link or SshLink(spec)
        self.server = SshTmuxServer(self.link)
        self.probe: ProbeClient | None = None
        self._gone: set[int] = set()
        self._status_folders: set[str] = set()
        self._status_queues: dict[str, asyncio.Queue[dict[int, ClaudeStatus]]] = {}
        self._hooks: asyncio.Queue[HookEvent] = asyncio.Queue()
        self._spool_from: int | None = None  # a Claude pid whose environment names the spool there
        self._spool: str | None = None  # that spool, as the probe found it (the answer socket goes beside it)
        self.answers: RemoteAnswerChannel | None = None  # the answer desk's channel, when it has one
        self._leftovers: set[int] = set()  # remote process groups of hung probes, still to end there
        self.on_notice: Callable[[str], None] = lambda text: None
        self.on_lost: Callable[[], None] = lambda: None

    # -- the connection ---------------------------------------------------------
    async def connect(self) -> ProbeClient:
        """The master and a running probe, started as needed; ``TmuxUnavailable`` saying why otherwise.

        Every step has a time limit, and every failure (a probe that hangs,
        dies or cannot be told what to watch) is a ``TmuxUnavailable``: the
        monitor then marks the rows offline with the reason and tries again
        with its back-off, whatever state the link was left in.
        """
        try:
            await self.link.connect()
        except TmuxUnavailable as exc:
            raise TmuxUnavailable(f"{self.name}: {exc}") from None
        await self._end_leftovers()
        if self.probe is None or not self.probe.running:
            if self.probe is not None:
                await self._close_probe(self.probe)
            probe = ProbeClient(self.server, self._pushed, self._probe_ended)
            try:
                await probe.start()
            except TmuxUnavailable:
                await self._close_probe(probe)
                raise
            except asyncio.CancelledError:  # headspace is stopping: this half-started probe must not stay there
                await self._close_probe(probe, grace=0.0)
                raise
            self.probe = probe
            self.server.mux = ProbeMux(probe)  # control clients and tmux commands on its channel from now on
            try:
                for folder in sorted(self._status_folders):  # a new probe: watch what the old one watched
                    await probe.call("watch_statuses", folder=folder)
                if self._spool_from is not None:
                    self._spool = str(await probe.call("watch_spool", pid=self._spool_from))
            except ProbeError as exc:
                raise TmuxUnavailable(f"{self.name}: {exc}") from None
            await self.open_answers()
        return self.probe

    async def _close_probe(self, probe: ProbeClient, grace: float = CLOSE_GRACE) -> None:
        """Close a probe; a hung one's remote process group is ended through the master (or at the next connect)."""
        await probe.close(grace)
        if probe.leftover is not None:
            self._leftovers.add(probe.leftover)
            probe.leftover = None
            await self._end_leftovers()

    async def _end_leftovers(self) -> None:
        """Kill the remote process groups of hung probes there (SIGKILL: a hung python3 may ignore TERM)."""
        if not self._leftovers or not self.link.connected:
            return
        groups, self._leftovers = sorted(self._leftovers), set()
        line = "; ".join(f"kill -KILL -- -{pid} {pid} 2>/dev/null" for pid in groups) + "; true"
        if not await self.link.run(line):
            log.warning("%s: could not end a hung remote reader (%s)", self.name, ", ".join(map(str, groups)))

    def _probe_ended(self) -> None:
        self._let_go()
        self.on_lost()

    def _let_go(self) -> None:
        """What rode on the probe ends with it: its waiting hooks (Claude's dialogs answer) and its tmux streams."""
        if self.answers is not None:
            self.answers.link_lost()
        mux, self.server.mux = self.server.mux, None
        if mux is not None:
            mux.ended()  # its control clients see the end of their streams

    async def open_answers(self) -> None:
        """Open the answer socket there, beside the spool, once both the probe and the spool are known."""
        if self.answers is not None and self.probe is not None and self.probe.running and self._spool is not None:
            await self.answers.open_on(self.probe, self._spool)

    async def lost(self) -> None:
        """The link dropped (or the probe stopped answering): end the probe and the master; the next discovery connects again."""
        self._let_go()
        probe, self.probe = self.probe, None
        if probe is not None:
            await self._close_probe(probe)
        await self.link.close()

    async def close(self) -> None:
        await self.lost()
        self.link.remove_folder()

    def _pushed(self, message: dict[str, Any]) -> None:
        kind = message.get("push")
        if kind in ("ctl", "ctl_end"):
            if self.server.mux is not None:
                self.server.mux.pushed(message)
        elif kind == "statuses":
            queue = self._status_queues.get(str(message.get("folder")))
            if queue is not None:
                statuses = {}
                for row in message.get("statuses", []):
                    if isinstance(row, dict):
                        status = ClaudeStatus(**row)
                        statuses[status.pid] = status
                queue.put_nowait(statuses)
        elif kind == "gone":
            self._gone.update(int(pid) for pid in message.get("pids", []))
        elif kind == "hooks":
            for name, record in message.get("events", []):
                if isinstance(record, dict):
                    event = HookEvent.from_record(str(name), record)
                    if event.pane_id:
                        event = HookEvent.from_record(str(name), {**record, "tmux_pane": self.server.address(event.pane_id)})
                    self._hooks.put_nowait(event)
        elif kind == "notice":
            self.on_notice(f"{self.name}: {message.get('text', '')}")
        elif kind in ("answer", "answer_gone") and self.answers is not None and self.probe is not None:
            self.answers.pushed(self.probe, message)

    # -- what the monitor asks --------------------------------------------------
    async def snapshot(self, via: object = None) -> tuple[list[PaneRecord], ProcessTable]:
        """Every pane and the far side's process table (``via``: unused here; the listing goes by the link's own tmux client)."""
        probe = await self.connect()
        records = await asyncio.to_thread(self.server.list_panes)
        try:
            rows = await probe.call("table")
        except ProbeError as exc:
            raise TmuxUnavailable(f"{self.name}: {exc}") from None
        table = ProcessTable.of(ProcessInfo(int(pid), int(ppid), str(comm), tuple(argv), str(started)) for pid, ppid, comm, argv, started in rows)
        return records, table

    async def claude_processes(self, pids: list[int], table: ProcessTable) -> list[ClaudeProcess]:
        if self.probe is None:
            return []
        try:
            rows = await self.probe.call(PROBE_OP, pids=pids)
        except ProbeError as exc:
            log.warning("%s: reading Claude processes failed: %s", self.name, exc)
            return []
        self._gone.difference_update(pids)
        if self._spool_from is None and pids:
            self._spool_from = pids[0]  # its environment says where the hooks write there
            try:
                self._spool = str(await self.probe.call("watch_spool", pid=pids[0]))
            except ProbeError:
                self._spool_from = None
            await self.open_answers()
        return [ClaudeProcess(int(pid), version, Path(folder) if folder else None, binary or "") for pid, version, folder, binary in rows]

    def process_exists(self, pid: int) -> bool:
        return pid not in self._gone  # the probe says when a watched Claude exits

    def socket_file(self) -> str:
        return ""

    def default_config_dir(self) -> Path | None:
        return None  # only what each Claude's own environment says, there

    async def watch_statuses(self, config_dir: Path) -> AsyncIterator[dict[int, ClaudeStatus]]:
        folder = str(config_dir / "sessions")
        queue = self._status_queues.setdefault(folder, asyncio.Queue())
        if folder not in self._status_folders:
            self._status_folders.add(folder)
            if self.probe is not None and self.probe.running:
                await self.probe.call("watch_statuses", folder=folder)
        while True:
            yield await queue.get()

    def answer_channel(self, spool: Path | None) -> MakeChannel:
        """The hooks there, relayed by the probe (the socket sits beside the spool of its Claudes' environment)."""
        return functools.partial(RemoteAnswerChannel, self)

    async def watch_hooks(self, spool: Path | None, *, create: bool = True) -> AsyncIterator[HookEvent]:
        while True:
            yield await self._hooks.get()

    async def statuses(self, config_dir: Path) -> dict[int, ClaudeStatus]:
        """The status files of one config dir there, read once (``headspace status``)."""
        probe = await self.connect()
        try:
            rows = await probe.call("statuses", folder=str(config_dir / "sessions"))
        except ProbeError:
            return {}
        found = [ClaudeStatus(**row) for row in rows if isinstance(row, dict)]
        return {status.pid: status for status in found}

    def transcript(self, path: Path) -> RemoteTail:
        return RemoteTail(self, path)

    def trees(self) -> Trees:
        return RemoteTrees(self)

    async def exists(self, path: Path) -> bool:
        if self.probe is None:
            return False
        try:
            return bool(await self.probe.call("exists", path=str(path)))
        except ProbeError:
            return False

    async def session_usage(self, family: str, pid: int) -> Usage | None:
        """Read by the probe where the agent runs: it sends the numbers."""
        if self.probe is None:
            return None
        try:
            return Usage.from_row(await self.probe.call("usage", family=family, pid=pid))
        except (ProbeError, TimeoutError):
            return None

    async def record_path(self, family: str, pid: int) -> str | None:
        """Not asked there: a Codex hook's call on another host is not placed (its dialog is answered by keys)."""
        return None


class RemoteTrees(Trees):
    """Snapshots and diffs taken on the host by its probe (probe_changes.py): git runs there, the diff comes back capped."""

    def __init__(self, host: RemoteHost) -> None:
        self.host = host

    async def snapshot(self, folder: str) -> str:
        return str(await self._call("work_snapshot", folder=folder))

    async def diff(self, folder: str, old: str, new: str) -> Diff:
        try:
            return Diff.from_dict(await self._call("work_diff", folder=folder, old=old, new=new))
        except ValueError as exc:
            raise ChangeError(f"{self.host.name}: {exc}") from None

    async def _call(self, op: str, **args: Any) -> Any:
        probe = self.host.probe
        if probe is None:
            raise ChangeError(f"{self.host.name}: its reader is not running")
        try:
            return await probe.call(op, timeout=TREE_TIMEOUT, **args)
        except ProbeError as exc:
            raise ChangeError(str(exc)) from None
