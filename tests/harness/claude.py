"""Finding the real Claude Code binary and giving it a throwaway home.

``find_claude`` prefers ``$HEADSPACE_CLAUDE`` (an explicit path), then the
pinned version on PATH, then the pinned npm package in a cache folder,
installing it there on first use.  The npm package ships the native Linux
binary inside a registry package (older versions ship ``cli.js`` for node),
so this works without other network access.  ``find_claude(version=...)``
does the same for any other version (the recorder's ``--version``); the live
tests stay on the pinned one.

``make_home`` writes what Claude needs to start straight at its prompt with no
dialogs (onboarding done, the dummy key approved, the work dir trusted); the
``starting`` scenarios leave parts of that out on purpose.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from .npm_binary import BinaryUnavailable, cache_root, find_npm_binary, reported_version
from .pane_session import shell_env
from .versions import CLAUDE_VERSION, renderer_env

NPM_PACKAGE = "@anthropic-ai/claude-code"
DUMMY_API_KEY = "sk-ant-api03-headspace-test-key-000000000000000000000000AA"


class ClaudeUnavailable(BinaryUnavailable):
    pass


def _version_of(binary: str) -> str | None:
    return reported_version(binary, word=0)  # "2.1.3 (Claude Code)"


def find_claude(*, install: bool = True, version: str | None = None) -> str:
    """The path of a ``claude`` binary of ``version`` (default: the pinned one); install it into the cache if need be.

    ``$HEADSPACE_CLAUDE`` overrides the pinned version only: asking for a
    version by name always means that version.
    """
    explicit = os.environ.get("HEADSPACE_CLAUDE")
    if explicit and version is None:
        if _version_of(explicit) is None:
            raise ClaudeUnavailable(f"HEADSPACE_CLAUDE={explicit} does not run")
        return explicit
    version = version or CLAUDE_VERSION
    return find_npm_binary(
        NPM_PACKAGE,
        version,
        "claude",
        folder=cache_root() / f"claude-code-{version}",
        version_of=_version_of,
        install=install,
        unavailable=ClaudeUnavailable,
        also=[shutil.which("claude")],
    )


def make_home(home: Path, workdir: Path, *, trust: bool = True, approve_key: bool = True) -> None:
    """Write ``home/.claude.json`` so Claude starts at its prompt (or at a chosen dialog)."""
    home.mkdir(parents=True, exist_ok=True)
    workdir.mkdir(parents=True, exist_ok=True)
    config: dict[str, object] = {
        "hasCompletedOnboarding": True,
        "numStartups": 1,
        # Claude remembers approved keys by their last 20 characters.
        "customApiKeyResponses": {"approved": [DUMMY_API_KEY[-20:]] if approve_key else [], "rejected": []},
        "projects": {str(workdir): {"hasTrustDialogAccepted": trust, "allowedTools": []}},
    }
    (home / ".claude.json").write_text(json.dumps(config, indent=2))


def claude_env(home: Path, api_url: str, claude_binary: str, *, inline: bool, version: str = CLAUDE_VERSION) -> dict[str, str]:
    """The whole environment of a test pane: nothing inherited but what is named here."""
    env = {
        **shell_env(home, claude_binary),
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": DUMMY_API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        # Left on, every start clones Anthropic's plugin marketplace from GitHub into the throwaway HOME (git and
        # ssh, seven programs; unreachable from a test machine, and a tenth of a second of CPU each time).
        "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
    }
    env.update(renderer_env(version, "inline" if inline else "alt"))
    return env
