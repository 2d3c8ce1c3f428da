"""The rules file, ``$XDG_CONFIG_HOME/headspace/rules.toml``: read, checked, each bad rule refused with its line.

A rule is refused (the others still load) when a field is missing or of the
wrong kind, when it is broader than a rule may be (an allow must name what
it allows: for a shell tool its words, for a file tool its paths; no
``*`` alone), when it has neither ``ttl`` nor ``permanent = true``, or when
one of its ``match`` examples does not fit it or a ``not_match`` does.  The
file itself must be a regular file of the user's, not writable by others,
and small; else nothing loads (rules from a file anyone could edit would
answer for anyone).  Rules start in shadow mode unless the table says
``shadow = false``.

Which families a rule may name, and which of their tools run a shell line
or act on a file, is the families' word: the caller gives each family's
``Tools`` (``detect.families.vocabulary()``), and a rule is checked against
the tools of the families it applies to.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..model import DEFAULT_FAMILY, NO_TOOLS, Tools, Vocabulary
from ..shared.paths import config_dir
from ..shared.safe_files import Unreadable, read_with_stat
from .controls import protected
from .judge import judge
from .model import Call, Decision, Rule
from .programs import table_of

MAX_FILE = 256 << 10
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TTL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_BURST = re.compile(r"^\s*(\d+)\s+in\s+(\d+(?:\.\d+)?)\s*(s|m|h|d)\s*$")
# Unless the rule says otherwise, a rule that answered this often this quickly pauses itself: a loop, not a person's pace.
DEFAULT_BURST = (20, 600.0)
UNTIL_IDLE_CAP = 86400.0  # an ``until = "idle"`` rule without a ttl: an agent that never rests does not keep it for ever
FIELDS = frozenset(
    {
        "id",
        "decision",
        "hosts",
        "project",
        "agents",
        "panes",
        "tool",
        "command",
        "prefix",
        "path",
        "ttl",
        "permanent",
        "max_uses",
        "until",
        "pause_after",
        "shadow",
        "unsandboxed",
        "match",
        "not_match",
    }
)


@dataclass(frozen=True)
class Loaded:
    """The rules that loaded, and one line per rule (or file) refused."""

    rules: tuple[Rule, ...] = ()
    errors: tuple[str, ...] = ()
    path: str = ""
    digest: str = ""  # a hash of the file's text as read, for the audit ("" when there was none)

    def rule(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)


def default_path(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "rules.toml"


def load(path: Path | str, *, tools: Vocabulary, uid: int | None = None) -> Loaded:
    """The file at ``path``, read safely and checked against the families' ``tools`` (a missing file: no rules, no error)."""
    try:
        data, info = read_with_stat(path, MAX_FILE)
    except FileNotFoundError:
        return Loaded(path=str(path))
    except Unreadable as exc:
        return Loaded(errors=(f"{path}: {exc}; no rules loaded",), path=str(path))
    owner = os.getuid() if uid is None else uid
    if info.st_uid != owner or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return Loaded(errors=(f"{path}: must be yours and writable by you alone (chmod 600); no rules loaded",), path=str(path))
    return parse_rules(data.decode("utf-8", "replace"), str(path), tools=tools)


def parse_rules(text: str, path: str = "rules.toml", *, tools: Vocabulary) -> Loaded:
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return Loaded(errors=(f"{path}: {exc}; no rules loaded",), path=path)
    tables = document.get("rule", [])
    if not isinstance(tables, list):
        return Loaded(errors=(f"{path}: 'rule' must be [[rule]] tables; no rules loaded",), path=path)
    lines = _table_lines(text)
    if len(lines) != len(tables):
        # A rule is known by its text (its key): without each table's own lines, one rule's revocation could follow another.
        return Loaded(errors=(f"{path}: write each rule as a [[rule]] table of its own ({len(tables)} rules, {len(lines)} such tables); no rules loaded",), path=path)
    rules, errors, seen = [], [], set()
    for n, table in enumerate(tables):
        line = lines[n] if n < len(lines) else 0
        try:
            rule = _rule(table, line, _source(text, lines, n), tools)
            if rule.id in seen:
                raise ValueError(f"a second rule named {rule.id!r}")
            seen.add(rule.id)
            _check_examples(rule, tools)
        except ValueError as exc:
            name = table.get("id") if isinstance(table, dict) and isinstance(table.get("id"), str) else f"#{n + 1}"
            errors.append(f"{path}:{line}: rule {name} refused: {exc}")
            continue
        rules.append(rule)
    return Loaded(tuple(rules), tuple(errors), path, digest)


_TABLE = re.compile(r"""^\s*\[\[\s*(?:rule|"rule"|'rule')\s*\]\]\s*(?:#.*)?$""")


def _table_lines(text: str) -> list[int]:
    """The line of each ``[[rule]]`` header, however TOML lets it be spelled (``[[ rule ]]``, ``[["rule"]]``)."""
    return [i + 1 for i, line in enumerate(text.split("\n")) if _TABLE.match(line)]


