"""The real opencode binary in a private tmux pane, with a throwaway home and a scripted provider.

``find_opencode`` finds the pinned npm install in the test cache
(``$HEADSPACE_TEST_CACHE/opencode-<version>/node_modules/.bin/opencode``):
the ``opencode-ai`` package's postinstall puts the native binary (a Bun
executable, one process, no children) at ``opencode-ai/bin/opencode.exe``.
A test skips with a clear reason when it is missing, except under CI.

``write_config`` writes ``$XDG_CONFIG_HOME/opencode/opencode.json`` with one
provider, ``scripted``, on ``@ai-sdk/openai-compatible`` (bundled in the
binary: nothing is installed for it) at the scripted API's ``baseURL``, its
one model as the default (``model`` and ``small_model``), and ``permission``
``bash: ask`` / ``edit: ask`` so a command that writes brings up the approval
dialog.  Without a provider (``provider=False``) opencode starts at its
prompt anyway and asks for one only when a message is sent.

Offline (the models fetch and the plugin install measured on 1.18.33 by
leaving their settings out; the other two are set as the binary names them):
``OPENCODE_DISABLE_MODELS_FETCH=1`` keeps it from fetching the models.dev
catalogue (``GET https://models.opencode.ai/api.json``, an ERROR in its log
when unreachable; it starts anyway), ``OPENCODE_DISABLE_AUTOUPDATE=1`` from checking npm for
a newer opencode, ``OPENCODE_DISABLE_LSP_DOWNLOAD=1`` from fetching language
servers, and ``npm_config_offline=true`` turns the background install of
``@opencode-ai/plugin`` into its config dir (opencode's embedded npm, run at
every start; without it ``node_modules`` and ``~/.npm`` appear) into a
quick, logged failure ("background dependency install failed") instead of
a registry download.  The provider package is bundled: nothing is installed
for ``@ai-sdk/openai-compatible``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from headspace_tui.shared.proctree import read_process_table

from .opencode_api import MODEL, OpenAICompatibleAPI
from .tmux import PaneInfo, PrivateTmux

OPENCODE_VERSION = "1.18.33"
OLDER_VERSION = "1.15.4"
NPM_PACKAGE = "opencode-ai"

SHELL_PROMPT = re.compile(r"tester@box:\S*[$#] ?$", re.M)
# The prompt's footer under the input box: "Build · <model>" (the agent, the model).
READY = re.compile(r"┃\s+Build\b")
PERMISSION = re.compile(r"△ Permission required")


class OpencodeUnavailable(RuntimeError):
    pass


def cache_dir(version: str = OPENCODE_VERSION) -> Path:
    base = os.environ.get("HEADSPACE_TEST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "headspace-tests"
    )
    return Path(base) / f"opencode-{version}"


def find_opencode(version: str = OPENCODE_VERSION) -> str:
    """The cached ``opencode`` of ``version``; OpencodeUnavailable (with how to install it) if absent."""
    binary = cache_dir(version) / "node_modules" / ".bin" / "opencode"
    if not binary.exists():
        raise OpencodeUnavailable(
            f"opencode {version} is not installed: npm install --no-audit --no-fund "
            f"--prefix {cache_dir(version)} {NPM_PACKAGE}@{version}"
        )
    return str(binary)


def require_opencode(version: str = OPENCODE_VERSION) -> str:
    """The binary for a test: skip when it is missing, except under CI (there it must be installed)."""
    import pytest

    try:
        return find_opencode(version)
    except OpencodeUnavailable as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(str(exc))
        raise  # unreachable: skip raises


def write_config(config_dir: Path, api_url: str | None, *, permission: dict[str, str] | None = None) -> Path:
    """``opencode.json`` with the scripted provider as the default model (none with ``api_url=None``)."""
    config_dir.mkdir(parents=True, exist_ok=True)
    config: dict[str, object] = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "permission": permission if permission is not None else {"bash": "ask", "edit": "ask"},
    }
    if api_url is not None:
        config.update(
            {
                "model": f"scripted/{MODEL}",
                "small_model": f"scripted/{MODEL}",
                "provider": {
                    "scripted": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "Scripted",
                        "options": {"baseURL": api_url, "apiKey": "headspace-test-key"},
                        "models": {MODEL: {"name": "Scripted Model"}},
                    }
                },
            }
        )
    path = config_dir / "opencode.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def opencode_env(root: Path, binary: str) -> dict[str, str]:
    """The whole environment of a test pane: nothing inherited but what is named here."""
    home, xdg = root / "home", root / "xdg"
    for sub in ("config", "data", "state", "cache"):
        (xdg / sub).mkdir(parents=True, exist_ok=True)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(xdg / "config"),
        "XDG_DATA_HOME": str(xdg / "data"),
        "XDG_STATE_HOME": str(xdg / "state"),
        "XDG_CACHE_HOME": str(xdg / "cache"),
        "PATH": f"{Path(binary).parent}:/usr/local/bin:/usr/bin:/bin",
        "SHELL": "/bin/bash",
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "USER": "tester",
        "PS1": r"tester@box:\W\$ ",
        "TMPDIR": str(home / "tmp"),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "npm_config_offline": "true",
    }


class ScreenTimeout(AssertionError):
    """The screen never showed what a wait expected; carries the last screen."""


@dataclass
class OpencodeSession:
    """One opencode in a private tmux pane, started from an interactive bash as a person would."""

    tmux: PrivateTmux
    api: OpenAICompatibleAPI
    binary: str
    root: Path
    name: str = "agent"
    width: int = 120
    height: int = 40
    provider: bool = True  # False: no provider configured (opencode asks for one at the first message)
    permission: dict[str, str] | None = None
    files: dict[str, str] = field(default_factory=dict)
    pane_id: str = ""

    @property
    def workdir(self) -> Path:
        return self.root / "work"

    @property
    def data_dir(self) -> Path:
        return self.root / "xdg" / "data" / "opencode"

    def start_shell(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for rel, content in self.files.items():
            (self.workdir / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.workdir / rel).write_text(content)
        env = opencode_env(self.root, self.binary)
        write_config(Path(env["XDG_CONFIG_HOME"]) / "opencode", self.api.url if self.provider else None, permission=self.permission)
        self.pane_id = self.tmux.new_session(
            self.name,
            width=self.width,
            height=self.height,
            cwd=str(self.workdir),
            command=["bash", "--norc", "--noprofile", "-i"],
            env=env,
        )
        self.wait_for(SHELL_PROMPT, timeout=15, what="the shell prompt")

    def launch(self, *, wait_ready: bool = True) -> str:
        if not self.pane_id:
            self.start_shell()
        self.tmux.send_text(self.pane_id, shlex.quote("opencode"))
        self.tmux.send_keys(self.pane_id, "Enter")
        return self.wait_ready() if wait_ready else self.screen()

    def wait_ready(self, timeout: float = 45) -> str:
        return self.wait_for(READY, timeout=timeout, what="opencode's input box")

    def close(self) -> None:
        """Kill the session, then whatever of its pane's processes outlived it (by pid and start time)."""
        if not self.pane_id:
            return
        ours = self._pane_processes()
        self.tmux.kill_session(self.name)
        self.pane_id = ""
        left = read_process_table()
        for pid, started in ours.items():
            info = left.get(pid)
            if info is not None and info.started == started:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def _pane_processes(self) -> dict[int, str]:
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

    def agent_pid(self) -> int:
        """The opencode process under the pane (0 if none)."""
        table = read_process_table()
        for pid in self._pane_processes():
            info = table.get(pid)
            if info is not None and info.comm == "opencode":
                return pid
        return 0

    # -- reading ----------------------------------------------------------

    def screen(self) -> str:
        return self.tmux.capture(self.pane_id)

    def ansi(self) -> str:
        return self.tmux.capture(self.pane_id, ansi=True)

    def info(self) -> PaneInfo:
        return self.tmux.pane(self.pane_id)

    def wait_for(
        self, expect: str | re.Pattern[str] | Callable[[str], bool], *, timeout: float = 30, what: str | None = None
    ) -> str:
        if isinstance(expect, str):
            check: Callable[[str], bool] = lambda s, needle=expect: needle in s  # noqa: E731
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
            time.sleep(0.05)
        raise ScreenTimeout(f"{self.name}: waited {timeout}s for {what or expect!r}; screen was:\n{screen}")

    def wait_stable(self, *, quiet: float = 0.6, timeout: float = 10, strict: bool = True) -> str:
        """Until the screen's text has not changed for ``quiet`` s (opencode animates its working bar)."""
        deadline = time.monotonic() + timeout
        last, since = self.screen(), time.monotonic()
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

    def press(self, *keys: str) -> None:
        self.tmux.send_keys(self.pane_id, *keys)

    def submit(self, text: str, *, timeout: float = 10) -> None:
        """Type a message, wait until the box shows it, press Enter until opencode takes it."""
        self.tmux.send_text(self.pane_id, text)
        tail = text[-20:]
        self.wait_for(lambda s: tail in s, timeout=timeout, what=f"the typed text {tail!r}")
        before = len(self.api.requests)
        for _ in range(3):
            self.press("Enter")
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                if len(self.api.requests) > before or not self._in_box(tail):
                    return
                time.sleep(0.1)
        raise ScreenTimeout(f"{self.name}: {text!r} stayed in the input box:\n{self.screen()}")

    def _in_box(self, tail: str) -> bool:
        """Is ``tail`` still in the input box (the ┃ rows just above the footer)?"""
        lines = self.screen().rstrip().split("\n")
        footer = next((i for i in range(len(lines) - 1, -1, -1) if READY.search(lines[i])), None)
        if footer is None:
            return False
        return any(tail in line for line in lines[max(0, footer - 6) : footer])
