"""The real Gemini CLI in a private tmux pane, against the scripted Gemini API.

``find_gemini`` returns the pinned (or a named) version's ``gemini`` from the
test cache (``$HEADSPACE_TEST_CACHE/gemini-<version>``), installing it with
npm when asked to.  ``GeminiSession`` gives it a throwaway HOME whose
``~/.gemini/settings.json`` (measured on 0.53.0 and 0.61.0):

- picks the API-key sign-in (``security.auth.selectedType = "gemini-api-key"``)
  with ``GEMINI_API_KEY`` set, so it starts at its prompt, no auth dialog;
- turns folder trust off (``security.folderTrust.enabled = false``) so the
  "Do you trust the files in this folder?" dialog stays away (``trust_dialog``
  turns it on: the ``starting`` scenario);
- turns off auto-update and its notification and usage statistics, and
  telemetry, so nothing reaches the internet (only loopback connections were
  seen with ``ss -tnp`` during a session);

and points it at the scripted API with ``GOOGLE_GEMINI_BASE_URL`` (the
``@google/genai`` SDK's base-URL override; every model call was logged
arriving there).  ``COLORTERM=truecolor`` as a modern terminal sets it
(without it the CLI prints a "True color (24-bit) support not detected"
warning and draws its input box with blank lines instead of half blocks).

The pane starts an interactive bash and ``gemini`` is typed there, so the
process tree is a user's: bash → ``node .../.bin/gemini`` (the launcher) →
``/usr/bin/node --max-old-space-size=N .../.bin/gemini`` (the CLI itself, which
the launcher relaunches after a trust change).  ``close`` ends every process
under the pane, by pid.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .gemini_api import FakeGeminiAPI
from .npm_binary import BinaryUnavailable, cache_root, find_npm_binary, in_ci, package_version, require
from .pane_session import PaneSession, shell_env
from .tmux import PrivateTmux

GEMINI_VERSION = "0.61.0"  # the version the live tests run (keep .ci/run in step)
GEMINI_OLDER = "0.53.0"  # published 2026-07-30, two months before 0.61.0 (2026-09-25)
GEMINI_BETWEEN = "0.57.0"  # a release between the two (issue 42), recorded by the release canary, also at 150x45
GEMINI_RECORDED = (GEMINI_OLDER, GEMINI_BETWEEN, GEMINI_VERSION)
NPM_PACKAGE = "@google/gemini-cli"
DUMMY_KEY = "headspace-test-gemini-key"

# The empty input box's placeholder: the CLI is at its prompt, nothing typed.
PLACEHOLDER = "Type your message"
WORKING_HINT = re.compile(r"\(esc to cancel")
MENU = re.compile(r"● 1\. ")


class GeminiUnavailable(BinaryUnavailable):
    pass


def find_gemini(*, install: bool = False, version: str = GEMINI_VERSION) -> str:
    """The ``gemini`` of ``version`` in the test cache; npm-install it there first if ``install``."""
    folder = cache_root() / f"gemini-{version}"
    return find_npm_binary(
        NPM_PACKAGE,
        version,
        "gemini",
        folder=folder,
        version_of=lambda _binary: package_version(folder, NPM_PACKAGE),  # read, not run: the launcher is slow to start
        install=install,
        unavailable=GeminiUnavailable,
    )


def require_gemini() -> str:
    """The pinned Gemini CLI for a test (installed under CI); missing: skip locally, fail under CI=true."""
    return require(lambda: find_gemini(install=in_ci()), "Gemini CLI")


def settings(*, trust_dialog: bool = False, signed_in: bool = True, extra: dict | None = None) -> dict:
    """``~/.gemini/settings.json``: API-key sign-in (unless not ``signed_in``), nothing reaching the internet, folder trust as asked."""
    base: dict = {
        "security": {"auth": {"selectedType": "gemini-api-key"} if signed_in else {}, "folderTrust": {"enabled": trust_dialog}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    for key, value in (extra or {}).items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return base


def gemini_env(home: Path, api_url: str, binary: str, *, key: bool = True) -> dict[str, str]:
    """The whole environment of a test pane: nothing inherited but what is named here."""
    env = {
        **shell_env(home, binary),
        "COLORTERM": "truecolor",
        "GEMINI_API_KEY": DUMMY_KEY,
        "GOOGLE_GEMINI_BASE_URL": api_url,
    }
    if not key:
        del env["GEMINI_API_KEY"]
    return env


@dataclass
class GeminiSession(PaneSession):
    tmux: PrivateTmux
    api: FakeGeminiAPI
    binary: str
    root: Path
    name: str = "gemini"
    width: int = 120
    height: int = 40
    trust_dialog: bool = False
    signed_in: bool = True  # False: no sign-in chosen and no key, so it opens its sign-in dialog
    extra_settings: dict = field(default_factory=dict)
    extra_args: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # written into the work dir first
    pane_id: str = ""

    def start_shell(self) -> None:
        (self.home / ".gemini").mkdir(parents=True, exist_ok=True)
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = settings(trust_dialog=self.trust_dialog, signed_in=self.signed_in, extra=self.extra_settings)
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(config, indent=2))
        for rel, content in self.files.items():
            (self.workdir / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.workdir / rel).write_text(content)
        self.open_shell(width=self.width, height=self.height, cwd=str(self.workdir), env=gemini_env(self.home, self.api.url, self.binary, key=self.signed_in))

    def launch(self, *, wait_ready: bool = True) -> str:
        """Type ``gemini`` at the shell prompt; by default wait for its empty input box."""
        if not self.pane_id:
            self.start_shell()
        self.run_in_shell(" ".join(["gemini", *self.extra_args]))
        if wait_ready:
            return self.wait_ready()
        return self.screen()

    def wait_ready(self, timeout: float = 40) -> str:
        return self.wait_for(PLACEHOLDER, timeout=timeout, what="Gemini's input box")

    # -- typing -----------------------------------------------------------
    def submit(self, text: str, *, timeout: float = 10) -> None:
        """Type a prompt, wait until the box shows it, press Enter until the API hears it (or a dialog opens)."""
        self.type_and_see(text, timeout=timeout)
        before = len(self.api.requests)

        def taken() -> bool:
            # the API heard it, a dialog opened, or it exited (/quit)
            return len(self.api.requests) > before or MENU.search(self.screen()) is not None or self.info().current_command == "bash"

        self.enter_until(taken, f"{text!r} was not sent after three Enters")
