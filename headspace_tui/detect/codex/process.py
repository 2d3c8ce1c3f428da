"""Which process under a pane is Codex CLI, and which version its install is.

Measured on 0.169.0 and 0.144.0 (npm installs, Linux x64):

* ``codex`` on PATH is a node launcher (``bin/codex.js``) that runs the
  native binary of its platform package
  (``@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex``).
  Under node 22.15+ the launcher ``execve``\\ s into it (one process: the
  native binary, comm ``codex``); under older node it spawns it as a child
  and waits (``node …/bin/codex`` → native ``codex``; the pane's current
  command is then ``node``).  So the native binary is what is always there
  (standalone and Homebrew installs have only it), and it is the ONE
  process recognised; the launcher never is (it would make two).
* Codex starts a shared background server from ``$CODEX_HOME/packages/``:
  ``codex app-server --listen unix:// … --managed-daemon`` and ``codex
  app-server daemon pid-update-loop``, first as the agent's children, then
  re-parented to init when the pane goes (it outlives it).  Not an agent:
  any ``app-server`` (or other helper subcommand) is refused.
* The version: ``vendor/<triple>/codex-package.json`` two folders above the
  native binary says ``"version": "0.169.0"``; the platform package's
  ``package.json`` says ``0.169.0-linux-x64`` (the suffix is dropped).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...shared.proctree import ProcessInfo
from ..install import manifest_version

_VERSION = re.compile(r"^(\d+\.\d+\.\d+)(?:-[a-z0-9_-]+)?$")
_NAMES = frozenset({"codex", "codex.exe"})
# Subcommands that are not an agent session: the daemon, servers, one-shot tools.
HELPERS = frozenset(
    {
        "app-server",
        "exec-server",
        "mcp-server",
        "mcp",
        "sandbox",
        "debug",
        "login",
        "logout",
        "completion",
        "doctor",
        "features",
        "help",
        "update",
        "apply",
        "a",
        "remote-control",
        "migrate-rollouts",
        "migrate-nfs-db",
        "archive",
        "unarchive",
        "delete",
        "queue",
        "plugin",
    }
)
_SERVER_ARGS = frozenset({"app-server", "exec-server", "mcp-server", "--managed-daemon"})
_RUNTIMES = frozenset({"node", "nodejs", "bun"})


def recognise(info: ProcessInfo) -> bool:
    """Is this process Codex's native binary running an agent session (not its launcher, not its daemon)?"""
    name = info.argv0_name or info.comm
    if name not in _NAMES:
        return False
    args = info.argv[1:]
    if any(arg in _SERVER_ARGS for arg in args):
        return False
    return not (args and args[0] in HELPERS)


def is_command(command: str) -> bool:
    """Does ``#{pane_current_command}`` mean Codex runs in the pane (the native binary, or node running its launcher)?"""
    name = command.rsplit("/", 1)[-1]
    return name in _NAMES or name in _RUNTIMES


def version_of(info: ProcessInfo, *, proc: str = "/proc") -> str | None:
    """The Codex version of its install (None if it cannot tell), from the files beside the native binary."""
    candidates: list[str] = []
    try:
        candidates.append(os.readlink(f"{proc}/{info.pid}/exe"))
    except OSError:
        pass
    if info.argv and os.path.isabs(info.argv[0]):
        candidates.append(info.argv[0])
    for binary in candidates:
        version = _install_version(Path(binary).parent)
        if version:
            return version
    return None


def _install_version(folder: Path) -> str | None:
    """``codex-package.json`` or ``@openai/codex``'s ``package.json`` at or up to four folders above ``folder``."""
    for candidate in (folder, *list(folder.parents)[:4]):
        for name, named in (("codex-package.json", lambda _: True), ("package.json", lambda n: n == "@openai/codex")):
            version = manifest_version(candidate / name, named, _VERSION)
            if version:
                return version
    return None