def _source(text: str, lines: list[int], n: int) -> str:
    all_lines = text.split("\n")
    if n >= len(lines):
        return ""
    end = lines[n + 1] - 1 if n + 1 < len(lines) else len(all_lines)
    return "\n".join(all_lines[lines[n] - 1 : end]).strip()


def _strings(table: dict[str, Any], key: str, *, one_ok: bool = True) -> tuple[str, ...]:
    value = table.get(key)
    if value is None:
        return ()
    if isinstance(value, str) and one_ok:
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"{key} must be a string or a list of strings")


def _rule(table: object, line: int, source: str, vocabulary: Vocabulary) -> Rule:
    if not isinstance(table, dict):
        raise ValueError("not a table")
    unknown = set(table) - FIELDS
    if unknown:
        raise ValueError(f"no field {sorted(unknown)[0]!r}")
    ident = table.get("id")
    if not isinstance(ident, str) or not _ID.match(ident):
        raise ValueError("id must be letters, digits, '.', '_' or '-' (up to 64)")
    try:
        decision = Decision(table.get("decision"))
    except ValueError:
        raise ValueError("decision must be allow, deny or notify") from None
    hosts = _strings(table, "hosts")
    if not hosts:
        raise ValueError('hosts is required ("local" or configured host names)')
    agents = _strings(table, "agents")
    if set(agents) - set(vocabulary):
        raise ValueError(f"agents must be among {', '.join(sorted(vocabulary))}")
    tools = _tools_of(vocabulary, agents)
    project = table.get("project", "")
    if not isinstance(project, str) or (project and not project.startswith("/")):
        raise ValueError("project must be an absolute folder")
    tool = table.get("tool", "")
    if not isinstance(tool, str):
        raise ValueError("tool must be a string")
    command = table.get("command", "")
    if not isinstance(command, str):
        raise ValueError("command must be a string (a glob per word)")
    prefix = _strings(table, "prefix", one_ok=False)
    paths = _strings(table, "path")
    if command and prefix:
        raise ValueError("command or prefix, not both")
    if (command or prefix) and paths:
        raise ValueError("a shell rule (command, prefix) or a file rule (path), not both")
    words = tuple(command.split())
    if decision is Decision.ALLOW:
        if not (words or prefix or paths):
            raise ValueError("an allow must name what it allows: command or prefix (shell), path (files)")
        if tool in tools.shell and not (words or prefix):
            raise ValueError(f"an allow of {tool} must name its words (command or prefix)")
        if tool in tools.files and not paths:
            raise ValueError(f"an allow of {tool} must name its paths")
        if words and all(set(w) <= {"*", "?"} for w in words):
            raise ValueError("a command of wildcards alone allows anything")
        if any(all(set(part) <= {"*", "?"} for part in p.strip("/").split("/")) for p in paths):
            raise ValueError("a path of wildcards alone allows anything")
        _check_allow(words, prefix, paths, tool if tool in tools.writes else "", project)
    permanent = table.get("permanent", False)
    ttl_text = table.get("ttl")
    if not isinstance(permanent, bool):
        raise ValueError("permanent must be true or false")
    until = table.get("until")
    if until is not None and until != "idle":
        raise ValueError('until must be "idle" (the rule ends for each agent when its task does)')
    if ttl_text is None and not permanent and until is None:
        raise ValueError('ttl is required (such as "2h"), unless until = "idle" or permanent = true')
    ttl = UNTIL_IDLE_CAP if until is not None and ttl_text is None and not permanent else 0.0
    if ttl_text is not None:
        found = _TTL.match(ttl_text) if isinstance(ttl_text, str) else None
        if found is None:
            raise ValueError('ttl must be a number and a unit: "90s", "30m", "2h", "7d"')
        ttl = float(found.group(1)) * _UNITS[found.group(2)]
    max_uses = table.get("max_uses", 0)
    if not isinstance(max_uses, int) or isinstance(max_uses, bool) or max_uses < 0:
        raise ValueError("max_uses must be a whole number")
    burst, window = DEFAULT_BURST
    if "pause_after" in table:
        found_burst = _BURST.match(table["pause_after"]) if isinstance(table["pause_after"], str) else None
        if found_burst is None or int(found_burst.group(1)) < 1:
            raise ValueError('pause_after must be a count and a span: "10 in 5m"')
        burst, window = int(found_burst.group(1)), float(found_burst.group(2)) * _UNITS[found_burst.group(3)]
    shadow = table.get("shadow", True)
    if not isinstance(shadow, bool):
        raise ValueError("shadow must be true or false")
    unsandboxed = table.get("unsandboxed", False)
    if not isinstance(unsandboxed, bool):
        raise ValueError("unsandboxed must be true or false")
    return Rule(
        id=ident,
        decision=decision,
        hosts=hosts,
        line=line,
        project=os.path.realpath(project) if project else "",
        agents=agents,
        panes=_strings(table, "panes"),
        tool=tool,
        command=words,
        prefix=prefix,
        paths=paths,
        ttl=ttl,
        permanent=permanent,
        max_uses=max_uses,
        until_idle=until == "idle",
        burst=burst,
        burst_window=window,
        shadow=shadow,
        unsandboxed=unsandboxed,
        match=_strings(table, "match"),
        not_match=_strings(table, "not_match"),
        source=source,
    )


