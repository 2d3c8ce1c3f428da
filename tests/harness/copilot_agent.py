"""The real GitHub Copilot CLI in a private tmux pane, with a throwaway home and the scripted OpenAI-compatible API.

``find_copilot`` finds the pinned npm install in the test cache
(``$HEADSPACE_TEST_CACHE/copilot-<version>``): ``@github/copilot`` is a node
loader (``npm-loader.js``, the ``copilot`` bin) that starts the native
binary of ``@github/copilot-linux-x64``.  Measured on 1.0.102:

- bring-your-own-model needs no GitHub sign-in: ``COPILOT_PROVIDER_BASE_URL``
  (the scripted API), ``COPILOT_PROVIDER_TYPE=openai``, ``COPILOT_MODEL``;
  the two ``COPILOT_PROVIDER_MAX_*_TOKENS`` keep the "not in the built-in
  catalog" note off the screen, ``COPILOT_OFFLINE=true`` keeps it off the
  network and ``COPILOT_AUTO_UPDATE=false`` from updating itself;
- its first screen in a new folder is "Confirm folder trust"; the test
  home's ``~/.copilot/config.json`` lists the work folder in
  ``trustedFolders`` (``trust_dialog=True`` leaves it out: the starting
  scenario);
- ``--log-level none``: its own log grows about 10 MB a minute otherwise.

The pane starts an interactive bash and ``copilot`` is typed there, so the
process tree is a user's: bash → ``node …/.bin/copilot`` (the loader) → the
native ``copilot``.
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

COPILOT_VERSION = "1.0.102"  # the version the live tests run (keep .ci/run in step)
NPM_PACKAGE = "@github/copilot"
CONTEXT = 128_000  # the prompt tokens the scripted model is said to take (COPILOT_PROVIDER_MAX_PROMPT_TOKENS)

# The footer at rest ("· Interactive · Manual Approval ·") and while a turn runs ("◉ Working").
READY = re.compile(r"Manual Approval|Allow All")
WORKING = re.compile(r"[◉◎] Working")
PERMISSION = re.compile(r"Do you want to run this command\?|Do you want to (?:create|edit|write)")


class CopilotUnavailable(BinaryUnavailable):
    pass


def find_copilot(*, install: bool = False, version: str = COPILOT_VERSION) -> str:
    """The cached ``copilot`` of ``version``; npm-installed there if ``install``."""
    folder = cache_root() / f"copilot-{version}"
    return find_npm_binary(
        NPM_PACKAGE,
        version,
        "copilot",
        folder=folder,
        version_of=lambda _binary: package_version(folder, NPM_PACKAGE),
        install=install,
        unavailable=CopilotUnavailable,
    )


def require_copilot() -> str:
    """The pinned Copilot CLI for a test (installed under CI); missing: skip locally, fail under CI=true."""
    return require(lambda: find_copilot(install=in_ci()), "GitHub Copilot CLI")


def copilot_env(home: Path, api_url: str, binary: str) -> dict[str, str]:
    """The whole environment of a test pane: nothing inherited but what is named here."""
    return {
        **shell_env(home, binary),
        "COPILOT_PROVIDER_BASE_URL": api_url,
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_MODEL": MODEL,
        "COPILOT_PROVIDER_MAX_PROMPT_TOKENS": str(CONTEXT),
        "COPILOT_PROVIDER_MAX_OUTPUT_TOKENS": "8192",
        "COPILOT_OFFLINE": "true",
        "COPILOT_AUTO_UPDATE": "false",
    }


@dataclass
class CopilotSession(ChatAgentSession):
    """One Copilot CLI in a private tmux pane, started from an interactive bash as a person would."""

    ready: ClassVar[re.Pattern[str]] = READY
    dialog: ClassVar[re.Pattern[str]] = PERMISSION
    family: ClassVar[str] = "copilot"
    program: ClassVar[tuple[str, ...]] = ("copilot", "--log-level", "none")

    tmux: PrivateTmux
    api: OpenAICompatibleAPI
    binary: str
    root: Path
    name: str = "copilot"
    width: int = 120
    height: int = 40
    trust_dialog: bool = False  # True: the work folder is not trusted yet (its first screen asks)
    extra_args: list[str] = field(default_factory=list)
    extra_env: dict[str, str] = field(default_factory=dict)
    pane_id: str = ""

    @property
    def state_dir(self) -> Path:
        return self.home / ".copilot"

    def start_shell(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        config = {} if self.trust_dialog else {"trustedFolders": [str(self.workdir)]}
        (self.state_dir / "config.json").write_text(json.dumps(config))
        env = {**copilot_env(self.home, self.api.url, self.binary), **self.extra_env}
        self.open_shell(width=self.width, height=self.height, cwd=str(self.workdir), env=env)
