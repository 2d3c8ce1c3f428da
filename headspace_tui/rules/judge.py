"""Does a rule fit a call, and what do all the rules say of it: an allow never answers more than its words say.

Deny wins over every allow, and a deny reads generously (rules/denies.py).

An allow reads narrowly.  A shell call is allowed only when the readers
read it whole (rules/shell.py) and every simple command fits an allow:

* a ``command`` rule word by word, each literal word exactly and each glob
  by ``globs.allows`` (``*`` is any one word, options and refspecs
  included, but never ``.``, ``..`` or a hidden name, and never across
  ``/``); a word a glob matched is also checked as a prefix's tail is;
* a ``prefix`` rule by its first words exactly; each word after them must
  not be an option or word that writes or runs something for that
  program (rules/programs.py) unless the rule names it, and a word that
  names a path must stay where the rule may reach (below);
* every redirection's file, every path a wildcard or a prefix let
  through (rules/places.py): never one of the agent's own controls
  (rules/controls.py); written (or read) only inside the rule's
  ``project``, and a rule without one, or a call whose folder is unknown,
  writes only to ``/dev/null``; after ``cd`` (``pushd``, ``popd``) in a
  line, where the rest runs is not known, and after (or beside) a part that
  may move files, where a path leads is not known either.

A file call is allowed when its path (symlinks resolved) fits a path
glob, is no control, and a write is inside the rule's project.  A call
not known whole (``Call.unread``), or one Claude asks to run outside its
sandbox without a rule saying ``unsandboxed = true``, is no allow's.
Pure, but for resolving symlinks of local paths.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import replace

from .controls import own_folders
from .denies import crude, deny_fields, operand, path_denied
from .globs import allows, anchor, has_wildcard
from .model import Call, Decision, Rule, Verdict
from .places import LOCAL, Place, free_word, git_dir_around, guarded, inside, reach, resolve
from .programs import Program, name_of, reads_only, table_of
from .reading import Parsed, Simple
from .shell import Unreadable, parse

__all__ = ["applies", "inside", "judge", "resolve"]

MOVES = frozenset({"cd", "pushd", "popd"})  # after one of these, where the rest of the line runs is not known


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
    if rule.shell and call.tool not in call.tools.shell:
        return f"{call.tool} is not a shell call"
    if rule.paths and call.tool not in call.tools.files:
        return f"{call.tool} is not a file call"
    return ""


def judge(rules: Iterable[Rule], call: Call) -> Verdict:
    """What the rules say of ``call``: a deny that fits any of it, else allows that fit every part of it, else a notify, else nothing."""
    placed = [r for r in rules if not applies(r, call)]
    own = own_folders()
    if call.tool not in call.tools.shell:
        return _file_call(placed, call, own)
    try:
        parsed: Parsed | None = parse(call.command)
        unreadable = ""
    except Unreadable as exc:
        parsed, unreadable = None, str(exc)
    # A deny sees a command's words and the files its redirections name (``cat < .env`` is ``cat .env`` to it).
    commands = tuple(s.words + tuple(target for _, op, target in s.redirects if op != ">&") for s in parsed.simple) if parsed else crude(call.command)
    commands = tuple(tuple(operand(w, call.cwd) for w in words) for words in commands)
    anywhere = parsed is None  # in a line no reader read, any word may be where a command begins (``sudo git push``)
    for rule in (r for r in placed if r.decision is Decision.DENY):
        fields = deny_fields(rule, commands, anywhere, call.cwd)
        if fields:
            return _verdict(Decision.DENY, [rule], f"{rule.id} fits {', '.join(fields)}", fields)
    if parsed is None:
        return Verdict(None, why=f"not read plainly ({unreadable}): the person answers")
    if call.unread:
        return Verdict(None, why=f"{call.unread}: the person answers")
    allowing = [r for r in placed if r.decision is Decision.ALLOW and r.shell and (r.unsandboxed or not call.unsandboxed)]
    chosen: list[Rule] = []
    why_not = "Claude asks to run it outside its sandbox, and no rule says unsandboxed = true" if call.unsandboxed else ""
    place = Place(call.cwd, call.host, own)
    movers = [not reads_only(simple.words) for simple in parsed.simple]
    for n, simple in enumerate(parsed.simple):
        # Another part may move, link or make files before this one looks: one before it, or (run at once) any other.
        others = movers[:n] + (movers[n + 1 :] if parsed.concurrent else [])
        place = replace(place, settled=not any(others))
        fitting = None
        for rule in allowing:
            reason = _fits(rule, simple, place)
            if not reason:
                fitting = rule
                break
            why_not = why_not or reason
        if fitting is None:
            chosen = []
            break
        if fitting not in chosen:
            chosen.append(fitting)
        if name_of(simple.words[0]) in MOVES:
            place = replace(place, cwd="")
    if chosen:
        fields = tuple(dict.fromkeys(f for r in chosen for f in (*r.placed_by, "command" if r.command else "prefix")))
        names = "+".join(r.id for r in chosen)
        return _verdict(Decision.ALLOW, chosen, f"{names} fit{'s' if len(chosen) == 1 else ''} every part", fields)
    for rule in (r for r in placed if r.decision is Decision.NOTIFY):
        if not rule.shell or deny_fields(rule, commands, anywhere, call.cwd):
            return _verdict(Decision.NOTIFY, [rule], f"{rule.id} fits", rule.placed_by)
    if why_not:
        return Verdict(None, why=f"{why_not}: the person answers")
    return Verdict(None, why="not every part fits an allow" if len(parsed.simple) > 1 else "no rule fits")


def _verdict(decision: Decision, rules: list[Rule], why: str, fields: tuple[str, ...]) -> Verdict:
    return Verdict(decision, "+".join(r.id for r in rules), any(r.shadow for r in rules), why, fields)


# -- file calls ------------------------------------------------------------------------
def _file_call(placed: list[Rule], call: Call, own: tuple[str, ...]) -> Verdict:
    path = resolve(call.path, call.cwd, call.host) if call.path else None
    seen = path or (posixpath.normpath(posixpath.join(call.cwd or "/", call.path)) if call.path else "")  # for a deny: as written, when not resolved
    for rule in (r for r in placed if r.decision is Decision.DENY and not r.shell):
        if not rule.paths or (seen and any(path_denied(p, rule, call, seen) for p in rule.paths)):
            fields = (*rule.placed_by, *(("path",) if rule.paths else ()))
            return _verdict(Decision.DENY, [rule], f"{rule.id} fits {', '.join(fields)}", fields)
    remote = f"on {call.host} its folders cannot be resolved from here" if call.host != LOCAL else ""
    why_not = call.unread or ("its file is not known whole" if path is None else remote or guarded(path, own))
    if not why_not:
        for rule in (r for r in placed if r.decision is Decision.ALLOW and r.paths):
            if call.tool in call.tools.writes and not (rule.project and inside(path or "", rule.project)):
                why_not = why_not or f"{rule.id} writes only inside its project"
                continue
            if any(allows(p if p.startswith("/") else posixpath.join(rule.project, p), path or "") for p in rule.paths):
                fields = (*rule.placed_by, "path")
                return _verdict(Decision.ALLOW, [rule], f"{rule.id} fits {', '.join(fields)}", fields)
    for rule in (r for r in placed if r.decision is Decision.NOTIFY and not r.shell):
        if not rule.paths or (seen and any(path_denied(p, rule, call, seen) for p in rule.paths)):
            return _verdict(Decision.NOTIFY, [rule], f"{rule.id} fits", rule.placed_by)
    return Verdict(None, why=f"{why_not}: the person answers" if why_not else "no rule fits")


# -- shell calls -----------------------------------------------------------------------
def _fits(rule: Rule, simple: Simple, place: Place) -> str:
    """Why one simple command does not fit an allow ("" when it does), its words and its redirections."""
    cwd = place.cwd
    if rule.project and not (cwd and inside(cwd, rule.project)):
        return "where it runs is not known (after cd)" if not cwd else f"it runs outside {rule.project}"
    words = simple.words
    why = _command_words(rule, words, place) if rule.command else _prefix_words(rule, words, place)
    if why:
        return why
    if name_of(words[0]) == "git" and place.local and git_dir_around(cwd):
        return f"git in {cwd}: a repository there keeps its config outside a .git folder"
    for _fd, op, target in simple.redirects:
        if op == ">&" and (target == "-" or (target and all(c in "0123456789" for c in target))):
            continue  # onto (or closing) a descriptor: no file
        # Read or written, a redirection's file is held as a written one: inside the project, never a control.
        why = reach(target, place, rule, writes=True, within=None)
        if why:
            return f"{'reads' if op == '<' else 'writes'} {why}"
    return ""


def _command_words(rule: Rule, words: tuple[str, ...], place: Place) -> str:
    if len(words) != len(rule.command) or any(p != w for p, w in zip(rule.command, words, strict=True) if not has_wildcard(p)):
        return f"{rule.id}: other words"
    tables = _tables(words[0], ())
    operand = False
    for n, (pattern, word) in enumerate(zip(rule.command, words, strict=True)):
        if not has_wildcard(pattern):
            operand = operand or word == "--"
            continue
        if not allows(pattern, word):
            return f"{rule.id}: {word!r} is not {pattern!r}"
        if any(c in word for c in "*?["):
            return f"{word[:40]!r}: a pattern of its own (git and others expand it), which a wildcard never stands for"
        named = pattern.split("*", 1)[0].split("?", 1)[0]
        before = rule.command[n - 1] if n else ""
        for table in tables:
            risk = table.risky(word)
            if risk and risk != table.risky(named.rstrip("=")):
                return risk
            if table.inline and (operand or not word.startswith("-")):
                return f"{table.name}'s script is code: a wildcard never stands for it"
            if table.code and before.startswith("-") and table.risky(before):
                return f"{table.name} {before} takes code: a wildcard never stands for it"
        why = free_word(word, place, rule, tables, within=anchor(pattern), operand=operand)
        if why:
            return why
    return ""


def _prefix_words(rule: Rule, words: tuple[str, ...], place: Place) -> str:
    n = len(rule.prefix)
    if words[:n] != rule.prefix:
        return f"{rule.id}: begins otherwise"
    tables = _tables(words[0], rule.prefix[1:])
    operand = "--" in rule.prefix[1:]
    for k, word in enumerate(words[n:]):
        # tar's (and ar's) first word may be its options without a dash ("xPf"): read it as "-xPf".
        read = f"-{word}" if k == 0 and n == 1 and word.isalpha() and any(t.oldstyle for t in tables) else word
        for table in tables:  # "--" ends a program's options, not what it takes after (git push -- +main, npm -- install)
            risk = table.risky(read)
            if risk and not any(table.risky(named) == risk for named in rule.prefix[1:]):
                return risk
            if table.globs and any(c in word for c in "*?["):
                return f"{table.name} reads {word[:40]!r} as a pattern of its own"
        why = free_word(read, place, rule, tables, within=None, operand=operand)
        if why:
            return why
        operand = operand or word == "--"
    return ""


def _tables(first: str, named: tuple[str, ...]) -> list[Program]:
    """The tables that judge a command's free words: its program's, and those of programs its prefix names (``python -m pytest``)."""
    return [t for t in (table_of(first), *(table_of(w) for w in named)) if t is not None]
