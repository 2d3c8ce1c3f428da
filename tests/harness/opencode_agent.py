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
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from headspace_tui.shared.proctree import read_process_table

from .npm_binary import BinaryUnavailable, cache_root, find_npm_binary, package_version, require
from .opencode_api import MODEL, OpenAICompatibleAPI
from .pane_session import PaneSession, shell_env
from .tmux import PrivateTmux

OPENCODE_VERSION = "1.18.33"
OLDER_VERSION = "1.15.4"
NPM_PACKAGE = "opencode-ai"

# The prompt's footer under the input box: "Build · <model>" (the agent, the model).
READY = re.compile(r"┃\s+Build\b")
PERMISSION = re.compile(r"△ Permission required")


class OpencodeUnavailable(BinaryUnavailable):
    pass


def find_opencode(version: str = OPENCODE_VERSION, *, install: bool = False) -> str:
    """The cached ``opencode`` of ``version``; npm-installed there if ``install``, else OpencodeUnavailable (with how to install it) if absent."""
    folder = cache_root() / f"opencode-{version}"
    return find_npm_binary(
        NPM_PACKAGE,
        version,
        "opencode",
        folder=folder,
        version_of=lambda _binary: package_version(folder, NPM_PACKAGE),
        install=install,
        unavailable=OpencodeUnavailable,
    )


def require_opencode(version: str = OPENCODE_VERSION) -> str:
    """The binary for a test: skip when it is missing, except under CI (there it must be installed)."""
    return require(lambda: find_opencode(version), "opencode")


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
    return {
        **shell_env(home, binary),
        "XDG_CONFIG_HOME": str(xdg / "config"),
        "XDG_DATA_HOME": str(xdg / "data"),
        "XDG_STATE_HOME": str(xdg / "state"),
        "XDG_CACHE_HOME": str(xdg / "cache"),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "npm_config_offline": "true",
    }


@dataclass
class OpencodeSession(PaneSession):
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
    def data_dir(self) -> Path:
        return self.root / "xdg" / "data" / "opencode"

    def start_shell(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for rel, content in self.files.items():
            (self.workdir / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.workdir / rel).write_text(content)
        env = opencode_env(self.root, self.binary)
        write_config(Path(env["XDG_CONFIG_HOME"]) / "opencode", self.api.url if self.provider else None, permission=self.permission)
        self.open_shell(width=self.width, height=self.height, cwd=str(self.workdir), env=env)

    def launch(self, *, wait_ready: bool = True) -> str:
        if not self.pane_id:
            self.start_shell()
        self.run_in_shell(shlex.quote("opencode"))
        return self.wait_ready() if wait_ready else self.screen()

    def wait_ready(self, timeout: float = 90) -> str:
        return self.wait_for(READY, timeout=timeout, what="opencode's input box")

    def agent_pid(self) -> int:
        """The opencode process under the pane (0 if none)."""
        table = read_process_table()
        for pid in self.pane_processes():
            info = table.get(pid)
            if info is not None and info.comm == "opencode":
                return pid
        return 0

    # -- typing -----------------------------------------------------------

    def submit(self, text: str, *, timeout: float = 10) -> None:
        """Type a message, wait until the box shows it, press Enter until opencode takes it."""
        tail = self.type_and_see(text, timeout=timeout)
        before = len(self.api.requests)
        self.enter_until(lambda: len(self.api.requests) > before or not self._in_box(tail), f"{text!r} stayed in the input box")

    def _in_box(self, tail: str) -> bool:
        """Is ``tail`` still in the input box (the ┃ rows just above the footer)?"""
        lines = self.screen().rstrip().split("\n")
        footer = next((i for i in range(len(lines) - 1, -1, -1) if READY.search(lines[i])), None)
        if footer is None:
            return False
        return any(tail in line for line in lines[max(0, footer - 6) : footer])
