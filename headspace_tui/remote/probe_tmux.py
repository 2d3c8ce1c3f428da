"""The remote's tmux, run by the probe: every control client and tmux command over its one channel.

Without this, each watched session of a remote host had its own SSH
session channel (``ssh … tmux -C attach-session``), and every
``list-panes``, capture or key was one more short channel; past sshd's
``MaxSessions`` (10) OpenSSH opens extra connections.  Here the probe
starts the control clients itself (attached directly where that tmux has
its identify crash, tmux/identify.py; elsewhere ``tmux -C attach-session
…`` children over pipes, on the remote) and carries their bytes as numbered streams on
the probe's JSON lines, next to the one-shot tmux commands.  Headspace's
``ControlClient`` reads a stream exactly as it reads a ``tmux -C`` pipe
(remote/mux.py); nothing of tmux's protocol is parsed here.

Requests (from headspace; ``ctl_in``, ``ctl_ack`` and ``ctl_close`` get no answer):

* ``{"id", "op": "tmux", "args": [...]}``: run ``tmux args`` there, answer
  ``{"rc", "out", "err"}`` (in a small pool of threads: a slow capture must
  not hold back the streams' input and acks);
* ``{"id", "op": "ctl_open", "ch": N, "args": [...], "env": [names]}``:
  start ``tmux args`` as stream N with only those environment variables;
* ``{"op": "ctl_in", "ch": N, "data": B64}``: bytes for its input;
* ``{"op": "ctl_ack", "ch": N, "n": bytes}``: headspace took that much;
* ``{"op": "ctl_close", "ch": N}``: cut it off (its process killed, or a
  direct client's protocol socket shut: ``Stream.close``; no answer either).

When the probe ends (stdin closed, or idle), ``close_all`` ends every
client the same way before it exits: none outlives it.

Pushes: ``{"push": "ctl", "ch": N, "data": B64}`` (at most ``CHUNK`` bytes
each) and ``{"push": "ctl_end", "ch": N}`` once, after its last bytes.

Flow control: a stream may have at most ``WINDOW`` bytes sent and not yet
acknowledged; past that its reader stops reading tmux's pipe, the pipe
fills, and tmux itself holds the output back (and pauses the pane after
``pause-after``, as for a slow local client).  So the probe holds at most
one chunk per stream, a flooding session has at most ``WINDOW`` bytes on
the wire, and the others' chunks (each at most ``CHUNK``) take turns with
it on the channel.  Standard library only, Python 3.9+ (it runs there).

What remains per session: one ``tmux -C`` client process there (a child
of the probe, in its process group, so it ends with it: its input closes)
or, attached directly, two sockets of the probe's,
two threads here in the probe, and one ``MuxPipe`` and ``ControlClient``
in headspace.  No ssh process, channel or connection.  Still outside the
channel: ``Enter`` on a remote row (an interactive ``ssh -t … tmux attach``
needs a terminal of its own), and ssh commands run before the probe
answers or from the probe's own event loop (``SshTmuxServer.execute``).
"""

from __future__ import annotations

import base64
import contextlib
import os
import queue
import socket
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Union

from ..tmux.identify import chosen, goodbye, identify_on, socket_file

CHUNK = 16 << 10  # bytes per pushed chunk: another stream's turn comes after at most this much
WINDOW = 128 << 10  # bytes a stream may have in flight (sent, not acknowledged)
MAX_STREAMS = 256  # more sessions than this on one host are not attached (a runaway would be)
RUN_TIMEOUT = 10.0  # a one-shot tmux command (as TmuxServer.run here)
CLOSE_GRACE = 2.0
ONE_SHOT_WORKERS = 4
OPS = frozenset({"tmux", "ctl_open", "ctl_in", "ctl_ack", "ctl_close"})
LATER = object()  # handle's answer when the reply is sent by a worker once it is done


