"""The real Qwen Code in a private tmux pane, with a throwaway home and the scripted OpenAI-compatible API.

``find_qwen`` finds the pinned npm install in the test cache
(``$HEADSPACE_TEST_CACHE/qwen-<version>``).  Measured on 0.24.4:

- ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``OPENAI_MODEL`` start it at its
  prompt with no sign-in dialog;
- its settings (``~/.qwen/settings.json``, written here) pin the approval
  mode to ``default`` (0.24's own default is ``auto``: an LLM classifier
  that the scripted API would have to play), turn off the follow-up
  suggestion it draws as ghost text in the box after each reply (another
  model request), its background memory and skill agents (requests with
  tools after a turn, which would take the next prompt's scripted step),
  and its update check;
- npm installs its bundled ripgrep without the execute bit (a warning box
  at every start): ``find_qwen`` sets it, as ``.ci/run`` does;
- the package declares node >= 22; it runs on this machine's node 20.

The pane starts an interactive bash and ``qwen`` is typed there, so the
process tree is a user's: bash → ``node …/.bin/qwen`` (the launcher) →
``/usr/bin/node --expose-gc …/cli.js`` (the CLI) → a second node of its own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from .chat_session import ChatAgentSession
from .npm_binary import BinaryUnavailable, cache_root, find_npm_binary, in_ci, package_version, require
from .opencode_api import MODEL, OpenAICompatibleAPI
from .pane_session import shell_env
from .tmux import PrivateTmux

QWEN_VERSION = "0.24.4"  # the version the live tests run (keep .ci/run in step)
NPM_PACKAGE = "@qwen-code/qwen-code"

PLACEHOLDER = "Type your message"
WORKING_HINT = re.compile(r"esc to\s+cancel\)")
PERMISSION = re.compile(r"Allow execution of|Waiting for user confirmation")


class QwenUnavailable(BinaryUnavailable):
    pass


def find_qwen(*, install: bool = False, version: str = QWEN_VERSION) -> str:
    """The cached ``qwen`` of ``version``; npm-installed there if ``install``; its ripgrep made executable."""
    folder = cache_root() / f"qwen-{version}"
    binary = find_npm_binary(
        NPM_PACKAGE,
        version,
        "qwen",
        folder=folder,
        version_of=lambda _binary: package_version(folder, NPM_PACKAGE),
        install=install,
        unavailable=QwenUnavailable,
    )
    rg = folder / "node_modules" / "@qwen-code" / "qwen-code" / "vendor" / "ripgrep" / "x64-linux" / "rg"
    if rg.is_file() and not rg.stat().st_mode & 0o100:
        rg.chmod(0o755)
    return binary


def require_qwen() -> str:
    """The pinned Qwen Code for a test (installed under CI); missing: skip locally, fail under CI=true."""
    return require(lambda: find_qwen(install=in_ci()), "Qwen Code")


def settings(mode: str = "default", extra: dict | None = None) -> dict:
    """``~/.qwen/settings.json``: the approval mode, no follow-up suggestions, no update check."""
    base: dict = {
        "tools": {"approvalMode": mode},
        "ui": {"enableFollowupSuggestions": False},
        "general": {"enableAutoUpdate": False},
        # Its background agents (memories from the conversation, their clean-up, skills) send requests of their own,
        # with tools, after a turn: they would take the scripted steps meant for the next prompt.
        "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False, "enableAutoSkill": False},
        "$version": 4,  # the settings' format 0.24 writes: older ones it rewrites at its start
    }
    for key, value in (extra or {}).items():
        base[key] = {**base[key], **value} if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return base


def qwen_env(home: Path, api_url: str, binary: str) -> dict[str, str]:
    """The whole environment of a test pane: nothing inherited but what is named here."""
    return {**shell_env(home, binary), "OPENAI_BASE_URL": api_url, "OPENAI_API_KEY": "headspace-test-key", "OPENAI_MODEL": MODEL}


@dataclass
class QwenSession(ChatAgentSession):
    """One Qwen Code in a private tmux pane, started from an interactive bash as a person would."""

    ready: ClassVar[re.Pattern[str]] = re.compile(re.escape(PLACEHOLDER))
    dialog: ClassVar[re.Pattern[str]] = PERMISSION
    family: ClassVar[str] = "qwen"
    program: ClassVar[tuple[str, ...]] = ("qwen",)

    tmux: PrivateTmux
    api: OpenAICompatibleAPI
    binary: str
    root: Path
    name: str = "qwen"
    width: int = 120
    height: int = 40
    mode: str = "default"
    extra_settings: dict = field(default_factory=dict)
    extra_args: list[str] = field(default_factory=list)
    extra_env: dict[str, str] = field(default_factory=dict)
    pane_id: str = ""

    @property
    def state_dir(self) -> Path:
        return self.home / ".qwen"

    def start_shell(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        (self.state_dir / "settings.json").write_text(json.dumps(settings(self.mode, self.extra_settings), indent=2) + "\n")  # as Qwen writes it
        env = {**qwen_env(self.home, self.api.url, self.binary), **self.extra_env}
        self.open_shell(width=self.width, height=self.height, cwd=str(self.workdir), env=env)
