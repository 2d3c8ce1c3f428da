"""Which process is Qwen Code, and which version its install is.

Measured on 0.24.4 (npm install): typing ``qwen`` runs::

    bash
    └─ node /…/node_modules/.bin/qwen                         the launcher
       └─ /usr/bin/node --expose-gc /…/qwen-code/cli.js         the CLI
          └─ /usr/bin/node --expose-gc /…/qwen-code/cli.js      a worker of its own

As Gemini CLI's (it is a fork of it), the launcher lives as long as the
session and is the pane's foreground ``node``: it is the agent.  Its
children are started with node's absolute ``execPath`` as ``argv[0]`` and
never match.  The version is in ``@qwen-code/qwen-code``'s ``package.json``.
"""

from __future__ import annotations

import os

from ...shared.proctree import ProcessInfo
from ..node_cli import runs_under_node, script, version_near

PACKAGE = "@qwen-code/qwen-code"


def _is_qwen_script(path: str) -> bool:
    """``…/.bin/qwen`` or a ``.js`` of the ``qwen-code`` package (``cli-entry.js``, ``cli.js``)."""
    base = os.path.basename(path)
    return base == "qwen" or ("qwen-code" in path and base.endswith(".js"))


def recognise(info: ProcessInfo) -> bool:
    """Is this the Qwen Code launcher (the one process per session that is the agent)?"""
    if not runs_under_node(info):
        return False
    path = script(info)
    return path is not None and _is_qwen_script(path) and not os.path.isabs(info.argv[0])


def version_of(info: ProcessInfo, *, proc: str = "/proc") -> str | None:
    """The version in the install's ``package.json`` (the bin's real path, up to three folders above it)."""
    return version_near(script(info), info, lambda name: name == PACKAGE, proc=proc)
