"""Which process is Gemini CLI, and which version its install is.

Measured on 0.53.0 and 0.61.0 (npm installs): the ``gemini`` bin is a
symlink to ``@google/gemini-cli/bundle/gemini.js`` with the shebang
``#!/usr/bin/env node``, so typing ``gemini`` runs::

    bash
    └─ node /…/node_modules/.bin/gemini                      the launcher
       └─ /usr/bin/node --max-old-space-size=N /…/.bin/gemini  the CLI itself

The launcher always starts the CLI as a child (``GEMINI_CLI_NO_RELAUNCH``
set in the child's environment stops it recursing; the memory flag only
when half the machine's memory exceeds node's default heap), waits for it,
and starts it again when it exits with 199 (after "Trust folder", a
settings change, ``/restart``): the child's pid changes within one session,
the launcher's does not.  So the **launcher** is the process that is the
agent: it lives exactly as long as the session and is the pane's foreground
process (``#{pane_current_command}`` is ``node``).

Telling them apart from the process table alone: the child is spawned with
``process.execPath``, an absolute path, as its ``argv[0]``; a launcher run
from a shell (the bin's shebang through ``env``, or ``node gemini`` typed)
has the bare ``node``.  A child never matches; with ``GEMINI_CLI_NO_RELAUNCH``
there is only the one process, which matches.  (A launcher typed as
``/usr/bin/node …/gemini`` looks like a child and is not recognised: its
argv cannot be told from its child's.)
"""

from __future__ import annotations

import os

from ...shared.proctree import ProcessInfo
from ..node_cli import runs_under_node, script, version_near

PACKAGE = "@google/gemini-cli"


def _is_gemini_script(path: str) -> bool:
    """``…/.bin/gemini``, ``…/gemini-cli/bundle/gemini.js`` or ``…/gemini-cli/dist/index.js``."""
    base = os.path.basename(path)
    if base in ("gemini", "gemini.js"):
        return True
    return "gemini-cli" in path and base.endswith(".js")


def recognise(info: ProcessInfo) -> bool:
    """Is this the Gemini CLI launcher (the one process per session that is the agent)?"""
    if not info.argv:
        return False
    if info.comm == "gemini" and info.argv0_name == "gemini":
        # A single-executable build (the CLI's getSpawnConfig handles one: it
        # relaunches its own absolute execPath); read from its source, not measured.
        return not os.path.isabs(info.argv[0])
    if not runs_under_node(info):
        return False
    path = script(info)
    if path is None or not _is_gemini_script(path):
        return False
    # The relaunched child: argv[0] is node's absolute execPath.
    return not os.path.isabs(info.argv[0])


def version_of(info: ProcessInfo, *, proc: str = "/proc") -> str | None:
    """The version in the install's ``package.json`` (the bin's real path, up to three folders above it)."""
    return version_near(script(info), info, lambda name: name == PACKAGE, proc=proc)
