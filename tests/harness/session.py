"""One real Claude Code session in a private tmux pane, driven like a person would.

The pane starts an interactive bash; ``claude`` is typed at the shell prompt
and run from there, so the process tree, ``#{pane_current_command}`` and what
is left on screen after Claude exits are what a user's pane has.  Every wait
watches the screen (or the scripted API) with a deadline: nothing sleeps
blindly for a fixed time to "let it settle".
"""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from .claude import claude_env, make_home
from .fake_api import FakeAnthropicAPI
from .pane_session import SHELL_PROMPT, PaneSession
from .pane_session import ScreenTimeout as ScreenTimeout  # re-exported: the Claude scenarios catch it from here
from .tmux import PrivateTmux
from .versions import CLAUDE_VERSION

# Claude's input box: a rule, then the prompt line ("❯" since 2.1, ">" in 2.0).
READY = re.compile(r"^─{8,}\s*\n[❯>]", re.M)
EMPTY_BOX = re.compile(r"^─{8,}\s*\n[❯>][ \u00a0]*\n─{8,}", re.M)
NUMBERED_MENU = re.compile(r"❯ 1\. ", re.M)


@dataclass
class ClaudeSession(PaneSession):
    tmux: PrivateTmux
    api: FakeAnthropicAPI
    claude: str
    root: Path
    name: str = "agent"
    width: int = 120
    height: int = 40
    inline: bool = False
    permission_mode: str | None = "default"  # None: no flag, Claude's own default (auto mode since 2.1.283)
    trust: bool = True
    approve_key: bool = True
    extra_args: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # written into the work dir first
    home_files: dict[str, str] = field(default_factory=dict)  # written into the throwaway HOME (e.g. .claude/settings.json)
    extra_env: dict[str, str] = field(default_factory=dict)  # added to (or overriding) the pane's environment
    version: str = CLAUDE_VERSION  # which Claude Code ``claude`` is (it picks the renderer's environment)
    pane_id: str = ""
    stable_timeout: ClassVar[float] = 15

    # -- lifecycle --------------------------------------------------------
    def start_shell(self) -> None:
        make_home(self.home, self.workdir, trust=self.trust, approve_key=self.approve_key)
        for base, written in ((self.workdir, self.files), (self.home, self.home_files)):
            for rel, content in written.items():
                (base / rel).parent.mkdir(parents=True, exist_ok=True)
                (base / rel).write_text(content)
        env = {**claude_env(self.home, self.api.url, self.claude, inline=self.inline, version=self.version), **self.extra_env}
        self.open_shell(width=self.width, height=self.height, cwd=str(self.workdir), env=env)

    @property
    def command_line(self) -> str:
        mode = [] if self.permission_mode is None else ["--permission-mode", self.permission_mode]
        args = ["claude", *mode, *self.extra_args]
        return " ".join(shlex.quote(a) for a in args)

    def launch(self, *, wait_ready: bool = True) -> str:
        """Type ``claude ...`` at the shell prompt; by default wait for Claude's input box."""
        if not self.pane_id:
            self.start_shell()
        self.run_in_shell(self.command_line)
        if wait_ready:
            return self.wait_ready()
        return self.screen()

    def wait_ready(self, timeout: float = 30) -> str:
        return self.wait_for(READY, timeout=timeout, what="Claude's input box")

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
        self.type_and_see(text, timeout=timeout)
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

        self.enter_until(submitted, f"{text!r} stayed in the input box after three Enters")