class DirectClient:
    """A control client the probe attached itself (tmux/identify.py): as much of a ``Popen`` as ``Stream`` uses.

    Its output and input are our end of the socketpair the server reads and
    writes; the protocol socket answers the server's goodbye and its end is
    the client's end (``wait``).
    """

    def __init__(self, ours: socket.socket, peer: socket.socket) -> None:
        self.stdout = ours
        self.stdin = _SocketInput(ours)
        self._ours = ours
        self._peer = peer
        self._done = threading.Event()
        threading.Thread(target=self._listen, daemon=True).start()

    def _listen(self) -> None:
        buffer = bytearray()
        try:
            while True:
                data = self._peer.recv(4096)
                if not data:
                    break
                reply, done = goodbye(buffer, data)
                if reply is not None:
                    self._peer.sendall(reply)
                if done:
                    break
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                self._peer.close()  # the server frees the client and closes its end: the output ends
            self._done.set()

    def wait(self, timeout: float | None = None) -> int:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired("tmux", timeout or 0)
        return 0

    def kill(self) -> None:
        """Hang up the protocol socket only: tmux frees the client (as for a killed ``tmux`` process) and closes its end of the output."""
        with contextlib.suppress(OSError):
            self._peer.shutdown(socket.SHUT_RDWR)
        self._done.set()


class _SocketInput:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def write(self, data: bytes) -> None:
        self._sock.sendall(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)  # tmux reads the end of its input: it detaches the client


Client = Union[subprocess.Popen, DirectClient]  # noqa: UP007 (an alias is evaluated: the remote may run Python 3.9)


