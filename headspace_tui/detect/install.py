"""What an agent's install says of its version: its small manifest (``package.json``), read defensively.

Every family reads its version from the files its install ships, never by
running the agent.  A manifest is read as a regular file only (checked on
the opened descriptor, so a pipe or a device cannot block), capped, and
trusted only when its name is the family's package.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ..shared.safe_files import Unreadable, loads, read_regular

PACKAGE_CAP = 64 << 10  # a manifest larger than this is not read


def read_manifest(path: Path) -> dict | None:
    """The JSON object at ``path``, or None (missing, not a regular file, too large, not an object)."""
    try:
        data = loads(read_regular(path, PACKAGE_CAP, follow=True), what=str(path))
    except (OSError, Unreadable):
        return None
    return data if isinstance(data, dict) else None


def manifest_version(path: Path, named: Callable[[str], bool], version: re.Pattern[str]) -> str | None:
    """The version in the manifest at ``path`` when ``named`` accepts its name and ``version`` matches it
    (its first group when it has one: a platform suffix left out), else None."""
    data = read_manifest(path)
    if data is None or not named(str(data.get("name", ""))):
        return None
    match = version.match(str(data.get("version", "")))
    if match is None:
        return None
    return match.group(1) if version.groups else match.group(0)


def version_above(folder: Path, levels: int, named: Callable[[str], bool], version: re.Pattern[str], file: str = "package.json") -> str | None:
    """``manifest_version`` of ``file`` in ``folder`` or the first one found up to ``levels`` folders above it."""
    for candidate in (folder, *list(folder.parents)[:levels]):
        found = manifest_version(candidate / file, named, version)
        if found:
            return found
    return None
