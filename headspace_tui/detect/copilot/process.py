"""Which process is GitHub Copilot CLI, and which version its install is.

Measured on 1.0.102 (npm install): typing ``copilot`` runs::

    bash
    └─ node /…/node_modules/.bin/copilot                           the loader (npm-loader.js)
       └─ /…/@github/copilot-linux-x64/copilot                       the native CLI (comm "MainThread")

The loader lives as long as the session and is the pane's foreground
``node``: it is the agent (the nearest match to the pane wins, so a native
CLI started by its loader is never a second agent).  A native CLI started
on its own (its package's binary typed by path) is recognised too.  The
version is in the ``package.json`` of ``@github/copilot`` (or of its
platform package, beside the binary).
"""

from __future__ import annotations

import os

from ...shared.proctree import ProcessInfo
from ..node_cli import runs_under_node, script, version_near

PACKAGE = "@github/copilot"


def _ours(name: str) -> bool:
    """``@github/copilot`` or one of its platform packages (``@github/copilot-linux-x64``)."""
    return name == PACKAGE or name.startswith(PACKAGE + "-")


def _is_loader(path: str) -> bool:
    """``…/.bin/copilot`` or the package's ``npm-loader.js`` / ``index.js``."""
    base = os.path.basename(path)
    return base == "copilot" or (f"{os.sep}@github{os.sep}copilot{os.sep}" in path and base.endswith(".js"))


def _is_native(info: ProcessInfo) -> bool:
    """The native binary of a platform package (``…/@github/copilot-linux-x64/copilot``)."""
    exe = info.argv[0] if info.argv else ""
    return os.path.basename(exe) == "copilot" and f"{os.sep}@github{os.sep}copilot-" in exe


def recognise(info: ProcessInfo) -> bool:
    """Is this Copilot CLI: its loader under node, or its native binary?"""
    if not info.argv:
        return False
    if runs_under_node(info):
        path = script(info)
        return path is not None and _is_loader(path)
    return _is_native(info)


def version_of(info: ProcessInfo, *, proc: str = "/proc") -> str | None:
    """The version in the install's ``package.json``, above the loader's script or beside the native binary."""
    path = script(info) if runs_under_node(info) else (info.argv[0] if info.argv else None)
    return version_near(path, info, _ours, proc=proc)
