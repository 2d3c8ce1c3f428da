"""A control client without a ``tmux -C`` process: tmux's own client protocol, identify in one write.

Why: tmux before 3.7 crashes its server (every session, every agent in it)
when a session or window notification reaches a control client between its
first identify message (``MSG_IDENTIFY_FLAGS``, which marks it a control
client) and its last (``MSG_IDENTIFY_DONE``, which creates its control
state): ``control_write`` on a NULL state, "segfault at 20" (fixed upstream
in tmux 3.7 by PRs #4980 and #5004).  The stock ``tmux -C`` client sends its
identify in three writes, because each of its two file descriptors (stdin,
stdout) travels in a write of its own and a Unix socket read stops after a
descriptor.  The server reads the first write (flags included), goes round
its event loop (running whatever else is ready: another client's
``kill-session``, a job's end), and only then reads the rest.  Under load
the client may also be descheduled between its writes.  That is the window.

This module attaches the same control client by speaking the protocol
itself, in the one order that leaves no window: the two descriptors first,
each alone (the server only notes them; a client without flags is no
control client yet and gets no notifications), then flags, the rest of the
identify, ``MSG_IDENTIFY_DONE`` and the ``attach-session`` command in a
single write, which the server reads and dispatches in one go, with no turn
of its loop in between (proc.c: one ``imsg_read``, then every message it
holds).  Nothing else differs from ``tmux -C``: the server reads commands
from and writes control-mode lines to the descriptor we passed (one end of a
socketpair; ``DirectPipe`` is the other), and the client ends as a killed
``tmux -C`` client does: its protocol socket closes (``DirectPipe.end``).

The messages (identify.py) are tmux's ``tmux-protocol.h`` (protocol version 8, tmux 2.4
to 3.7c and later, the same numbers and flags throughout); each size is
exactly what the server checks (a wrong size there is a ``fatalx``: the
server exits), which tests/e2e/test_direct_attach.py proves against the real
server.  Used only for the releases that have the bug (``wanted``); from 3.7
on, and whenever this fails to connect, the stock client is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

from .control_pipe import LINE_LIMIT, at_eof
from .identify import goodbye, identify_on

EXIT_WAIT = 1.0  # after the server let the client go, how long its last lines may take to arrive


class DirectPipe:
    """A control client attached without a tmux process (``ControlPipe``, control_pipe.py).

    ``stdout``/``write`` are our end of the socketpair whose other end the
    server reads commands from and writes control-mode lines to; ``_peer`` is
    the protocol socket, which must stay open while the client lives (its
    end is the client's end) and answers the server's goodbye as ``tmux``
    does (``MSG_EXITING``).  Every such client identifies with headspace's
    own pid, so ``list-clients`` names them all ``client-<pid>`` (a stock
    client has a pid of its own); nothing of headspace targets a client by
    that name.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, peer: socket.socket) -> None:
        self._reader = reader
        self._writer = writer
        self._peer = peer
        self._ended = asyncio.Event()
        self._talk = asyncio.create_task(self._listen())

    @property
    def stdout(self) -> asyncio.StreamReader:
        return self._reader

    @property
    def running(self) -> bool:
        return not self._ended.is_set()

    def write(self, data: bytes) -> None:
        if self._writer.is_closing():
            raise BrokenPipeError("tmux control client ended")
        self._writer.write(data)

    async def drain(self) -> None:
        await self._writer.drain()

    @property
    def detaches(self) -> bool:
        return False  # cut off (end)

    async def end(self, grace: float) -> None:
        """Cut the client off: the protocol socket closed first (tmux frees the client), ours once tmux has let go (or after ``grace`` s).

        Never "close its input and read what it still says": that detach is
        what tmux (3.3a to 3.7 at least) mishandles under load, exiting with
        ``fatal: not enough data`` (control_pipe.ProcessPipe tells the whole
        of it).  A client whose protocol socket closed is freed at once,
        without that path, as when a ``tmux`` client process is killed.
        """
        try:
            self._ended.set()
            self._close_peer()  # tmux frees the client, and closes its end of ours
            with contextlib.suppress(TimeoutError):  # what it still says is read (by the client's reader) to that end
                await asyncio.wait_for(at_eof(self._reader), grace)
        finally:
            # Cancelled too (headspace stopping while it waits): our sockets close now, while the
            # loop runs, never later by the collector ("unclosed transport" on the user's terminal).
            self._hang_up()
            self._talk.cancel()
        await asyncio.gather(self._talk, return_exceptions=True)

    def abort(self) -> None:
        """Hang up at once, both sockets: what our crash looks like to tmux (it drops the client)."""
        self._ended.set()
        self._talk.cancel()
        self._close_peer()
        self._writer.transport.abort()

    def _hang_up(self) -> None:
        self._ended.set()
        self._close_peer()
        self._writer.close()

    def _close_peer(self) -> None:
        """Close the protocol socket, first taking it out of the loop's watch.

        ``_listen`` may be waiting on it (``sock_recv``): removing the reader
        cancels that wait's handle, so when the wait is later cancelled the
        loop does not unregister a new socket that got the same descriptor
        number in between (sessions come and go by the second in a storm).
        """
        fd = self._peer.fileno()
        if fd >= 0:
            loop = asyncio.get_running_loop()
            loop.remove_reader(fd)
            loop.remove_writer(fd)
        with contextlib.suppress(OSError):
            self._peer.close()

    async def _listen(self) -> None:
        """The server's messages: a goodbye is answered; its end (or ours) ends the client."""
        loop = asyncio.get_running_loop()
        buffer = bytearray()
        try:
            while True:
                data = await loop.sock_recv(self._peer, 4096)
                if not data:
                    break
                reply, done = goodbye(buffer, data)
                if reply is not None:
                    await loop.sock_sendall(self._peer, reply)
                if done:
                    break
        except (OSError, ValueError):
            pass
        finally:
            self._ended.set()
            self._close_peer()  # as tmux's client exits: the server frees the client and closes its end
        # When the server let the client go by itself (its session killed, say), it wrote every line
        # first (control_all_done): they are read until its end closes, for at most EXIT_WAIT s.
        # (Our own ``end`` closes the protocol socket first, then waits the same way, up to its grace.)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(at_eof(self._reader), EXIT_WAIT)
        self._hang_up()


async def open_direct(socket_file: str, command: list[str]) -> DirectPipe:
    """Attach a control client to the server at ``socket_file`` running ``command``; ``OSError`` if it cannot connect."""
    peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ours: socket.socket | None = None
    try:
        peer.setblocking(False)
        await asyncio.wait_for(asyncio.get_running_loop().sock_connect(peer, socket_file), 2.0)
        peer.settimeout(2.0)  # the writes are small and the socket new: they never wait (identify.send_identify)
        ours = identify_on(peer, command)
        peer.setblocking(False)
        reader, writer = await asyncio.open_unix_connection(sock=ours, limit=LINE_LIMIT)
    except BaseException as exc:  # cancelled too: nothing of this attach is left open
        peer.close()
        if ours is not None:
            ours.close()
        if isinstance(exc, TimeoutError):
            raise OSError("tmux did not answer") from None
        raise
    return DirectPipe(reader, writer, peer)