class Stream:
    """One control client there: its output pumped out under the window, its input written in order."""

    def __init__(self, number: int, proc: Client, send: Callable[[dict[str, Any]], None], gone: Callable[[int], None]) -> None:
        self.number = number
        self.proc = proc
        self._send = send
        self._gone = gone
        self._credit = WINDOW
        self._closing = False
        self._turn = threading.Condition()
        self._input: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump_out, daemon=True).start()
        threading.Thread(target=self._pump_in, daemon=True).start()

    def acknowledge(self, size: int) -> None:
        with self._turn:
            self._credit = min(WINDOW, self._credit + max(0, size))
            self._turn.notify()

    def write(self, data: bytes) -> None:
        self._input.put(data)

    def close(self) -> threading.Thread:
        """End it by cutting it off; the returned reaper waits for its end (and kills it if it has not ended within CLOSE_GRACE).

        Cut off, never detached: tmux (3.3a to 3.7 at least) exits with
        ``fatal: not enough data`` when, in one turn of its loop, a control
        client's input ends while output is queued for it, a busy pane
        writes more (tmux marks that output read for a client on its way
        out) and the client's output has room (tmux then writes the queued
        output it no longer has).  A flooding pane and an ending client were
        enough to take the user's whole server (found by
        tests/unit/test_probe_tmux_end.py under load).  A client whose
        process (or, attached directly, whose protocol socket) goes is freed
        by tmux at once, without that path; its input closes after, once
        tmux has let go of it, and what it still says until then is read
        and dropped.
        """
        with self._turn:
            self._closing = True  # what it still says is read and dropped, whatever the window
            self._turn.notify()
        with contextlib.suppress(OSError):
            self.proc.kill()  # tmux frees the client; its output ends, then _pump_out closes its input
        reaper = threading.Thread(target=self._reap, daemon=True)
        reaper.start()
        return reaper

    def _reap(self) -> None:
        """Wait for it to exit (reaped here, never left a zombie); killed if it has not within CLOSE_GRACE."""
        try:
            self.proc.wait(CLOSE_GRACE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _pump_out(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        try:
            while True:
                with self._turn:
                    while self._credit <= 0 and not self._closing:
                        self._turn.wait()
                    want = CHUNK if self._closing else min(CHUNK, self._credit)
                data = os.read(fd, want)
                if not data:
                    break
                with self._turn:
                    if self._closing:
                        continue
                    self._credit -= len(data)
                self._send({"push": "ctl", "ch": self.number, "data": base64.b64encode(data).decode("ascii")})
        except OSError:
            pass
        finally:
            self._input.put(None)
            with contextlib.suppress(OSError):
                self.proc.stdout.close()  # read to its end: ours to close (a direct client's socket above all)
            self._gone(self.number)
            with contextlib.suppress(OSError, ValueError):  # the probe's own output gone (headspace went): still reaped
                self._send({"push": "ctl_end", "ch": self.number})
            self._reap()  # its output ended: it is exiting

    def _pump_in(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        while True:
            data = self._input.get()
            if data is None:
                break
            try:
                stdin.write(data)
                stdin.flush()
            except (OSError, ValueError):
                break
        try:
            stdin.close()
        except OSError:
            pass


class TmuxMux:
    """The probe's side of headspace's tmux: streams by number, and one-shot commands."""

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._streams: dict[int, Stream] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(ONE_SHOT_WORKERS)
        self._version: str | None = None
        self._pool.submit(self.version)  # asked now, off the request loop: the first attach must not wait on it

    def handle(self, request: dict[str, Any]) -> Any:
        op = request.get("op")
        if op == "ctl_in":
            stream = self._stream(request)
            if stream is not None:
                stream.write(base64.b64decode(str(request.get("data", ""))))
            return None
        if op == "ctl_ack":
            stream = self._stream(request)
            if stream is not None:
                stream.acknowledge(int(request.get("n", 0)))
            return None
        if op == "ctl_open":
            return self._open(int(request["ch"]), _words(request.get("args")), _words(request.get("env")), str(request.get("attach", "")))
        if op == "ctl_close":
            stream = self._stream(request)
            if stream is not None:
                stream.close()
            return True
        if op == "tmux":
            args = _words(request.get("args"))
            ident = request.get("id")
            self._pool.submit(self._run, ident, args)
            return LATER
        raise ValueError(f"unknown op {op!r}")

    def _stream(self, request: dict[str, Any]) -> Stream | None:
        with self._lock:
            return self._streams.get(int(request.get("ch", -1)))

    def _open(self, number: int, args: list[str], keep: list[str], attach: str = "") -> bool:
        with self._lock:
            if number in self._streams:
                raise ValueError(f"stream {number} is open already")
            if len(self._streams) >= MAX_STREAMS:
                raise ValueError(f"{MAX_STREAMS} tmux control clients are open already")
        env = {name: value for name, value in os.environ.items() if name in keep}
        proc = self._direct(args, attach) or subprocess.Popen(["tmux", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0)
        with self._lock:
            self._streams[number] = Stream(number, proc, self._send, self._forget)
        return True

    def _direct(self, args: list[str], attach: str) -> DirectClient | None:
        """``tmux … -C command`` attached without a tmux process, where this tmux has the identify crash; None: use tmux.

        ``attach`` is headspace's ``HEADSPACE_TMUX_ATTACH`` (ssh does not carry
        the variable here): the benchmarks' choice reaches remote hosts too.
        """
        if "-C" not in args or not chosen(self.version(), {"HEADSPACE_TMUX_ATTACH": attach}):
            return None
        split = args.index("-C")
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            peer.settimeout(2.0)
            peer.connect(socket_file(args[:split], os.environ, os.getuid()))
            ours = identify_on(peer, args[split + 1 :])
            peer.settimeout(None)
        except (OSError, ValueError):
            peer.close()
            return None
        return DirectClient(ours, peer)

    def version(self) -> str:
        """``tmux -V`` there (asked once); "" if it cannot say."""
        if self._version is None:
            try:
                self._version = subprocess.run(["tmux", "-V"], capture_output=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL).stdout.decode("utf-8", "replace").strip()
            except (OSError, subprocess.SubprocessError):
                self._version = ""
        return self._version

    def close_all(self) -> None:
        """End every control client before the probe exits: each cut off (``Stream.close``), its output drained to its end.

        Left to the probe's exit, a client whose output headspace had stopped
        taking (its window spent) outlived it: tmux 3.3a waits to flush a
        control client's output before letting it go, nobody was left to
        read it, and the server then ignored ``kill-server``.  A client cut
        off is let go at once.
        """
        with self._lock:
            streams = list(self._streams.values())
        for reaper in [stream.close() for stream in streams]:  # all at once: their graces run side by side
            reaper.join()
        self._pool.shutdown(wait=False)

    def _forget(self, number: int) -> None:
        with self._lock:
            self._streams.pop(number, None)

    def _run(self, ident: Any, args: list[str]) -> None:
        try:
            proc = subprocess.run(["tmux", *args], capture_output=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL, env=dict(os.environ))
            answer: dict[str, Any] = {"id": ident, "ok": {"rc": proc.returncode, "out": proc.stdout.decode("utf-8", "replace"), "err": proc.stderr.decode("utf-8", "replace")}}
        except subprocess.TimeoutExpired:
            answer = {"id": ident, "error": f"TimeoutExpired: tmux did not answer within {RUN_TIMEOUT:g}s"}
        except FileNotFoundError:
            answer = {"id": ident, "ok": {"rc": 127, "out": "", "err": "tmux: command not found"}}  # as a shell says it
        except OSError as exc:
            answer = {"id": ident, "error": f"{type(exc).__name__}: {exc}"}
        self._send(answer)


def _words(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise ValueError("expected a list of words")
    return [str(word) for word in value]
