"""A rule as data: where it applies, what it matches, what it decides, for how long.

The file's words (docs/rules.md) become a ``Rule``; a ``Call`` is what an
agent asked, as headspace saw it whole (through Claude's hook, or a dialog
that shows the entire command); ``Verdict`` is what the rules say of it.
Pure data: the matching is ``judge.py``, the file ``rules_file.py``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum

from ..model import DEFAULT_FAMILY, NO_TOOLS, Tools


class Decision(Enum):
    ALLOW = "allow"  # the plain once-only "Yes"; never "don't ask again", never a wider mode
    DENY = "deny"  # "No"; wins over every allow
    NOTIFY = "notify"  # ring loudly, answer nothing


@dataclass(frozen=True)
class Rule:
    """One ``[[rule]]`` table, checked: ``line`` is where it begins in the file."""

    id: str
    decision: Decision
    hosts: tuple[str, ...]
    line: int = 0
    project: str = ""  # a folder (real path): the call's folder must be it or inside it ("" anywhere)
    agents: tuple[str, ...] = ()  # families ("" all)
    panes: tuple[str, ...] = ()  # pane targets or ids ("" all)
    tool: str = ""  # the tool's name ("" any)
    command: tuple[str, ...] = ()  # shell: one glob per word of each simple command
    prefix: tuple[str, ...] = ()  # shell: the simple command's first words
    paths: tuple[str, ...] = ()  # file tools: globs of the path, relative to ``project`` unless absolute
    ttl: float = 0.0  # seconds it lives from when it was first loaded (0: ``permanent``)
    permanent: bool = False
    max_uses: int = 0  # 0: no limit
    until_idle: bool = False  # ``until = "idle"``: for each agent, it ends when that agent's task does (its turn ends)
    burst: int = 0  # ``pause_after = "K in M"``: it pauses itself after K answers within ``burst_window`` seconds
    burst_window: float = 0.0
    shadow: bool = True  # log what it would do, answer nothing
    unsandboxed: bool = False  # it may answer a Bash call Claude asks to run outside its sandbox (``dangerouslyDisableSandbox``)
    match: tuple[str, ...] = ()  # examples that must match (checked at load)
    not_match: tuple[str, ...] = ()  # examples that must not
    source: str = ""  # the table's text as written, for ``rules list``

    @property
    def shell(self) -> bool:
        return bool(self.command or self.prefix)

    @property
    def placed_by(self) -> tuple[str, ...]:
        """The fields that say where it applies, for the audit of what matched: its host, and its project, agents and tool when set."""
        return tuple(f for f, on in (("host", True), ("project", bool(self.project)), ("agent", bool(self.agents)), ("tool", bool(self.tool))) if on)

    @property
    def key(self) -> tuple[str, str]:
        """(id, a hash of its text): the rule as written now; an edited rule is another, with a ttl and uses of its own."""
        return self.id, hashlib.sha256(self.source.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Call:
    """What an agent asked to do, whole: the tool, its command or path, and where."""

    tool: str
    command: str = ""  # a shell call's command line
    path: str = ""  # a file tool's path (as given: relative to ``cwd`` or absolute)
    host: str = "local"
    cwd: str = ""  # the agent's folder (real path)
    family: str = DEFAULT_FAMILY
    tools: Tools = NO_TOOLS  # its family's names for its tools (``NO_TOOLS``: no call of it is read as shell or file)
    pane: str = ""  # its pane's id or target
    unsandboxed: bool = False  # Claude asks to run it outside its sandbox
    unread: str = ""  # why the call is not known whole: a part of its input the rules do not judge ("" when whole)

    @property
    def example(self) -> str:
        return self.command or self.path


@dataclass(frozen=True)
class Verdict:
    """What the rules say of a call: the decision (None: no rule applies), which rule, why, and what did not fit."""

    decision: Decision | None
    rule: str = ""
    shadow: bool = False
    why: str = ""
    matched: tuple[str, ...] = field(default=())  # the fields that matched, for the audit
    answered: bool = False  # the hook took the rule's answer
