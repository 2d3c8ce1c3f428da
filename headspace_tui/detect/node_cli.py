"""Agents that are node programs installed by npm (Gemini CLI, Qwen Code, Copilot CLI's loader): their script and version.

Typing ``gemini``, ``qwen`` or ``copilot`` runs ``node …/node_modules/.bin/<name>``
(the bin's shebang through ``env``): the process's ``argv[0]`` is the bare
``node`` and its first argument that is not a flag is the script.  The
install's version is in the ``package.json`` a few folders above the
script's real path.  Pure but for reading /proc and that manifest.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from ..shared.proctree import ProcessInfo
from .install import manifest_version

JS_RUNTIME = re.compile(r"^(node|nodejs|bun)(\d[\w.-]*)?(\.exe)?$")
VERSION = re.compile(r"^\d+\.\d+\.\d+(?:-[\w.]+)?$")


def script(info: ProcessInfo) -> str | None:
    """The script a JS runtime runs (the first argument that is not a runtime flag)."""
    for arg in info.argv[1:]:
        if not arg.startswith("-"):
            return arg
    return None


def runs_under_node(info: ProcessInfo) -> bool:
    """Is this process a JS runtime (by its argv[0] or its name)?"""
    return bool(info.argv) and bool(JS_RUNTIME.match(os.path.basename(info.argv[0])) or JS_RUNTIME.match(info.comm))


def version_near(path: str | None, info: ProcessInfo, named: Callable[[str], bool], *, proc: str = "/proc") -> str | None:
    """The version in the ``package.json`` of a package ``named`` accepts, in up to three folders above ``path``'s real
    path (relative: from the process's own folder)."""
    if path is None:
        return None
    if not os.path.isabs(path):
        try:
            path = os.path.join(os.readlink(f"{proc}/{info.pid}/cwd"), path)
        except OSError:
            return None
    try:
        real = Path(os.path.realpath(path))
    except (OSError, ValueError):
        return None
    for folder in list(real.parents)[:3]:
        version = manifest_version(folder / "package.json", named, VERSION)
        if version:
            return version
    return None
