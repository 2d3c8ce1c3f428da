"""A remote host: another machine's tmux server and Claude files, reached through SSH.

It answers the monitor's questions as ``LocalHost`` does (service/host.py), so one
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
import contextlib
import dataclasses
import functools
import json
import logging
import shlex
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from ..detect.claude.process import ClaudeProcess
from ..detect.claude.status_files import ClaudeStatus
from ..detect.turns import ToolOutcome, Turn
from ..hooks.channel import MakeChannel
from ..hooks.spool import HookEvent
from ..shared.config import HostSpec
from ..shared.lifeline import die_with_parent, end
from ..shared.proctree import ProcessInfo, ProcessTable
from ..tmux.server import PaneRecord, TmuxUnavailable
from .answers import RemoteAnswerChannel
from .bundle import BOOT, bundle_line
from .mux import ProbeMux
from .ssh import SshLink, SshTmuxServer, ssh_reason

CALL_TIMEOUT = 10.0
PROBE_START = 10.0  # seconds for python3 to start there and read the bundle (a hung one is a row within 20 s)
PID_TAG = "headspace-probe-pid"
# A ``hello`` this often, answered by the probe's own request loop: the one proof that loop
# still runs.  Its host's tmux now travels on the probe too, so a hung probe also silences the
# control clients whose notifications used to start a discovery that found it out; without
# this, a probe stopped there (SIGSTOP, a wedged NFS read) kept its rows "live" for good.
KEEP_ALIVE = 10.0
KEEP_ALIVE_ANSWER = 5.0  # ...and the seconds it may take (an answer is microseconds; a busy loop, a slow transcript read, well under this)
MAX_LINE = 64 << 20  # a probe answer larger than this ends the probe (a transcript chunk is at most a few MB)

log = logging.getLogger(__name__)


class ProbeError(Exception):
    """The probe could not answer (it is gone, or it said why)."""


class ProbeClient:
    """The probe running on one host: requests and their answers, and what it pushes."""

    def __init__(self, server: SshTmuxServer, on_push: Callable[[dict[str, Any]], None], on_end: Callable[[], None]) -> None:
        self.server = server
        self.on_push = on_push
        self.on_end = on_end
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next = 0
        self._stderr: asyncio.Task | None = None
        self._keeper: asyncio.Task | None = None
        self._errors = bytearray()
        self.remote_pid: int | None = None  # the remote shell's pid = its process group (see ``start``)
        self.leftover: int | None = None  # a remote process group still to end (see ``close``)
        # It did not answer in time (a keep-alive or a call): alive there, answering nothing.  Its ssh
        # here may still end by itself when closed, which proves nothing about the python3 there.
        self.hung = False
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def running(self) -> bool:
        """Its ssh runs, its output is read, and it answered in time (a hung probe is replaced at the next connect)."""
        return not self.hung and self._proc is not None and self._proc.returncode is None and self._reader is not None and not self._reader.done()

    async def start(self) -> None:
        """Start python3 there with the bundle; ``TmuxUnavailable`` saying why if it does not answer in time.

        The remote shell says its pid first: sshd makes each session's command
        a process-group leader, so that pid is the group a hung python3 (and
        whatever it started) can be ended by, from here, through the master.
        """
        name = self.server.link.spec.name
        self.loop = asyncio.get_running_loop()
        self._proc = await asyncio.create_subprocess_exec(
            *self.server.link.shell_command(f'echo "{PID_TAG} $$"; exec ' + shlex.join(["python3", "-u", "-c", BOOT])),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=MAX_LINE,
            start_new_session=True,
            preexec_fn=die_with_parent(),
        )
        self._stderr = asyncio.create_task(self._keep_stderr())
        timed_out = False
        try:
            hello = await asyncio.wait_for(self._hello(), PROBE_START)
        except TimeoutError:
            hello, timed_out = None, True
        except (ConnectionError, BrokenPipeError, ValueError):
            hello = None
        if not isinstance(hello, dict) or "ok" not in hello:
            reason = hello.get("fatal") if isinstance(hello, dict) else None
            if reason is None and timed_out:
                reason = f"the remote reader did not start (python3 there gave no answer in {PROBE_START:g}s)"
            elif reason is None:
                await asyncio.wait({self._stderr}, timeout=1.0)  # its last words are in flight: a moment, never more
                text = bytes(self._errors).decode("utf-8", "replace")
                if "python3" in text and ("not found" in text or "No such file" in text):
                    reason = "python3 is not installed there (it runs headspace's reader); install python3 3.9+"
                else:
                    reason = f"the remote reader did not start ({ssh_reason(text) or 'no answer'})"
            await self.close()
            raise TmuxUnavailable(f"{name}: {reason}")
        self._reader = asyncio.create_task(self._read_loop())
        self._keeper = asyncio.create_task(self._keep_alive())

    async def _keep_alive(self) -> None:
        """A ``hello`` every ``KEEP_ALIVE`` s; a probe that does not answer it in ``KEEP_ALIVE_ANSWER`` s is told as lost.

        ``on_end`` makes the monitor mark the rows offline and reconnect, so a
        hung probe is noticed within 15 s whatever else is (not) happening.  It
        also keeps the probe from ending itself (``probe.IDLE_EXIT``) on an
        idle host, whose discovery is rare (monitor.REMOTE_DISCOVERY_INTERVAL).
        Six tiny lines a minute: nothing next to ssh's own keepalive.
        """
        while self.running:
            await asyncio.sleep(KEEP_ALIVE)
            try:
                await self.call("hello", timeout=KEEP_ALIVE_ANSWER)
            except ProbeError:
                if self._proc is not None and self._proc.returncode is None:  # not ended or closed meanwhile
                    self.hung = True  # not running now; closing it ends its group there too
                    self.on_end()
                return

    async def _hello(self) -> Any:
        assert self._proc is not None and self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(bundle_line())
        self._proc.stdin.write(b'{"id": 0, "op": "hello"}\n')
        await self._proc.stdin.drain()
        first = await self._proc.stdout.readline()
        if first.startswith(PID_TAG.encode() + b" "):
            with contextlib.suppress(ValueError):
                self.remote_pid = int(first.split()[1])
            first = await self._proc.stdout.readline()
        return json.loads(first) if first else None

    async def _keep_stderr(self) -> None:
        """Keep the last few KB of what the remote side says on stderr, read as it comes (never waited for)."""
        assert self._proc is not None and self._proc.stderr is not None
        stream = self._proc.stderr
        with contextlib.suppress(ConnectionError, ValueError):
            while chunk := await stream.read(4096):
                self._errors += chunk
                del self._errors[: max(0, len(self._errors) - 4096)]

    async def call(self, op: str, timeout: float = CALL_TIMEOUT, **args: Any) -> Any:
        if not self.running or self._proc is None or self._proc.stdin is None:
            raise ProbeError("the remote reader is not running")
        self._next += 1
        ident = self._next
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            self._proc.stdin.write((json.dumps({"id": ident, "op": op, **args}) + "\n").encode())
            await self._proc.stdin.drain()
            return await asyncio.wait_for(future, timeout)
        except (ConnectionError, BrokenPipeError):
            raise ProbeError("the remote reader went away") from None
        except TimeoutError:
            self.hung = True
            raise ProbeError(f"the remote reader did not answer {op} in {timeout:g}s") from None
        finally:
            self._pending.pop(ident, None)

    def notify(self, op: str, **args: Any) -> None:
        """A request that gets no answer (a tmux stream's input or acknowledgement: mux.py), written now."""
        if not self.running or self._proc is None or self._proc.stdin is None:
            raise ConnectionError("the remote reader is not running")
        self._proc.stdin.write((json.dumps({"op": op, **args}) + "\n").encode())

    async def drain(self) -> None:
        if self._proc is not None and self._proc.stdin is not None:
            try:
                await self._proc.stdin.drain()
            except (ConnectionError, BrokenPipeError):
                raise BrokenPipeError("the remote reader went away") from None

    def call_from_thread(self, op: str, **args: Any) -> Any:
        """``call`` from a worker thread (the transcript reader), waited for there."""
        if self.loop is None:
            raise ProbeError("the remote reader is not running")
        return asyncio.run_coroutine_threadsafe(self.call(op, **args), self.loop).result(CALL_TIMEOUT + 1)

    async def _read_loop(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout  # held: close() clears _proc while the last lines may still be read
        try:
            while True:
                line = await stdout.readline()
                if not line:
                    break
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                if "push" in message:
                    try:
                        self.on_push(message)
                    except Exception:
                        log.exception("a push from the remote reader failed")
                    continue
                future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
                if future is None or future.done():
                    continue
                if "error" in message:
                    future.set_exception(ProbeError(str(message["error"])))
                else:
                    future.set_result(message.get("ok"))
        except (ConnectionError, ValueError):  # ValueError: a line over MAX_LINE
            pass
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ProbeError("the remote reader ended"))
            self.on_end()

    async def close(self, grace: float = 2.0) -> None:
        """End the probe here; when it did not end by itself, ``leftover`` is its remote process group.

        Closing stdin ends a healthy probe there (and then its ssh session
        here).  A probe that does not end within 2 s is hung: its ssh is
        killed here, and the remote group is left for ``RemoteHost`` to kill
        through the master, now or on the next connection.
        """
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if not await end(proc, grace) or self.hung:  # a hung one's python3 there is ended whatever its ssh did here
            self.leftover = self.remote_pid
        self._proc = proc  # kept for its exit status; running is False now
        tasks = [t for t in (self._reader, self._stderr, self._keeper) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()  # the master may hold these pipes open: they are never waited for
        await asyncio.gather(*tasks, return_exceptions=True)


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
    plain = {k: v for k, v in row.items() if k in _TURN_FIELDS}
    return Turn(**{**plain, "tool_uses": uses, "tool_use_ids": ids, "outcomes": outcomes})


_TURN_FIELDS = {f.name for f in dataclasses.fields(Turn)}


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

    async def _close_probe(self, probe: ProbeClient, grace: float = 2.0) -> None:
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
    async def snapshot(self) -> tuple[list[PaneRecord], ProcessTable]:
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
            rows = await self.probe.call("claude", pids=pids)
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

    async def exists(self, path: Path) -> bool:
        if self.probe is None:
            return False
        try:
            return bool(await self.probe.call("exists", path=str(path)))
        except ProbeError:
            return False
