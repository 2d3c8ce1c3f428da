"""The probe running on one remote host, as headspace talks to it: requests, their answers, what it pushes.

One python3 there (started through ssh with the bundle: bundle.py, probe.py)
answers JSON requests one line each and pushes what changes.  Its own
module because two users need it and neither owns it: ``RemoteHost``
(host.py) starts and replaces it, and the answer channel (answers.py)
sends the desk's decisions through it, and ``ProbeError`` is what both
catch.  (They used to import each other for it.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shlex
from collections.abc import Callable
from typing import Any

from ..shared.lifeline import die_with_parent, end
from ..tmux.server import TmuxUnavailable
from .bundle import BOOT, bundle_line
from .ssh import SshTmuxServer, ssh_reason

CALL_TIMEOUT = 10.0
# Starting the reader is three waits.  The remote shell says its pid (PID_TAG) within PROBE_START s
# (a new channel, a login shell reading its rc files on a slow or loaded host).  Then python3 says
# it runs (``{"boot": 1}``, BOOT's first line) within PYTHON_START s, or it is taken as hung: short,
# so that a host whose python3 hangs is retried soon enough to be back within 10 s of the fault's
# end (an attempt in flight, the retry pace, a start).  Then the bundle (~200 KB) travels and runs,
# with PROBE_START s for it: a slow link has them.
PYTHON_START = 4.0
PROBE_START = 10.0
PID_TAG = "headspace-probe-pid"
CLOSE_GRACE = 2.0  # seconds a probe whose stdin closed has to end by itself; then it is hung, and killed
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
        waited = 0.0
        try:
            waited = PROBE_START
            first = await asyncio.wait_for(self._shell(), PROBE_START)
            waited = PYTHON_START
            hello = await asyncio.wait_for(self._booted(first), PYTHON_START)
            if isinstance(hello, dict) and hello.get("boot"):
                waited = PROBE_START
                hello = await asyncio.wait_for(self._hello(), PROBE_START)
            waited = 0.0
        except TimeoutError:
            hello = None
        except (ConnectionError, BrokenPipeError, ValueError):
            hello, waited = None, 0.0
        if not isinstance(hello, dict) or "ok" not in hello:
            reason = hello.get("fatal") if isinstance(hello, dict) else None
            if reason is None and waited:
                reason = f"the remote reader did not start (python3 there gave no answer in {waited:g}s)"
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

    async def _shell(self) -> bytes | None:
        """The remote shell's pid line (noted); a first line that is not one is returned to be read as python3's."""
        assert self._proc is not None and self._proc.stdout is not None
        first = await self._proc.stdout.readline()
        if first.startswith(PID_TAG.encode() + b" "):
            with contextlib.suppress(ValueError):
                self.remote_pid = int(first.split()[1])
            return None
        return first

    async def _booted(self, first: bytes | None) -> Any:
        """python3's first line (``{"boot": 1}``: it runs), or what it said instead."""
        assert self._proc is not None and self._proc.stdout is not None
        if first is None:
            first = await self._proc.stdout.readline()
        return json.loads(first) if first else None

    async def _hello(self) -> Any:
        """The bundle sent and started; the probe's answer to ``hello``."""
        assert self._proc is not None and self._proc.stdin is not None and self._proc.stdout is not None
        with contextlib.suppress(ConnectionError):  # a python3 too old has said so and left: its words are read below
            self._proc.stdin.write(bundle_line())
            self._proc.stdin.write(b'{"id": 0, "op": "hello"}\n')
            await self._proc.stdin.drain()
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

    async def close(self, grace: float = CLOSE_GRACE) -> None:
        """End the probe here; when it did not end by itself, ``leftover`` is its remote process group.

        Closing stdin ends a healthy probe there (and then its ssh session
        here).  A probe that does not end within ``grace`` is hung: its ssh is
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
