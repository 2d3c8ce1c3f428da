"""The agent families headspace knows, and which process in a pane's tree is one.

The one registration each family needs: ``register(its FAMILY)``, below for
the families that ship with headspace (a test registers its own the same
way).  A family shipped in a package of its own is found through its entry
point in the ``headspace.families`` group (``load_plugins``), naming its
``Family`` record; the service and the commands load them before they look.  Everything else in the core (discovery, the monitor, the
guarded keys, ``status``, ``classify --agent``) asks here at the time it
looks, so a family registered later is found like the built-in ones.  Order
matters only where two families could claim one process (none do).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..model import NO_TOOLS, Tools
from ..shared.proctree import ProcessInfo, ProcessTable, find_first
from ..shared.safe_text import clean
from .claude import FAMILY as CLAUDE
from .codex import FAMILY as CODEX
from .copilot import FAMILY as COPILOT
from .family import Family
from .gemini import FAMILY as GEMINI
from .opencode import FAMILY as OPENCODE
from .qwen import FAMILY as QWEN
from .session_usage import Kind

FAMILIES: tuple[Family, ...] = ()  # in the order registered; ``register`` replaces it
BY_NAME: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Make ``family`` known to the core; ValueError if its name is taken (two families, one ``--agent`` name)."""
    global FAMILIES
    if family.name in BY_NAME:
        raise ValueError(f"an agent family named {family.name!r} is registered already")
    BY_NAME[family.name] = family
    FAMILIES = (*FAMILIES, family)
    return family


def unregister(family: Family) -> None:
    """Forget ``family`` (a plug-in unloaded, a test's throwaway family); a family not registered is left alone."""
    global FAMILIES
    if BY_NAME.get(family.name) is family:
        del BY_NAME[family.name]
        FAMILIES = tuple(f for f in FAMILIES if f is not family)


register(CLAUDE)
register(CODEX)
register(GEMINI)
register(OPENCODE)
register(COPILOT)
register(QWEN)

PLUGIN_GROUP = "headspace.families"


@dataclass(frozen=True)
class PluginLoad:
    """What one entry point gave: its name, where it points, and the family it registered or why none ("" when it did)."""

    name: str
    target: str
    family: str = ""
    problem: str = ""

    def said(self) -> str:
        """What it gave, in one line for the user (after the words "agent family plug-in")."""
        if self.problem:
            return f"{self.name} ({self.target}) not loaded: {self.problem}"
        return f"{self.name}: agent family {self.family!r} ({self.target})"


_plugins: tuple[PluginLoad, ...] | None = None  # loaded once per process


def load_plugins() -> tuple[PluginLoad, ...]:
    """Register every family installed under the ``headspace.families`` entry points, once; what each gave.

    A plug-in that cannot be imported, does not name a ``Family``, or takes a
    name already known is left out with its reason (logged, and in
    ``headspace doctor``); the others and the built-in families go on.  Only
    what the user installed into headspace's own environment is found.
    """
    global _plugins
    if _plugins is not None:
        return _plugins
    from importlib.metadata import entry_points

    loads = []
    for point in sorted(entry_points(group=PLUGIN_GROUP), key=lambda p: p.name):
        try:
            family = point.load()
            if not isinstance(family, Family):
                raise TypeError(f"it names a {type(family).__name__}, not an agent family's record (detect.family.Family)")
            register(family)
        except Exception as exc:  # a plug-in is code from outside: any failure leaves it out, never headspace
            problem = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError | TypeError) else str(exc)
            logging.getLogger(__name__).info("agent family plug-in %s (%s) not loaded: %s", point.name, point.value, problem, exc_info=exc)  # said to the user by the caller
            loads.append(PluginLoad(point.name, point.value, problem=clean(problem, 300)))
        else:
            loads.append(PluginLoad(point.name, point.value, family=family.name))
    _plugins = tuple(loads)
    return _plugins


def label_of(name: str) -> str:
    """How a row's family is shown ("Claude", "Codex", "Gemini", "opencode"); a name no family has (a newer headspace's), cleaned."""
    family = BY_NAME.get(name)
    return family.label if family is not None else clean(name, 8)


class UnknownFamily(ValueError):
    """A name no registered family has (``classify --agent``, a row from a newer headspace)."""


def known_family(name: str) -> Family | None:
    """The family called ``name``, or None (a row of a newer headspace's family, a word from outside)."""
    return BY_NAME.get(name.strip().lower())


def holds_hook(name: str) -> bool:
    """Whether family ``name``'s own hook runs away from its pane (``Family.held_hook``: Codex's)."""
    family = known_family(name)
    return family is not None and family.held_hook is not None


def keeps_transcripts(name: str) -> bool:
    """Whether family ``name`` keeps transcripts the service reads (``Family.transcripts``: Claude's), which say the calls that wait."""
    family = known_family(name)
    return family is not None and family.transcripts is not None


def tools_of(name: str) -> Tools:
    """Family ``name``'s tool names as the rules read them; none for a name no family has (its calls are the person's)."""
    family = known_family(name)
    return family.tools if family is not None else NO_TOOLS


def usage_kinds() -> dict[str, Kind]:
    """Every registered family's session records by its name (``Family.usage``): whose tokens the service reads from them."""
    return {family.name: family.usage for family in FAMILIES if family.usage is not None}


def vocabulary() -> dict[str, Tools]:
    """Every registered family's tools by its name: the families a rule may name, and how each one's calls are read."""
    return {family.name: family.tools for family in FAMILIES}


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
