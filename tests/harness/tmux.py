"""A private tmux server for tests: ``tmux -L <unique name>``, never the user's.

The server is started with a clean, explicit environment (``env -i``), so
nothing of the developer's or CI's environment (``CI=true``, ``TMUX``,
``CLAUDE_CONFIG_DIR``, a real API key) leaks into the panes.  ``close`` kills
only this server, by its socket name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# One format string, one round trip: everything the corpus stores about a pane.
PANE_FORMAT = "\t".join(
    [
        "#{pane_id}",
        "#{pane_width}",
        "#{pane_height}",
        "#{cursor_x}",
        "#{cursor_y}",
        "#{alternate_on}",
        "#{pane_title}",
        "#{pane_current_command}",
        "#{pane_pid}",
        "#{pane_dead}",
        "#{pane_dead_status}",
    ]
)


@dataclass(frozen=True)
class PaneInfo:
    pane_id: str
    width: int
    height: int
    cursor_x: int
    cursor_y: int
    alternate_on: bool
    title: str
    current_command: str
    pid: int
    dead: bool
    dead_status: int | None

    @classmethod
    def parse(cls, line: str) -> PaneInfo:
        f = line.split("\t")
        return cls(
            pane_id=f[0],
            width=int(f[1]),
            height=int(f[2]),
            cursor_x=int(f[3]),
            cursor_y=int(f[4]),
            alternate_on=f[5] == "1",
            title=f[6],
            current_command=f[7],
            pid=int(f[8] or 0),
            dead=f[9] == "1",
            dead_status=int(f[10]) if f[10] else None,
        )


class TmuxError(RuntimeError):
    pass


def tmux_binary() -> str:
    path = shutil.which("tmux")
    if path is None:
        raise TmuxError("tmux is not installed (apt-get install tmux)")
    return path


class PrivateTmux:
    """One private tmux server; every command goes to its socket only."""

    def __init__(self, env: dict[str, str], *, name: str | None = None) -> None:
        self.name = name or f"headspace-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.env = dict(env)
        self._binary = tmux_binary()
        self.socket_path = ""

    def run(self, *args: str, check: bool = True, client_env: dict[str, str] | None = None) -> str:
        proc = subprocess.run(
            [self._binary, "-L", self.name, *args],
            capture_output=True,
            text=True,
            env=client_env or self.env,
            timeout=20,
        )
        if check and proc.returncode != 0:
            raise TmuxError(f"tmux {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def new_session(self, name: str, *, width: int, height: int, cwd: str, command: list[str], env: dict[str, str] | None = None) -> str:
        """Start a detached session running ``command``; return its pane id.

        ``env`` adds to (or overrides) the server's environment for this
        session only, so several sessions can share one server.
        """
        env_args = [arg for key, value in (env or {}).items() for arg in ("-e", f"{key}={value}")]
        # tmux gives a new pane the PATH of the client that asked, not the -e one.
        client_env = {**self.env, "PATH": env["PATH"]} if env and "PATH" in env else None
        args = (
            "-f",
            "/dev/null",
            "-u",
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-s",
            name,
            "-x",
            str(width),
            "-y",
            str(height),
            "-c",
            cwd,
            *env_args,
            *command,
        )
        try:
            out = self.run(*args, client_env=client_env)
        except TmuxError as exc:
            # The server of a test that just closed its last session is still
            # exiting: a client that reaches it then is told "server exited
            # unexpectedly" (seen in a full CI run).  A moment later a new
            # server starts on the same socket.
            if "server exited unexpectedly" not in str(exc):
                raise
            time.sleep(0.5)
            out = self.run(*args, client_env=client_env)
        pane = out.strip()
        if not self.socket_path:  # known now; the server may exit on its own before close()
            self.socket_path = self.run("display-message", "-p", "#{socket_path}").strip()
        # A detached session follows no client's size; pin it to ours.
        self.run("set-option", "-t", name, "window-size", "manual")
        self.run("resize-window", "-t", name, "-x", str(width), "-y", str(height))
        return pane

    def pane(self, target: str) -> PaneInfo:
        return PaneInfo.parse(self.run("display-message", "-p", "-t", target, PANE_FORMAT).rstrip("\n"))

    def capture(self, target: str, *, ansi: bool = False) -> str:
        args = ["capture-pane", "-p", "-t", target]
        if ansi:
            args.insert(2, "-e")
        return self.run(*args)

    def send_keys(self, target: str, *keys: str) -> None:
        """Send tmux key names (``Enter``, ``Escape``, ``C-c``, ``Down``, ...)."""
        self.run("send-keys", "-t", target, *keys)

    def send_text(self, target: str, text: str) -> None:
        """Type text literally (no key-name lookup)."""
        self.run("send-keys", "-t", target, "-l", text)

    def kill_session(self, name: str) -> None:
        self.run("kill-session", "-t", name, check=False)

    def close(self) -> None:
        """Kill this private server (and with it only the panes it started), and remove its socket.

        tmux 3.3a leaves the socket file behind after ``kill-server`` (and a
        server killed by a test leaves it too); it is ours, so it goes,
        whether or not a session was ever made through ``new_session``.
        """
        socket = self.socket_path or self.default_socket_path()
        self.run("kill-server", check=False)
        # Give the server a moment to go.
        for _ in range(20):
            if not self.run("list-sessions", check=False):
                break
            time.sleep(0.05)
        if os.path.basename(socket) == self.name:
            try:
                os.unlink(socket)
            except OSError:
                pass

    def default_socket_path(self) -> str:
        """Where tmux puts ``-L name``'s socket: ``$TMUX_TMPDIR`` (or /tmp), ``tmux-<uid>``, the name."""
        folder = self.env.get("TMUX_TMPDIR") or "/tmp"
        return os.path.join(folder, f"tmux-{os.getuid()}", self.name)


@contextmanager
def temp_server(prefix: str) -> Iterator[tuple[Path, PrivateTmux]]:
    """A temp folder named ``prefix``... and a private tmux server homed there; both gone afterwards."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    tmux = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"})
    try:
        yield root, tmux
    finally:
        tmux.close()
        shutil.rmtree(root, ignore_errors=True)
