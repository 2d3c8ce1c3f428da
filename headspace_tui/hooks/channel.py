"""headspace's end of the answer hook: a private unix socket where permission requests wait.

Each connection is one answer hook (``program.py answer N``) holding one
PermissionRequest.  It sends one JSON line (its record) and waits for one
line back.  The channel

* serves only this user: the socket lives in the private base folder (the
  spool's parent), is made 0600, and a peer whose uid differs (SO_PEERCRED)
  is closed at once;
* asks ``accept`` whether the request belongs to a pane headspace watches;
  if not, it replies ``{}`` (no decision) at once, so the hook exits and
  Claude's dialog is all there is;
* keeps accepted requests as ``PendingCall`` until one of: ``decide`` (the
  decision is written and the connection closed), ``release`` (``{}``: the
  pane answered, or the dialog went away), or the hook leaving (its own wait
  ran out, Claude's timeout killed it): then ``on_gone`` is told.

Who owns the channel is decided by a lock, not by the socket: the owner
holds ``answer.lock`` (flock) beside it for as long as it runs, and the
kernel lets go of it however the owner ends (``kill -9`` included).  A
second headspace that cannot take the lock leaves the channel to the first
(``ChannelTaken``) and may try again later: once the first is gone the lock
is free, its stale socket is removed and the second takes over.  Two
starting at once cannot both win.

Nothing read is unbounded: at most MAX_CONNECTIONS at once, the request
line is capped (MAX_REQUEST) and must come within READ_TIMEOUT; after it the hook sends nothing, so anything
more than a few bytes ends the connection instead of filling memory (a
client that streamed 300 MB after a valid request grew headspace by 306 MB).
Everything runs on the event loop that called ``start``.  The same class
serves a remote host's hooks there, run by the probe (remote/probe_answers.py)
under the host's own python3, 3.9 or later: hence ``WAIT_ENDED``.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import socket
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ..shared.peer import peer_uid
from ..shared.safe_files import is_private_dir
from .calls import PendingCall

log = logging.getLogger(__name__)

SOCKET_NAME = "answer.sock"
MAX_REQUEST = 2 << 20  # the hook sends at most 1 MB of payload, plus its own fields
READ_TIMEOUT = 5.0  # a connection that says nothing in this long is dropped
MAX_AFTER = 4096  # bytes a hook may send after its request (it sends none) before it is dropped
# Connections open at once: every waiting dialog holds one (a hundred agents, a hundred), so this
# is far above any real use.  More are closed as they come (that hook then says "no decision", and
# Claude's own dialog is all there is): 6,000 idle connections had grown headspace by 36 MB that the
# allocator never gave back.
MAX_CONNECTIONS = 512
LOCK_NAME = "answer.lock"
LOCK_TRIES, LOCK_RETRY = 10, 0.02  # the lock asked for up to ~0.2 s (another start may be sweeping a stale socket)
# What asyncio.wait_for raises when time runs out: the built-in TimeoutError
# from 3.11, asyncio's own before (a remote host's python3 may be 3.9).
WAIT_ENDED = (TimeoutError, asyncio.TimeoutError)


class ChannelUnavailable(Exception):
    """The answer channel cannot be opened; one line for the user."""


class ChannelTaken(ChannelUnavailable):
    """Another headspace, alive, holds the channel (try again later: it may end)."""


def socket_path(spool: Path) -> Path:
    """Where the hook program looks: ``answer.sock`` beside the spool folder."""
    return Path(spool).parent / SOCKET_NAME


def sweep_stale(folder: Path) -> bool:
    """Remove ``answer.sock`` in ``folder`` if its headspace is gone (nobody holds the lock, nobody listens); whether it did.

    A SIGKILLed headspace leaves its socket; the next one to open the
    channel clears it (``_clear_stale``), but a start that opens no channel
    (a thin client of the service) would leave it for good.  The lock is
    held while looking, so a headspace starting at that moment cannot lose
    its new socket to this.
    """
    path = folder / SOCKET_NAME
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        return False  # not ours to touch
    try:
        lock_fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock_fd)
        return False  # a headspace holds the channel: its socket is live
    try:
        if answers(str(path)):
            return False  # someone answers after all: leave it
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(lock_fd)


def answers(path: str) -> bool:
    """Whether anyone listens on the Unix socket at ``path`` (a connect, closed at once; at most half a second)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(path)
    except OSError:
        return False
    finally:
        probe.close()
    return True


