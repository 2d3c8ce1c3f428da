"""A real terminal for tests: a tmux client in a pty, attached to a private server."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import termios
import threading

from tests.harness.tmux import PrivateTmux


class Terminal:
    """A real tmux client in a pty, sized like a user's terminal: what a user's terminal is to tmux.

    It counts the bytes tmux sends it and, with ``keep``, keeps them (to see what was sent).
    """

    def __init__(self, tmux: PrivateTmux, session: str, width: int = 120, height: int = 40, *, keep: bool = True, version: str = "") -> None:
        env = {**tmux.env, "TERM": "xterm-256color", "COLUMNS": str(width), "LINES": str(height)}
        env.pop("TMUX", None)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the terminal, running tmux attach
            os.execvpe("tmux", ["tmux", "-L", tmux.name, "attach", "-t", session], env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))
        self._lock = threading.Lock()
        self._count = 0
        self.output: bytearray | None = bytearray() if keep else None  # every byte, to see what was sent
        # What the terminal says it is when tmux asks (XTVERSION, ``ESC [ > q``): tmux's client_termtype.
        # "" answers nothing, as a terminal that does not know the question.
        self.version = version
        self._done = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        # A client whose output nobody reads blocks tmux: keep reading.
        while not self._done.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    return
                if not data:
                    return
                if self.version and b"\x1b[>q" in data:
                    os.write(self.fd, b"\x1bP>|" + self.version.encode() + b"\x1b\\")
                with self._lock:
                    self._count += len(data)
                    if self.output is not None:
                        self.output += data

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    def take(self) -> bytes:
        """The bytes kept since the last ``take`` (and no longer kept): what a test waits on, without keeping a long run's output."""
        with self._lock:
            if self.output is None:
                return b""
            data = bytes(self.output)
            self.output.clear()
            return data

    def type(self, data: bytes) -> None:
        os.write(self.fd, data)

    def close(self) -> None:
        self._done.set()
        try:
            os.kill(self.pid, 15)  # our own child, by its id
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)
