"""The agent families headspace knows, and which process in a pane's tree is one.

The one registration each family needs: its ``FAMILY`` in ``FAMILIES``.
Order matters only where two families could claim one process (none do).
"""

from __future__ import annotations

from collections import deque

from ..shared.proctree import ProcessTable
from .claude import FAMILY as CLAUDE
from .family import Family

FAMILIES: tuple[Family, ...] = (CLAUDE,)
BY_NAME: dict[str, Family] = {family.name: family for family in FAMILIES}


def family_named(name: str) -> Family:
    """The family called ``name``; ValueError naming the known ones otherwise."""
    family = BY_NAME.get(name.strip().lower())
    if family is None:
        raise ValueError(f"unknown agent {name!r} (known: {', '.join(BY_NAME)})")
    return family


def find_agent(root_pid: int, table: ProcessTable) -> tuple[int, Family] | None:
    """The first agent process in the tree under ``root_pid`` (itself included), and its family.

    Breadth-first, so the process nearest the pane wins: an agent another
    agent started (a tool that runs ``codex exec``) is its child, not the
    pane's agent.  None if no family recognises any process there.
    """
    seen: set[int] = set()
    queue: deque[int] = deque([root_pid])
    while queue:
        pid = queue.popleft()
        if pid in seen:
            continue
        seen.add(pid)
        info = table.get(pid)
        if info is not None:
            for family in FAMILIES:
                if family.recognise(info):
                    return pid, family
        queue.extend(table.children_of(pid))
    return None
