"""The real Codex CLI in a private tmux pane, with a throwaway ``CODEX_HOME``.

``find_codex`` finds the pinned npm install in the test cache
(``$HEADSPACE_TEST_CACHE/codex-<version>/node_modules/.bin/codex``),
installing it there on first use.  ``CodexSession`` writes a
``$CODEX_HOME/config.toml`` that points Codex at the scripted Responses API
as a custom model provider and trusts the work dir, so Codex starts straight
at its prompt; ``provider=False`` leaves the provider out (Codex opens its
sign-in menu) and ``trust=False`` the trust entry.

Codex starts a shared background server (``codex app-server
--managed-daemon`` and its ``daemon pid-update-loop``) from
``$CODEX_HOME/packages/``; it is re-parented to init and outlives the pane.
``close`` ends it with the pane's own processes, by pid: every process whose
executable lies under this session's ``CODEX_HOME``.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from headspace_tui.shared.proctree import read_process_table

from .codex_api import FakeResponsesAPI
from .npm_binary import BinaryUnavailable, cache_root, find_npm_binary, reported_version
from .pane_session import PaneSession, ScreenTimeout, shell_env
from .tmux import PrivateTmux

CODEX_VERSION = "0.169.0"  # the live tests' version (keep .ci/run in step)
OLDER_VERSION = "0.144.0"  # the corpus's second version
NPM_PACKAGE = "@openai/codex"
API_KEY_ENV = "HEADSPACE_FAKE_OPENAI_KEY"
# Codex's composer: "› " at the left edge, the footer's hints under it.
READY = re.compile(r"^› .*\n\n  \S.* · \S", re.M)
APPROVAL = re.compile(r"^› 1\. Yes, proceed", re.M)
DRAIN_GAVE_UP = "timed out discarding buffered terminal input"  # Codex quits so when its input is not drained within 1 s
STARTS = 3  # Codex started at most this many times for its hooks review


class CodexUnavailable(BinaryUnavailable):
    pass


def find_codex(*, install: bool = True, version: str = CODEX_VERSION) -> str:
    """The ``codex`` launcher of ``version`` in the test cache; installed there with npm if missing."""
    return find_npm_binary(
        NPM_PACKAGE,
        version,
        "codex",
        folder=cache_root() / f"codex-{version}",
        version_of=lambda binary: reported_version(binary, word=-1),  # "codex-cli 0.169.0"
        install=install,
        unavailable=CodexUnavailable,
    )


def config_toml(api_url: str, workdir: Path, *, provider: bool = True, trust: bool = True, notify: list[str] | None = None, retries: int = 2) -> str:
    """``$CODEX_HOME/config.toml``: the scripted API as the provider, commands need your approval."""
    lines = [
        'approval_policy = "on-request"',
        'sandbox_mode = "read-only"',
        "check_for_update_on_startup = false",
    ]
    if notify:
        lines.append("notify = [" + ", ".join(_toml_str(a) for a in notify) + "]")
    if provider:
        lines += [
            'model = "gpt-5.1-codex"',
            'model_provider = "scripted"',
            "",
            "[model_providers.scripted]",
            'name = "Scripted"',
            f"base_url = {_toml_str(api_url)}",
            'wire_api = "responses"',
            f'env_key = "{API_KEY_ENV}"',
            "request_max_retries = 0",  # retried silently; the stream's retries are what the screen shows
            f"stream_max_retries = {retries}",
        ]
    if trust:
        lines += ["", f"[projects.{_toml_str(str(workdir))}]", 'trust_level = "trusted"']
    return "\n".join(lines) + "\n"


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class CodexSession(PaneSession):
    tmux: PrivateTmux
    api: FakeResponsesAPI
    codex: str
    root: Path
    name: str = "codex"
    width: int = 120
    height: int = 40
    inline: bool = False  # --no-alt-screen
    provider: bool = True
    trust: bool = True
    notify: list[str] | None = None
    retries: int = 2  # the provider's stream retries, each shown as "Reconnecting... n/N" (Codex's default is 5)
    git: bool = False  # make the work dir a git repository (Codex asks to trust only those)
    extra_args: list[str] = field(default_factory=list)
    extra_env: dict[str, str] = field(default_factory=dict)  # more of the pane's environment (where headspace's socket is)
    pane_id: str = ""
    stable_timeout: ClassVar[float] = 15

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex-test"

    def env(self) -> dict[str, str]:
        return {
            **shell_env(self.home, self.codex),
            "CODEX_HOME": str(self.codex_home),
            API_KEY_ENV: "sk-headspace-test-0000",
            **self.extra_env,
        }

    def start_shell(self) -> None:
        for folder in (self.codex_home, self.workdir, self.home / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        if self.git:
            subprocess.run(["git", "init", "-q", str(self.workdir)], check=True, capture_output=True, timeout=30)
        config = config_toml(self.api.url, self.workdir, provider=self.provider, trust=self.trust, notify=self.notify, retries=self.retries)
        (self.codex_home / "config.toml").write_text(config)
        self.open_shell(width=self.width, height=self.height, cwd=str(self.workdir), env=self.env())

    @property
    def command_line(self) -> str:
        args = ["codex", *(["--no-alt-screen"] if self.inline else []), *self.extra_args]
        return " ".join(shlex.quote(a) for a in args)

    def launch(self, *, wait_ready: bool = True) -> str:
        if not self.pane_id:
            self.start_shell()
        self.run_in_shell(self.command_line)
        return self.wait_ready() if wait_ready else self.screen()

    def trust_hooks(self, timeout: float = 60) -> None:
        """Codex's start with a new hook: "Hooks need review"; pick "Trust all and continue", as a user would.

        Before the review takes a decision Codex drains the terminal's input
        and quits if that takes over a second (``DRAIN_GAVE_UP``); on a busy
        machine it once did, back to the shell.  As a user would, it is then
        started again, at most ``STARTS`` times in all: what the tests prove
        begins after the review.
        """
        chosen = re.compile(r"^› 2\. Trust all", re.M)
        for _ in range(STARTS):
            screen = self.wait_for(lambda s: "Hooks need review" in s or DRAIN_GAVE_UP in s, timeout=timeout, what="Codex asking to review its hooks")
            if DRAIN_GAVE_UP in screen:
                self.relaunch_after_drain()
                continue
            if self._choose_trust_all(chosen):
                break
        else:
            raise ScreenTimeout(f"{self.name}: Codex never took '2' at its hooks review:\n{self.screen()}")
        self.tmux.send_keys(self.pane_id, "Enter")
        self.wait_for(lambda screen: "Hooks need review" not in screen, timeout=timeout, what="the hooks review closed")

    def _choose_trust_all(self, chosen: re.Pattern[str]) -> bool:
        """Press "2" until the review shows it chosen; False when Codex quit meanwhile (``trust_hooks`` starts it again)."""
        for _ in range(5):  # drawn a moment before it takes keys (under load): "2" again chooses the same option
            self.tmux.send_keys(self.pane_id, "2")
            try:
                screen = self.wait_for(lambda s: chosen.search(s) is not None or DRAIN_GAVE_UP in s, timeout=2, what="the trust option chosen")
            except ScreenTimeout:
                continue
            return DRAIN_GAVE_UP not in screen
        raise ScreenTimeout(f"{self.name}: Codex never took '2' at its hooks review:\n{self.screen()}")

    def relaunch_after_drain(self) -> None:
        """Codex quit at its start: clear what reached the shell after it (our "2"s), start it again."""
        self.tmux.send_keys(self.pane_id, "C-u")
        self.tmux.run("clear-history", "-t", self.pane_id)
        self.tmux.send_keys(self.pane_id, "C-l")
        self.wait_for(lambda s: DRAIN_GAVE_UP not in s, timeout=10, what="the shell's screen cleared")
        self.run_in_shell(self.command_line)

    def wait_ready(self, timeout: float = 60) -> str:
        """Codex's composer with its footer's facts; a bound for an agent that never starts (with a core kept busy, it once took over 30 s)."""
        return self.wait_for(READY, timeout=timeout, what="Codex's composer")

    def leftover_processes(self) -> dict[int, str]:
        return self.daemon_processes()

    def daemon_processes(self) -> dict[int, str]:
        """Processes started from this session's ``CODEX_HOME`` (the app-server daemon Codex installs there): pid → start time."""
        prefix = str(self.codex_home) + "/"
        return {info.pid: info.started for info in read_process_table().processes.values() if info.argv and info.argv[0].startswith(prefix)}

    # -- typing -----------------------------------------------------------
    def submit(self, text: str, *, timeout: float = 10) -> None:
        """Type a prompt, wait until the composer shows it, then press Enter until Codex takes it."""
        self.type_and_see(text, timeout=timeout)
        before = len(self.api.requests)
        self.enter_until(lambda: len(self.api.requests) > before or APPROVAL.search(self.screen()) is not None, f"{text!r} was not sent after three Enters")
