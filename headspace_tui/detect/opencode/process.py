"""Which process is opencode, and which version its install is.

Measured on 1.15.4 and 1.18.33 (npm ``opencode-ai``): the package's
postinstall puts the native binary (a Bun executable) at
``node_modules/opencode-ai/bin/opencode.exe``, and ``.bin/opencode`` links
to it, so a pane that runs ``opencode`` holds **one** process: comm
``opencode``, argv ``opencode [project]``, ``/proc/<pid>/exe`` the
``opencode.exe``.  Its server and workers are threads of that process (14
at rest), not children; a command it runs (its ``bash`` tool) is a child
shell, which does not match.  A package manager that skipped postinstall
leaves a node launcher (``node …/opencode-ai/bin/opencode``) whose child is
the native binary: the launcher's comm is ``node``, so only the child matches.

Subcommands without the full-screen UI (``opencode serve``, ``web``,
``acp``, ``run``, ``mcp``, ``debug``, …) are helpers or one-shot runs with
nothing to answer: they never match.  ``opencode attach <url>`` draws the
same UI against a running server and matches.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...shared.proctree import ProcessInfo
from ..install import version_above

NAMES = frozenset({"opencode", "opencode.exe"})
# Subcommands that draw no UI to answer (opencode --help, 1.18.33).
NOT_THE_UI = frozenset(
    {
        "serve",
        "web",
        "acp",
        "run",
        "mcp",
        "debug",
        "models",
        "providers",
        "auth",
        "agent",
        "upgrade",
        "uninstall",
        "stats",
        "export",
        "import",
        "github",
        "session",
        "plugin",
        "plug",
        "db",
        "completion",
        "pr",
    }
)
_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:-[\w.]+)?$")


def recognise(info: ProcessInfo) -> bool:
    """Is this process opencode's full-screen UI (not a helper subcommand, not its launcher, not its shell)?"""
    if not ({info.comm, info.argv0_name} & NAMES):
        return False
    first = next((arg for arg in info.argv[1:] if not arg.startswith("-")), "")
    return first not in NOT_THE_UI


def version_of(info: ProcessInfo, *, proc: str = "/proc") -> str | None:
    """The version in the ``package.json`` of the install the process runs from (None if it cannot tell)."""
    candidates: list[str] = []
    try:
        candidates.append(os.path.dirname(os.readlink(f"{proc}/{info.pid}/exe")))
    except OSError:
        pass
    if info.argv and os.path.isabs(info.argv[0]):
        candidates.append(os.path.dirname(info.argv[0]))
    for folder in candidates:
        version = version_above(Path(folder), 2, lambda name: name.startswith(("opencode-ai", "opencode-")), _VERSION)
        if version:
            return version
    return None