class HookChannel(Protocol):
    """What the answer desk uses of a channel: this machine's ``AnswerChannel``, or a remote host's relay (remote/answers.py)."""

    calls: dict[int, PendingCall]

    async def start(self) -> None: ...
    async def close(self) -> None: ...
    def pending(self, pane_id: str) -> list[PendingCall]: ...
    def decide(self, call_id: int, decision: dict[str, Any]) -> bool: ...
    def release(self, call_id: int) -> bool: ...


class MakeChannel(Protocol):
    """How a host makes its channel for a desk (``Host.answer_channel``)."""

    def __call__(self, *, accept: Callable[[PendingCall], bool], on_gone: Callable[[PendingCall], None], clock: Callable[[], float]) -> HookChannel: ...


class AnswerChannel:
    def __init__(
        self,
        path: Path,
        *,
        accept: Callable[[PendingCall], bool],
        on_gone: Callable[[PendingCall], None] = lambda call: None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.accept = accept
        self.on_gone = on_gone
        self.clock = clock
        self.calls: dict[int, PendingCall] = {}
        self._writers: dict[int, asyncio.StreamWriter] = {}
        self._server: asyncio.AbstractServer | None = None
        self._inode: int | None = None
        self._lock_fd: int | None = None
        self._more: list[tuple[Path, asyncio.AbstractServer, int, int]] = []  # listen_also's places
        self._next_id = 0
        self._open = 0  # connections being served now (MAX_CONNECTIONS)
        self.refused = 0  # connections closed for being past it

    # -- opening and closing -------------------------------------------------------
    async def start(self) -> None:
        self._server, self._inode, self._lock_fd = await self._listen(self.path)

    async def listen_also(self, path: Path) -> None:
        """Take requests at ``path`` too: the answer socket beside an agent's spool under another XDG_RUNTIME_DIR.

        Its hooks look for headspace there (``program.py`` computes the
        place from their own environment).  The same rules as ``start``: a
        private folder, its own lock (``ChannelTaken`` when a headspace whose
        own place that is holds it), a stale socket cleared.
        """
        if self._server is None:
            raise ChannelUnavailable("answer channel off")
        if any(extra == Path(path) for extra, *_ in self._more):
            return
        self._more.append((Path(path), *await self._listen(Path(path))))

    async def _listen(self, path: Path) -> tuple[asyncio.AbstractServer, int, int]:
        """Listen at ``path`` under its folder's lock: the server, the socket's inode and the lock's descriptor."""
        folder = path.parent
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise ChannelUnavailable(f"answer channel off: cannot create {folder}: {exc.strerror or exc}") from None
        problem = is_private_dir(folder)
        if problem:
            raise ChannelUnavailable(f"answer channel off: {problem}")
        lock_fd = self._take_lock(folder / LOCK_NAME)
        try:
            await self._clear_stale(path)
            server = await asyncio.start_unix_server(self._serve, path=str(path), limit=MAX_REQUEST)
            os.chmod(path, 0o600)
            return server, os.lstat(path).st_ino, lock_fd
        except OSError as exc:
            os.close(lock_fd)
            raise ChannelUnavailable(f"answer channel off: cannot listen on {path}: {exc.strerror or exc}") from None
        except ChannelUnavailable:
            os.close(lock_fd)  # the kernel lets go of the flock with it
            raise

    def _drop_lock(self) -> None:
        """Let go of the main place's lock (closing its descriptor: the kernel lets go of the flock)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    @staticmethod
    def _take_lock(path: Path) -> int:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise ChannelUnavailable(f"answer channel off: cannot open {path}: {exc.strerror or exc}") from None
        # A few tries: ``sweep_stale`` (another headspace starting) holds the lock for a moment while
        # it looks at a stale socket; only a lock held for longer is another headspace's channel.
        for attempt in range(LOCK_TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except OSError:
                if attempt + 1 < LOCK_TRIES:
                    time.sleep(LOCK_RETRY)
        os.close(fd)
        raise ChannelTaken("answer channel off: another headspace is answering hooks on this machine")

    @staticmethod
    async def _clear_stale(path: Path) -> None:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
            raise ChannelUnavailable(f"answer channel off: {path} is not a socket of yours; remove it")
        if not answers(str(path)):
            os.unlink(path)  # nobody listens: a headspace that died
            return
        raise ChannelTaken("answer channel off: another headspace is answering hooks on this machine")

    async def close(self) -> None:
        """Stop listening; every waiting hook gets "no decision" (Claude's dialog stays)."""
        for call_id in list(self._writers):
            self.release(call_id)
        places = [(self.path, self._server, self._inode, self._lock_fd), *self._more]
        self._server, self._inode, self._lock_fd, self._more = None, None, None, []
        for path, server, inode, lock_fd in places:
            if server is not None:
                server.close()
            try:
                if inode is not None and os.lstat(path).st_ino == inode:
                    os.unlink(path)  # ours still, not a newer headspace's
            except OSError:
                pass
            if lock_fd is not None:
                os.close(lock_fd)  # the kernel lets go of the flock with it

    # -- one hook ------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._open >= MAX_CONNECTIONS:
            self.refused += 1
            writer.close()
            return
        self._open += 1
        call: PendingCall | None = None
        try:
            if peer_uid(writer.get_extra_info("socket")) not in (None, os.getuid()):
                return
            try:
                line = await asyncio.wait_for(reader.readline(), READ_TIMEOUT)
                record = json.loads(line.decode("utf-8", "replace"))
            except (*WAIT_ENDED, ValueError, asyncio.LimitOverrunError, ConnectionError):
                return
            self._next_id += 1
            call = PendingCall.from_payload(self._next_id, record, self.clock())
            if call is not None:
                # Pending before it is accepted: the desk looks at the pane's dialog as it accepts, and a dialog drawn
                # before the hook came is read no more (it holds still), so a call it could not see then stayed untagged.
                self.calls[call.id] = call
                self._writers[call.id] = writer
            if call is None or not self.accept(call):
                if call is not None:
                    self.calls.pop(call.id, None)
                    self._writers.pop(call.id, None)
                call = None
                writer.write(b"{}\n")
                return
            extra = 0
            try:
                while extra <= MAX_AFTER:  # until the hook goes (or we close it); it sends nothing more
                    chunk = await reader.read(MAX_AFTER)
                    if not chunk:
                        break
                    extra += len(chunk)
            except ConnectionError:
                pass
            if extra > MAX_AFTER:
                log.warning("answer hook connection dropped: %d bytes after its request", extra)
                self.release(call.id)
        finally:
            self._open -= 1
            if call is not None and self.calls.pop(call.id, None) is not None:
                self._writers.pop(call.id, None)
                self.on_gone(call)
            writer.close()

    # -- answering -------------------------------------------------------------------
    def pending(self, pane_id: str) -> list[PendingCall]:
        """The requests from ``pane_id`` still waiting, oldest first."""
        return [c for c in self.calls.values() if c.pane_id == pane_id]

    def decide(self, call_id: int, decision: dict[str, Any]) -> bool:
        """Hand ``decision`` to the waiting hook; False when it is no longer waiting."""
        return self._reply(call_id, {"decision": decision})

    def release(self, call_id: int) -> bool:
        """Let the hook go without a decision (the pane answered, or the request is void)."""
        return self._reply(call_id, {})

    def _reply(self, call_id: int, message: dict[str, Any]) -> bool:
        writer = self._writers.pop(call_id, None)
        self.calls.pop(call_id, None)
        if writer is None or writer.is_closing():
            return False
        try:
            writer.write(json.dumps(message).encode() + b"\n")
            writer.close()
        except (OSError, RuntimeError):
            return False
        return True
