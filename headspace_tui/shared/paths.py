"""Where headspace keeps things: one rule per kind of folder, for every module.

* settings: ``$XDG_CONFIG_HOME/headspace`` (``~/.config/headspace``);
* state (event log, log file, the palette's theme choice):
  ``$XDG_STATE_HOME/headspace`` (``~/.local/state/headspace``);
* data (the hook program headspace puts on a remote host):
  ``$XDG_DATA_HOME/headspace`` (``~/.local/share/headspace``);
* runtime (the hook spool, the answer channel, send locks):
  ``$XDG_RUNTIME_DIR/headspace``, else ``/tmp/headspace-<uid>``.

A relative or empty ``XDG_*`` is ignored, as the XDG spec says.  Each takes
the environment to read, because headspace resolves them for environments
other than its own: the ``XDG_RUNTIME_DIR`` that Claude's panes see, a
remote host's (this module travels in the probe, so it is standard library
and Python 3.9 only, which is also why it is not built on platformdirs: that
reads only its own process's environment, and would move the settings on a
Mac away from the ``~/.config`` the README documents).  The standalone hook
program keeps its own copy of the runtime rule: it imports nothing of
headspace's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP = "headspace"


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _xdg(env: Mapping[str, str], name: str, fallback: str) -> Path:
    base = env.get(name, "")
    if not base or not os.path.isabs(base):
        base = os.path.join(_home(env), fallback)
    return Path(base) / APP


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    return _xdg(os.environ if env is None else env, "XDG_CONFIG_HOME", ".config")


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    return _xdg(os.environ if env is None else env, "XDG_STATE_HOME", os.path.join(".local", "state"))


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    return _xdg(os.environ if env is None else env, "XDG_DATA_HOME", os.path.join(".local", "share"))


def runtime_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / APP
    return Path(f"/tmp/{APP}-{os.getuid()}")
