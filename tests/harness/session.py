"""One real Claude Code session in a private tmux pane, driven like a person would.

The pane starts an interactive bash; ``claude`` is typed at the shell prompt
and run from there, so the process tree, ``#{pane_current_command}`` and what
is left on screen after Claude exits are what a user's pane has.  Every wait
watches the screen (or the scripted API) with a deadline: nothing sleeps
blindly for a fixed time to "let it settle".
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from headspace_tui.shared.proctree import read_process_table

from .claude import claude_env, make_home
from .fake_api import FakeAnthropicAPI
from .tmux import PaneInfo, PrivateTmux
from .versions import CLAUDE_VERSION

SHELL_PROMPT = re.compile(r"tester@box:\S*[$#] ?$", re.M)
# Claude's input box: a rule, then the prompt line ("❯" since 2.1, ">" in 2.0).
READY = re.compile(r"^─{8,}\s*\n[❯>]", re.M)
EMPTY_BOX = re.compile(r"^─{8,}\s*\n[❯>][ \u00a0]*\n─{8,}", re.M)
NUMBERED_MENU = re.compile(r"❯ 1\. ", re.M)


class ScreenTimeout(AssertionError):
    """The screen never showed what a wait expected; carries the last screen."""


@dataclass
class ClaudeSession:
    tmux: PrivateTmux
    api: FakeAnthropicAPI
    claude: str
    root: Path
    name: str = "agent"
    width: int = 120
    height: int = 40
    inline: bool = False
    permission_mode: str = "default"
    trust: bool = True
    approve_key: bool = True
    extra_args: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # written into the work dir first
    home_files: dict[str, str] = field(default_factory=dict)  # written into the throwaway HOME (e.g. .claude/settings.json)
    extra_env: dict[str, str] = field(default_factory=dict)  # added to (or overriding) the pane's environment
    version: str = CLAUDE_VERSION  # which Claude Code ``claude`` is (it picks the renderer's environment)
    pane_id: str = ""

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def workdir(self) -> Path:
        return self.root / "work"

    # -- lifecycle --------------------------------------------------------
    def start_shell(self) -> None:
        make_home(self.home, self.workdir, trust=self.trust, approve_key=self.approve_key)
        for base, written in ((self.workdir, self.files), (self.home, self.home_files)):
            for rel, content in written.items():
                (base / rel).parent.mkdir(parents=True, exist_ok=True)
                (base / rel).write_text(content)
        env = {**claude_env(self.home, self.api.url, self.claude, inline=self.inline, version=self.version), **self.extra_env}
        self.pane_id = self.tmux.new_session(
            self.name,
            width=self.width,
            height=self.height,
            cwd=str(self.workdir),
            command=["bash", "--norc", "--noprofile", "-i"],
            env=env,
        )
        self.wait_for(SHELL_PROMPT, timeout=15, what="the shell prompt")

    @property
    def command_line(self) -> str:
        args = ["claude", "--permission-mode", self.permission_mode, *self.extra_args]
        return " ".join(shlex.quote(a) for a in args)

    def launch(self, *, wait_ready: bool = True) -> str:
        """Type ``claude ...`` at the shell prompt; by default wait for Claude's input box."""
        if not self.pane_id:
            self.start_shell()
        self.tmux.send_text(self.pane_id, self.command_line)
        self.tmux.send_keys(self.pane_id, "Enter")
        if wait_ready:
            return self.wait_ready()
        return self.screen()

    def wait_ready(self, timeout: float = 30) -> str:
        return self.wait_for(READY, timeout=timeout, what="Claude's input box")

    def close(self) -> None:
        """Kill the session, then whatever of its pane's processes outlived it.

        A Claude that was stopped (SIGSTOP, or SIGTTOU once its terminal was
        gone) ignores the hangup tmux sends: one was found stopped under init
        after a full run, 255 MB held.  Only processes under this session's
        own pane are ended, by pid.
        """
        if self.pane_id:
            ours = self._pane_processes()
            self.tmux.kill_session(self.name)
            self.pane_id = ""
            left = read_process_table()
            for pid, started in ours.items():
                info = left.get(pid)
                if info is not None and info.started == started:  # the same process, not a reused pid
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass  # gone meanwhile

    def _pane_processes(self) -> dict[int, str]:
        """Every process under this session's pane (the shell, Claude and what it runs): pid → start time."""
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

    def wait_for(
        self,
        expect: str | re.Pattern[str] | Callable[[str], bool],
        *,
        timeout: float = 30,
        what: str | None = None,
        interval: float = 0.05,
    ) -> str:
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

    def wait_stable(self, *, quiet: float = 0.6, timeout: float = 15, strict: bool = True) -> str:
        """Wait until the screen's text has not changed for ``quiet`` seconds.

        Text, not colours: Claude animates colours (a shimmer on tips and
        spinners) even on a screen that is otherwise at rest.  Some states
        animate their text too (the mascot and a blinking bullet beside a
        permission dialog); with ``strict=False`` such a screen is returned as
        it is when ``timeout`` runs out instead of failing.
        """
        deadline = time.monotonic() + timeout
        last = self.screen()
        since = time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self.screen()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return self.screen()
        if not strict:
            return self.screen()
        raise ScreenTimeout(f"{self.name}: the screen kept changing for {timeout}s:\n{self.screen()}")

    # -- typing -----------------------------------------------------------
    def type(self, text: str) -> None:
        self.tmux.send_text(self.pane_id, text)

    def press(self, *keys: str) -> None:
        self.tmux.send_keys(self.pane_id, *keys)

    def answer(self, *keys: str, quiet: float = 0.5) -> None:
        """Press keys at a dialog once it has been on screen, unchanged, for ``quiet`` s.

        Measured on 2.1.330: a digit sent within ~0.1 s of a menu being drawn
        is dropped (the dialog is not listening yet); after ~0.3 s it lands.
        A person never types that fast; a test must not either.
        """
        self.wait_stable(quiet=quiet, timeout=3, strict=False)
        self.press(*keys)

    def submit(self, text: str, *, timeout: float = 10) -> None:
        """Type a prompt, wait until the input box shows it, then press Enter until it leaves the box.

        Seen on 2.0.60 under load: an Enter that follows the typed text
        closely is taken as part of a paste (a newline in the box) and the
        prompt stays put.  A person presses Enter again; so does this, only
        while there is no sign the prompt went (an Enter on an empty box
        does nothing in Claude).
        """
        self.type(text)
        tail = text[-20:]
        self.wait_for(lambda s: tail in s, timeout=timeout, what=f"the typed text {tail!r}")
        requests = len(self.api.main_requests)  # side calls (2.0's topic check) come and go on their own

        def submitted() -> bool:
            # Positive evidence only (a redraw caught half-way can hide the box):
            # Claude asked the API, the box is empty, a dialog opened, or Claude
            # exited (``/exit``; its last frame may still show the text).
            if len(self.api.main_requests) > requests:
                return True
            screen = self.screen()
            if NUMBERED_MENU.search(screen) or SHELL_PROMPT.search(screen.rstrip()):
                return True
            if self.info().current_command == "bash":
                return True  # Claude exited (its last frame can leave anything on screen)
            if EMPTY_BOX.search(screen) is None:
                return False
            time.sleep(0.1)  # still empty a moment later: not a redraw caught half-way
            return EMPTY_BOX.search(self.screen()) is not None

        for _ in range(3):
            self.press("Enter")
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                if submitted():
                    return
                time.sleep(0.1)
        raise ScreenTimeout(f"{self.name}: {text!r} stayed in the input box after three Enters:\n{self.screen()}")
