"""The agent families headspace knows, and which process in a pane's tree is one.

The one registration each family needs: its ``FAMILY`` in ``FAMILIES``.
Order matters only where two families could claim one process (none do).
"""

from __future__ import annotations

from ..shared.proctree import ProcessInfo, ProcessTable, find_first
from ..shared.safe_text import clean
from .claude import FAMILY as CLAUDE
from .codex import FAMILY as CODEX
from .family import Family
from .gemini import FAMILY as GEMINI
from .opencode import FAMILY as OPENCODE

FAMILIES: tuple[Family, ...] = (CLAUDE, CODEX, GEMINI, OPENCODE)
BY_NAME: dict[str, Family] = {family.name: family for family in FAMILIES}


def label_of(name: str) -> str:
    """How a row's family is shown ("Claude", "Codex", "Gemini", "opencode"); a name no family has (a newer headspace's), cleaned."""
    family = BY_NAME.get(name)
    return family.label if family is not None else clean(name, 8)


class UnknownFamily(ValueError):
    """A name no registered family has (``classify --agent``, a row from a newer headspace)."""


def family_named(name: str) -> Family:
    """The family called ``name``; UnknownFamily naming the known ones otherwise."""
    family = BY_NAME.get(name.strip().lower())
    if family is None:
        raise UnknownFamily(f"unknown agent {name!r} (known: {', '.join(BY_NAME)})")
    return family


def find_agent(root_pid: int, table: ProcessTable) -> tuple[int, Family] | None:
    """The first agent process in the tree under ``root_pid`` (itself included), and its family.

    Breadth-first, so the process nearest the pane wins: an agent another
    agent started (a tool that runs ``codex exec``) is its child, not the
    pane's agent.  None if no family recognises any process there.
    """
    return find_first(root_pid, table, family_of_process)


def family_of_process(info: ProcessInfo) -> Family | None:
    """The family that recognises this process as its agent, if any."""
    for family in FAMILIES:
        if family.recognise(info):
            return family
    return None
