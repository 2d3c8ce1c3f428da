"""Does a rule fit a call, and what do all the rules say of it.

Deny wins over every allow.  A shell call is allowed only when every simple
command it runs (rules/shell.py) fits an allow rule and every file it
writes is inside the project (or ``/dev/null``); a command the parser
cannot read fits no allow (it goes to the person), though a deny may still
fit its first word.  Globs: ``*`` and ``?`` stay inside one path segment
(never cross ``/``), ``**`` crosses them; one pattern word per command word.
Pure.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import cache

from .model import FILE_TOOLS, SHELL_TOOLS, Call, Decision, Rule, Verdict
from .shell import Parsed, Unreadable, parse


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def glob_match(pattern: str, text: str) -> bool:
    return _glob(pattern).fullmatch(text) is not None


def inside(path: str, folder: str) -> bool:
    """Is ``path`` (absolute, normalised) ``folder`` or inside it?"""
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder + "/") or folder == "/"


def real(path: str, cwd: str) -> str:
    """The absolute, symlink-resolved path a call names (relative to its folder)."""
    return os.path.realpath(os.path.join(cwd or "/", os.path.expanduser(path) if path.startswith("~/") else path))


def applies(rule: Rule, call: Call) -> str:
    """Why ``rule`` is not for ``call``'s place ("" when it is): host, project, agent, pane, tool."""
    if call.host not in rule.hosts:
        return f"host {call.host} is not one of {', '.join(rule.hosts)}"
    if rule.project and not (call.cwd and inside(call.cwd, rule.project)):
        return f"{call.cwd or 'an unknown folder'} is outside {rule.project}"
    if rule.agents and call.family not in rule.agents:
        return f"a {call.family} agent"
    if rule.panes and call.pane not in rule.panes:
        return f"pane {call.pane}"
    if rule.tool and rule.tool != call.tool:
        return f"tool {call.tool}"
    if rule.shell and call.tool not in SHELL_TOOLS:
        return f"{call.tool} is not a shell call"
    if rule.paths and call.tool not in FILE_TOOLS:
        return f"{call.tool} is not a file call"
    return ""


def fits_words(rule: Rule, words: tuple[str, ...]) -> bool:
    """Does one simple command fit the rule's ``command`` (word by word) or ``prefix``?"""
    if rule.prefix:
        return words[: len(rule.prefix)] == rule.prefix
    if rule.command:
        return len(words) == len(rule.command) and all(glob_match(p, w) for p, w in zip(rule.command, words, strict=True))
    return True


def fits_path(rule: Rule, call: Call) -> bool:
    if not rule.paths:
        return True
    path = real(call.path, call.cwd)
    for pattern in rule.paths:
        anchored = pattern if pattern.startswith("/") else os.path.join(rule.project or call.cwd, pattern)
        if glob_match(anchored, path):
            return True
    return False


def judge(rules: Iterable[Rule], call: Call) -> Verdict:
    """What the rules say of ``call``: a deny that fits any of it, else allows that fit every part of it, else a notify, else nothing."""
    placed = [r for r in rules if not applies(r, call)]
    if call.tool not in SHELL_TOOLS:
        for decision in (Decision.DENY, Decision.ALLOW, Decision.NOTIFY):
            for rule in (r for r in placed if r.decision is decision and not r.shell and fits_path(r, call)):
                fields = (*_place(rule), *(("path",) if rule.paths else ()))
                return Verdict(decision, rule.id, rule.shadow, f"{rule.id} fits {', '.join(fields)}", fields)
        return Verdict(None, why="no rule fits")
    try:
        parsed: Parsed | None = parse(call.command)
        unreadable = ""
    except Unreadable as exc:
        parsed, unreadable = None, str(exc)
    for rule in (r for r in placed if r.decision is Decision.DENY):
        fields = _denies(rule, call, parsed)
        if fields:
            return Verdict(Decision.DENY, rule.id, rule.shadow, f"{rule.id} fits {', '.join(fields)}", fields)
    if parsed is None:
        return Verdict(None, why=f"not read plainly ({unreadable}): the person answers")
    allows = [r for r in placed if r.decision is Decision.ALLOW and r.shell]  # an allow of a shell call names its words (rules_file.py)
    chosen: list[Rule] = []
    for words in parsed.commands:
        fitting = next((r for r in allows if fits_words(r, words)), None)
        if fitting is None:
            chosen = []
            break
        if fitting not in chosen:
            chosen.append(fitting)
    outside = [w for w in parsed.writes if w != "/dev/null" and not all(inside(real(w, call.cwd), r.project or call.cwd) for r in chosen)]
    if chosen and not outside:
        fields = tuple(dict.fromkeys(f for r in chosen for f in (*_place(r), "command" if r.command else "prefix" if r.prefix else "tool")))
        names = "+".join(r.id for r in chosen)
        return Verdict(Decision.ALLOW, names, any(r.shadow for r in chosen), f"{names} fit{'s' if len(chosen) == 1 else ''} every part", fields)
    for rule in (r for r in placed if r.decision is Decision.NOTIFY):
        if not rule.shell or any(fits_words(rule, words) for words in parsed.commands):
            return Verdict(Decision.NOTIFY, rule.id, rule.shadow, f"{rule.id} fits", _place(rule))
    if outside:
        return Verdict(None, why=f"writes {outside[0]} outside the project: the person answers")
    return Verdict(None, why="not every part fits an allow" if len(parsed.commands) > 1 else "no rule fits")


def _place(rule: Rule) -> tuple[str, ...]:
    return tuple(f for f, on in (("host", True), ("project", bool(rule.project)), ("agent", bool(rule.agents)), ("tool", bool(rule.tool))) if on)


def _denies(rule: Rule, call: Call, parsed: Parsed | None) -> tuple[str, ...]:
    """The fields by which a deny fits a shell call ("": it does not): any part of it, or the words it begins with when it cannot be read."""
    if not rule.shell:
        return _place(rule)
    if parsed is not None:
        return (*_place(rule), "command" if rule.command else "prefix") if any(fits_words(rule, w) for w in parsed.commands) else ()
    words = tuple(call.command.split())
    if rule.prefix and words[: len(rule.prefix)] == rule.prefix:
        return (*_place(rule), "prefix")
    return ()