def _tools_of(vocabulary: Vocabulary, agents: tuple[str, ...]) -> Tools:
    """The tools of the families a rule applies to (every family's when it names none), as one vocabulary for its checks."""
    out = NO_TOOLS
    for name in agents or tuple(vocabulary):
        out = out | vocabulary[name]
    return out


def _names_its_code(prefix: tuple[str, ...]) -> bool:
    """Does a prefix name the code its program runs: a plain word not an option's value (``python -m pytest``, ``npx prettier``)?"""
    for before, word in zip(prefix, prefix[1:], strict=False):
        if word.startswith("-") or word == "-":
            continue
        if not before.startswith("-") or before == "-m":
            return True
    return False


def _check_allow(words: tuple[str, ...], prefix: tuple[str, ...], paths: tuple[str, ...], writer: str, project: str) -> None:
    """Refuse an allow that would let through more than it can see: a prefix over code, a write with no place, the agent's own controls."""
    if words:
        table = table_of(words[0])
        first = next((w for w in words[1:] if not w.startswith("-")), "")
        if table is not None and table.fetches and any(c in first for c in "*?"):
            raise ValueError(f"a wildcard for the package {words[0]} fetches and runs allows any package: name it")
    if prefix:
        table = table_of(prefix[0])
        if table is not None and table.code == "all":
            raise ValueError(f"a prefix over {prefix[0]} allows whatever command or code its words carry: write the whole command (command = ...)")
        if table is not None and table.code == "first" and not _names_its_code(prefix):
            raise ValueError(f"a prefix over {prefix[0]} must name what it runs (its script, module or package): its first argument is code")
        if table is not None and table.writes and not project:
            raise ValueError(f"{prefix[0]} writes the files it is given: a prefix rule over it needs project")
    for pattern in paths:
        control = next((part for part in pattern.split("/") if protected("/" + part)), None)
        if control is not None:
            raise ValueError(f"{pattern!r} names {control}, one of the agent's own controls: no rule may allow it")
    if paths and not project and any(not p.startswith("/") for p in paths):
        raise ValueError("a relative path needs project (the folder it is relative to)")
    if writer and not project:
        raise ValueError(f"{writer} writes files: an allow of it needs project")


def _example_call(rule: Rule, example: str, vocabulary: Vocabulary) -> Call:
    """An example as a call of the first family the rule names (the default family's when it names none), by that family's own tool names."""
    family = rule.agents[0] if rule.agents else DEFAULT_FAMILY
    tools = vocabulary.get(family, NO_TOOLS)
    shell = rule.shell or rule.tool in tools.shell
    own = sorted(tools.shell if shell else tools.writes or tools.files)
    tool = rule.tool or (own[0] if own else "")
    if not tool:
        raise ValueError(f"{family} has no {'shell' if shell else 'file'} tool the rules read: its examples cannot be tried")
    host = rule.hosts[0]
    cwd = rule.project or "/"
    return Call(tool=tool, command=example if shell else "", path="" if shell else example, host=host, cwd=cwd, family=family, tools=tools)


def _check_examples(rule: Rule, vocabulary: Vocabulary) -> None:
    """Each ``match`` must fit the rule alone and each ``not_match`` must not (the rule is tried as if live)."""
    live = replace(rule, shadow=False)
    for example in rule.match:
        verdict = judge([live], _example_call(rule, example, vocabulary))
        if verdict.decision is not rule.decision:
            raise ValueError(f"its example {example!r} does not fit it ({verdict.why})")
    for example in rule.not_match:
        verdict = judge([live], _example_call(rule, example, vocabulary))
        if verdict.decision is rule.decision:
            raise ValueError(f"its counter-example {example!r} fits it")


def describe(rules: Sequence[Rule]) -> list[str]:
    """One line per rule for ``headspace rules list``: where it is, what it decides, for how long, in what mode."""
    out = []
    for rule in rules:
        what = " ".join(rule.command) if rule.command else (" ".join(rule.prefix) + " …") if rule.prefix else ", ".join(rule.paths) or rule.tool or "any call"
        life = "permanent" if rule.permanent else f"ttl {int(rule.ttl)}s" if rule.ttl else ""
        life = " ".join(filter(None, (life, "until idle" if rule.until_idle else "")))
        mode = "shadow" if rule.shadow else "live"
        out.append(f"line {rule.line}: {rule.id}  {rule.decision.value} {what}  on {', '.join(rule.hosts)}{' in ' + rule.project if rule.project else ''}  {life}  {mode}")
    return out
