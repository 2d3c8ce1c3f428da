"""What every agent family's test session does the same way with its tmux pane.

Claude Code, Codex CLI, Gemini CLI and opencode are each run in a private
tmux pane by a session class of their own (``session.ClaudeSession``,
``codex_agent.CodexSession``, ``gemini_agent.GeminiSession``,
``opencode_agent.OpencodeSession``), which holds what is the family's own:
its environment, its launch command, its readiness pattern, how it shows a
prompt was taken.  The rest is here, once: reading the screen, waiting for
it with a deadline (the timeout error carries the last screen), typing and
pressing keys, and ``close`` (kill the tmux session, then end the pane's
processes that outlived it, by pid and start time, never anything else).

The classes are dataclasses holding ``tmux``, ``name`` and ``pane_id``; this
mixin adds no fields, only behaviour.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from headspace_tui.shared.proctree import read_process_table

from .tmux import PaneInfo, PrivateTmux

# The pane's bash prompt (every session sets ``PS1`` to this shape).
SHELL_PROMPT = re.compile(r"tester@box:\S*[$#] ?$", re.M)

Expect = str | re.Pattern[str] | Callable[[str], bool]


class ScreenTimeout(AssertionError):
    """The screen never showed what a wait expected; carries the last screen."""


def end_processes(ours: dict[int, str]) -> None:
    """SIGKILL each pid still running with the start time it had when seen (so never a reused pid)."""
    left = read_process_table()
    for pid, started in ours.items():
        info = left.get(pid)
        if info is not None and info.started == started:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass  # gone meanwhile


def shell_env(home: Path, binary: str) -> dict[str, str]:
    """What every test pane's environment starts from, nothing inherited.

    The throwaway HOME, the agent's folder first on PATH, a UTF-8 locale, the
    shell prompt ``SHELL_PROMPT`` knows, a private TMPDIR (made here).

    A family adds its own (its API's URL and key, its config dirs, what keeps it offline).
    """
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "PATH": f"{Path(binary).parent}:/usr/local/bin:/usr/bin:/bin",
        "SHELL": "/bin/bash",
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "USER": "tester",
        "PS1": r"tester@box:\W\$ ",
        "TMPDIR": str(home / "tmp"),
    }


class PaneSession:
    """Reading, waiting, typing and closing for a session class that has ``tmux``, ``root``, ``name`` and ``pane_id``."""

    tmux: PrivateTmux
    root: Path  # the session's own temp folder: its HOME and work dir are under it
    name: str
    pane_id: str
    stable_timeout: ClassVar[float] = 10  # wait_stable's default deadline

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def workdir(self) -> Path:
        return self.root / "work"

    # -- lifecycle --------------------------------------------------------
    def open_shell(self, *, width: int, height: int, cwd: str, env: dict[str, str]) -> None:
        """Start the session's pane as an interactive bash with ``env`` only, and wait for its prompt."""
        self.pane_id = self.tmux.new_session(self.name, width=width, height=height, cwd=cwd, command=["bash", "--norc", "--noprofile", "-i"], env=env)
        self.wait_for(SHELL_PROMPT, timeout=15, what="the shell prompt")

    def close(self) -> None:
        """Kill the session, then whatever of its pane's processes (and ``leftover_processes``) outlived it, by pid.

        An agent that was stopped (SIGSTOP, or SIGTTOU once its terminal was
        gone) ignores the hangup tmux sends: a Claude was once found stopped
        under init after a full run, 255 MB held.
        """
        ours = self.pane_processes() if self.pane_id else {}
        ours.update(self.leftover_processes())
        if self.pane_id:
            self.tmux.kill_session(self.name)
            self.pane_id = ""
        if ours:
            end_processes(ours)

    def leftover_processes(self) -> dict[int, str]:
        """Processes of this session's that are not under its pane (a family's daemons): pid → start time."""
        return {}

    def pane_processes(self) -> dict[int, str]:
        """Every process under this session's pane (the shell, the agent and what it runs): pid → start time."""
        try:
            root = int(self.tmux.run("display-message", "-p", "-t", self.pane_id, "#{pane_pid}", check=False).strip() or 0)
        except ValueError:
            return {}
        table = read_process_table()
        found: dict[int, str] = {}
        todo = [root] if root > 0 else []
        while todo:
            pid = todo.pop()
            info = table.get(pid)
            if info is not None:
                found[pid] = info.started
                todo.extend(table.children_of(pid))
        return found

    # -- reading ----------------------------------------------------------
    def screen(self) -> str:
        return self.tmux.capture(self.pane_id)

    def ansi(self) -> str:
        return self.tmux.capture(self.pane_id, ansi=True)

    def info(self) -> PaneInfo:
        return self.tmux.pane(self.pane_id)

    def wait_for(self, expect: Expect, *, timeout: float = 30, what: str | None = None, interval: float = 0.05) -> str:
        """Poll the screen until ``expect`` (a substring, regex or predicate) holds."""
        if isinstance(expect, str):
            check: Callable[[str], bool] = lambda s, needle=expect: needle in s  # noqa: E731 - one of three small predicates
        elif isinstance(expect, re.Pattern):
            check = lambda s, rx=expect: rx.search(s) is not None  # noqa: E731
        else:
            check = expect
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(interval)
        raise ScreenTimeout(f"{self.name}: waited {timeout}s for {what or expect!r}; screen was:\n{screen}")

    def wait_stable(self, *, quiet: float = 0.6, timeout: float | None = None, strict: bool = True) -> str:
        """Wait until the screen's text has not changed for ``quiet`` seconds.

        Text, not colours: agents animate colours (a shimmer on tips and
        spinners) even on a screen that is otherwise at rest.  Some states
        animate their text too; with ``strict=False`` such a screen is
        returned as it is when ``timeout`` runs out instead of failing.
        """
        timeout = self.stable_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        last = self.screen()
        since = time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self.screen()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return now
        if not strict:
            return self.screen()
        raise ScreenTimeout(f"{self.name}: the screen kept changing for {timeout}s:\n{self.screen()}")

    # -- typing -----------------------------------------------------------
    def type(self, text: str) -> None:
        self.tmux.send_text(self.pane_id, text)

    def press(self, *keys: str) -> None:
        self.tmux.send_keys(self.pane_id, *keys)

    def wait_read(self, *, timeout: float = 10) -> None:
        """Wait until the program in the pane has read every byte typed so far (its terminal's input queue is empty).

        A key sent by tmux is first written to the pane's terminal; the program reads it when its loop
        comes round. A race that needs the key taken before something else happens waits here for that.
        """
        import fcntl
        import struct
        import termios

        tty = self.tmux.run("display-message", "-p", "-t", self.pane_id, "#{pane_tty}").strip()
        fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)  # never read from it: only its queue is asked
        try:
            deadline = time.monotonic() + timeout
            while struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]:
                if time.monotonic() > deadline:
                    raise AssertionError(f"{self.name}: the program did not read what was typed within {timeout}s")
                time.sleep(0.002)
        finally:
            os.close(fd)

    def run_in_shell(self, command_line: str) -> None:
        """Type a command line at the pane's shell prompt and press Enter."""
        self.type(command_line)
        self.press("Enter")

    def type_and_see(self, text: str, *, timeout: float = 10) -> str:
        """Type ``text`` and wait until the screen shows its last 20 characters; those are returned."""
        self.type(text)
        tail = text[-20:]
        self.wait_for(lambda s: tail in s, timeout=timeout, what=f"the typed text {tail!r}")
        return tail

    def enter_until(self, taken: Callable[[], bool], failed: str) -> None:
        """Press Enter, up to three times, until ``taken()`` (each press watched for 3 s); else ScreenTimeout saying ``failed``."""
        for _ in range(3):
            self.press("Enter")
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                if taken():
                    return
                time.sleep(0.1)
        raise ScreenTimeout(f"{self.name}: {failed}:\n{self.screen()}")
