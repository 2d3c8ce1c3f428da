"""Does a rule fit a call, and what do all the rules say of it: an allow never answers more than its words say.

Deny wins over every allow, and a deny reads generously: its words fit
when they appear in a command in order (``git push`` fits ``git -C .
push -f``), its program by name (``/usr/bin/git``), its globs wide; in a
line no reader can read, it fits the words a crude split finds.

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
  through: never one of the agent's own controls (rules/controls.py);
  written (or read) only inside the rule's ``project``, and a rule without
  one, or a call whose folder is unknown, writes only to ``/dev/null``;
  after ``cd`` (``pushd``, ``popd``) in a line, where the rest runs is not
  known.

A file call is allowed when its path (symlinks resolved) fits a path
glob, is no control, and a write is inside the rule's project.  A call
not known whole (``Call.unread``), or one Claude asks to run outside its
sandbox without a rule saying ``unsandboxed = true``, is no allow's.
Pure, but for resolving symlinks of local paths.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from .controls import own_folders, protected
from .globs import allows, anchor, denies, has_wildcard
from .model import FILE_TOOLS, SHELL_TOOLS, WRITE_TOOLS, Call, Decision, Rule, Verdict
from .programs import Program, name_of, reads_only, table_of
from .reading import Parsed, Simple
from .shell import Unreadable, parse

LOCAL = "local"
MOVES = frozenset({"cd", "pushd", "popd"})  # after one of these, where the rest of the line runs is not known
_CRUDE_SPLIT = re.compile(r"[;&|()\n`<>{}]+")


def inside(path: str, folder: str) -> bool:
    """Is ``path`` (absolute, normalised) ``folder`` or inside it?"""
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder + "/") or folder == "/"


def resolve(path: str, cwd: str, host: str = LOCAL) -> str | None:
    """The absolute path a call names (relative to its folder), symlinks resolved on this machine; None when it is not known.

    Not known: a relative path whose folder is not known, a path that
    begins with ``~`` or holds ``$`` (a tool or shell may expand it), or
    one no file system could name (a NUL, a lone surrogate).
    """
    if path.startswith("~") or "$" in path or "\0" in path:
        return None
    if not path.startswith("/"):
        if not cwd.startswith("/"):
            return None
        path = posixpath.join(cwd, path)
    try:
        path.encode("utf-8")
        return os.path.realpath(path) if host == LOCAL else posixpath.normpath(path)
    except (ValueError, UnicodeError, OSError):
        return None


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


def judge(rules: Iterable[Rule], call: Call) -> Verdict:
    """What the rules say of ``call``: a deny that fits any of it, else allows that fit every part of it, else a notify, else nothing."""
    placed = [r for r in rules if not applies(r, call)]
    own = own_folders()
    if call.tool not in SHELL_TOOLS:
        return _file_call(placed, call, own)
    try:
        parsed: Parsed | None = parse(call.command)
        unreadable = ""
    except Unreadable as exc:
        parsed, unreadable = None, str(exc)
    # A deny sees a command's words and the files its redirections name (``cat < .env`` is ``cat .env`` to it).
    commands = tuple(s.words + tuple(target for _, op, target in s.redirects if op != ">&") for s in parsed.simple) if parsed else _crude(call.command)
    commands = tuple(tuple(_operand(w, call.cwd) for w in words) for words in commands)
    anywhere = parsed is None  # in a line no reader read, any word may be where a command begins (``sudo git push``)
    for rule in (r for r in placed if r.decision is Decision.DENY):
        fields = _denies(rule, commands, anywhere, call.cwd)
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
        fields = tuple(dict.fromkeys(f for r in chosen for f in (*_place(r), "command" if r.command else "prefix")))
        names = "+".join(r.id for r in chosen)
        return _verdict(Decision.ALLOW, chosen, f"{names} fit{'s' if len(chosen) == 1 else ''} every part", fields)
    for rule in (r for r in placed if r.decision is Decision.NOTIFY):
        if not rule.shell or _denies(rule, commands, anywhere, call.cwd):
            return _verdict(Decision.NOTIFY, [rule], f"{rule.id} fits", _place(rule))
    if why_not:
        return Verdict(None, why=f"{why_not}: the person answers")
    return Verdict(None, why="not every part fits an allow" if len(parsed.simple) > 1 else "no rule fits")


def _verdict(decision: Decision, rules: list[Rule], why: str, fields: tuple[str, ...]) -> Verdict:
    return Verdict(decision, "+".join(r.id for r in rules), any(r.shadow for r in rules), why, fields)


def _place(rule: Rule) -> tuple[str, ...]:
    return tuple(f for f, on in (("host", True), ("project", bool(rule.project)), ("agent", bool(rule.agents)), ("tool", bool(rule.tool))) if on)


# -- file calls ------------------------------------------------------------------------
def _file_call(placed: list[Rule], call: Call, own: tuple[str, ...]) -> Verdict:
    path = resolve(call.path, call.cwd, call.host) if call.path else None
    seen = path or (posixpath.normpath(posixpath.join(call.cwd or "/", call.path)) if call.path else "")  # for a deny: as written, when not resolved
    for rule in (r for r in placed if r.decision is Decision.DENY and not r.shell):
        if not rule.paths or (seen and any(_path_denied(p, rule, call, seen) for p in rule.paths)):
            fields = (*_place(rule), *(("path",) if rule.paths else ()))
            return _verdict(Decision.DENY, [rule], f"{rule.id} fits {', '.join(fields)}", fields)
    remote = f"on {call.host} its folders cannot be resolved from here" if call.host != LOCAL else ""
    layout = "it is in a git repository's own folder" if path and not remote and _git_dir_around(posixpath.dirname(path)) else ""
    why_not = call.unread or ("its file is not known whole" if path is None else remote or protected(path, own) or layout)
    if not why_not:
        for rule in (r for r in placed if r.decision is Decision.ALLOW and r.paths):
            if call.tool in WRITE_TOOLS and not (rule.project and inside(path or "", rule.project)):
                why_not = why_not or f"{rule.id} writes only inside its project"
                continue
            if any(allows(p if p.startswith("/") else posixpath.join(rule.project, p), path or "") for p in rule.paths):
                fields = (*_place(rule), "path")
                return _verdict(Decision.ALLOW, [rule], f"{rule.id} fits {', '.join(fields)}", fields)
    for rule in (r for r in placed if r.decision is Decision.NOTIFY and not r.shell):
        if not rule.paths or (seen and any(_path_denied(p, rule, call, seen) for p in rule.paths)):
            return _verdict(Decision.NOTIFY, [rule], f"{rule.id} fits", _place(rule))
    return Verdict(None, why=f"{why_not}: the person answers" if why_not else "no rule fits")


def _path_denied(pattern: str, rule: Rule, call: Call, path: str) -> bool:
    """A deny's (or a notice's) path glob, read wide: relative to its project, else to the call's folder, else anywhere; case folded."""
    pattern, path = pattern.casefold(), path.casefold()
    if pattern.startswith("/"):
        return denies(pattern, path)
    bases = [rule.project.casefold()] if rule.project else [b.casefold() for b in (call.cwd,) if b]
    return any(denies(posixpath.join(b, pattern), path) for b in bases) or denies("*/" + pattern, path)


# -- shell calls -----------------------------------------------------------------------
@dataclass(frozen=True)
class Place:
    """Where a simple command's words are judged: its folder, its host, and whether the file system is still as the judge sees it."""

    cwd: str
    host: str
    own: tuple[str, ...]
    settled: bool = True  # False after a part that may move, link or make files: a later path is not known until it runs

    @property
    def local(self) -> bool:
        return self.host == LOCAL


def _fits(rule: Rule, simple: Simple, place: Place) -> str:
    """Why one simple command does not fit an allow ("" when it does), its words and its redirections."""
    cwd = place.cwd
    if rule.project and not (cwd and inside(cwd, rule.project)):
        return "where it runs is not known (after cd)" if not cwd else f"it runs outside {rule.project}"
    words = simple.words
    why = _command_words(rule, words, place) if rule.command else _prefix_words(rule, words, place)
    if why:
        return why
    if name_of(words[0]) == "git" and place.local and _git_dir_around(cwd):
        return f"git in {cwd}: a repository there keeps its config outside a .git folder"
    for _fd, op, target in simple.redirects:
        if op == ">&" and (target == "-" or (target and all(c in "0123456789" for c in target))):
            continue  # onto (or closing) a descriptor: no file
        if target == "/dev/null":
            continue
        verb = "reads" if op == "<" else "writes"
        if not place.settled:
            return f"{verb} {target} after a part that may have moved files"
        if not place.local:
            return f"{verb} {target} on {place.host}, where its folders cannot be resolved from here"
        found = resolve(target, cwd, place.host)
        if found is None:
            return f"{verb} {target} in a folder not known"
        why = protected(found, place.own) or (f"{verb} {target} in a git repository's own folder" if _git_dir_around(posixpath.dirname(found)) else "")
        if why:
            return why
        if not rule.project:
            return f"{verb} {target}: {rule.id} has no project, so only /dev/null"
        if not inside(found, rule.project):
            return f"{verb} {target} outside {rule.project}"
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
        why = _free_word(word, place, rule, tables, within=anchor(pattern), operand=operand)
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
        why = _free_word(read, place, rule, tables, within=None, operand=operand)
        if why:
            return why
        operand = operand or word == "--"
    return ""


def _tables(first: str, named: tuple[str, ...]) -> list[Program]:
    """The tables that judge a command's free words: its program's, and those of programs its prefix names (``python -m pytest``)."""
    return [t for t in (table_of(first), *(table_of(w) for w in named)) if t is not None]


def _git_dir_around(folder: str) -> bool:
    """Is ``folder``, or a folder above it, a git repository's own folder not named ``.git`` (a bare one, a moved one)?

    git finds its repository by layout (a ``HEAD``, ``objects/`` and
    ``refs/``), not by name; such a folder's ``config`` runs what it says
    (``core.fsmonitor``) at the next ``git status``.  A folder with two of
    the three counts: the last, written now, would make it one.
    """
    at = folder
    while at.startswith("/"):
        # Two of the three already: the third (written now) would make it one.
        if posixpath.basename(at) != ".git" and sum(os.path.exists(posixpath.join(at, part)) for part in ("HEAD", "objects", "refs")) >= 2:
            return True
        parent = posixpath.dirname(at)
        if parent == at:
            return False
        at = parent
    return False


def _remote(word: str) -> bool:
    """Does a word name a place on another host (``host:path``, ``user@host:``, ``rsync://``, ``host::module``)?"""
    head = word.split("/", 1)[0]
    return ":" in head


def _free_word(word: str, place: Place, rule: Rule, tables: list[Program], within: str | None, operand: bool) -> str:
    """Why a word a rule did not spell out may not stand ("" when it may): a control, a place out of reach, a write with no known place.

    An option's value after ``=`` and a ``name@file`` (curl's ``@file``,
    ``--url-query k@file``) are paths to check as the word is; a one-dash
    option with a path glued to it (``-cf/home/x``) is not read at all.
    After ``--`` every word is an operand, whatever its first character.
    ``within``: a command rule's glob, whose literal folder the word must
    stay under; else (a prefix's tail) inside the project, or with none
    inside the call's folder.
    """
    option = word.startswith("-") and word != "-"
    if option and not operand and not word.startswith("--") and not word[1:].isalnum():
        return f"{word[:40]!r}: an option with a value glued to it, which the rules do not read"
    value = word.split("=", 1)[1] if option and "=" in word else ""
    # An option is its value; after "--" a word is an operand (to the program, or to what it hands it on to), and its value too.
    texts = [t for t in (*((word,) if operand or not option else ()), value) if t]
    if not texts:
        return ""
    for text in texts:
        why = _named(text, word, place, rule, tables, within, writes=any(t.writes for t in tables) and (operand or not option))
        if why:
            return why
    return ""


def _named(text: str, word: str, place: Place, rule: Rule, tables: list[Program], within: str | None, writes: bool) -> str:
    """The place one text of a free word may name (the word, an option's value), checked as a path or as a plain word."""
    if any(t.remote for t in tables) and _remote(text):
        return f"{text[:60]} names a place on another host"
    # A path may stand inside a word: after '=', ',', ':' or '@' (type=local,dest=/x; k@file; HEAD:../x).
    pieces = [p for p in re.split(r"[=,:@]", text) if p and p != text and ("/" in p or p.startswith("."))]
    candidates = [text, *pieces]
    for candidate in candidates:
        pathlike = "/" in candidate or candidate.startswith(".") or writes
        why = _path(candidate, place, rule, writes, within if candidate == word else None) if pathlike else _plain(candidate, place, rule)
        if why:
            return why
    return ""


def _plain(word: str, place: Place, rule: Rule) -> str:
    """A word that does not look like a path may still name one: never a control, never through a symlink out of the folder."""
    if not word or not place.cwd:
        return ""
    lexical = posixpath.normpath(posixpath.join(place.cwd, word))
    if not place.local:
        return f"{word[:60]}: on {place.host} a word that may name a file cannot be resolved from here"
    found = resolve(word, place.cwd, place.host)
    if found is None:
        return ""
    why = protected(found, place.own)
    if why:
        return why
    folder = rule.project or resolve(".", place.cwd, place.host) or ""
    if folder and inside(lexical, folder) and not inside(found, folder):
        return f"{word[:60]} leads out of {folder} through a symlink"
    return ""


def _path(path: str, place: Place, rule: Rule, writes: bool, within: str | None) -> str:
    """A path a free word names: resolved (symlinks followed) where the call runs, and held to where the rule may reach."""
    if writes and path == "/dev/null":
        return ""
    if not place.settled:
        return f"{path[:60]}: a part before it may have moved files"
    if not place.local:
        return f"{path[:60]}: on {place.host} its folders cannot be resolved from here"
    if writes and ".." in path.split("/"):
        return f"{path[:60]}: a written path that climbs with '..'"
    found = resolve(path, place.cwd, place.host)
    if found is None:
        return f"{path[:60]}: its folder is not known"
    why = protected(found, place.own) or (f"{path[:60]} is in a git repository's own folder" if _git_dir_around(posixpath.dirname(found)) else "")
    if why:
        return why
    if within is not None:
        if writes and not rule.project and not within.startswith("/"):
            return f"{rule.id} has no project and its glob names no folder: it writes only to /dev/null"
        base = resolve(within or ".", place.cwd, place.host)
        lexical = posixpath.normpath(posixpath.join(place.cwd, within or "."))
        if base is None:
            return f"{path[:60]}: its folder is not known"
        if not within.startswith("/") and base != lexical and not (rule.project and inside(base, rule.project)):
            return f"{within} leads out through a symlink"
        return "" if inside(found, base) else f"{path[:60]} leads out of {within or 'its folder'}"
    if writes and not rule.project:
        return f"{rule.id} has no project: it writes only to /dev/null"
    folder = rule.project or (resolve(".", place.cwd, place.host) or "")
    return "" if folder and inside(found, folder) else f"{path[:60]} is outside {folder or 'a known folder'}"


# -- denies ------------------------------------------------------------------------------
def _crude(text: str) -> tuple[tuple[str, ...], ...]:
    """The words a deny looks for in a line no reader could read: continuations joined, quotes and escapes dropped, split at operators."""
    text = text.replace("\\\r\n", "").replace("\\\n", "")
    text = re.sub(r"[\\'\"]", "", text)
    return tuple(tuple(part.split()) for part in _CRUDE_SPLIT.split(text))


def _denies(rule: Rule, commands: tuple[tuple[str, ...], ...], anywhere: bool = False, cwd: str = "") -> tuple[str, ...]:
    """The fields by which a deny (or a notice) fits any simple command ("": it does not); ``anywhere``: from any of its words."""
    if not rule.shell:
        return _place(rule)
    pattern = tuple(_operand(w, cwd) for w in (rule.command or rule.prefix))
    for words in commands:
        for start in range(len(words) if anywhere else min(1, len(words))):
            if _deny_fits(pattern, words[start:]):
                return (*_place(rule), "command" if rule.command else "prefix")
    return ()


def _deny_fits(pattern: tuple[str, ...], words: tuple[str, ...]) -> bool:
    """Do a deny's words appear in a command, in order? Its program by name; its one-dash letters (``-rf``) anywhere, in any options."""
    if not words or not (name_of(words[0]) == name_of(pattern[0]) or denies(pattern[0], words[0])):
        return False
    rest = words[1:]
    # Letters, read wide: case folded (rm's -R is its -r) and a long option's first (--recursive, --force).
    letters = {c.lower() for w in rest if _cluster(w) for c in w[1:]} | {w[2].lower() for w in rest if w.startswith("--") and len(w) > 2}
    at = 0
    for want in pattern[1:]:
        if _cluster(want) and len(want) > 2:  # "-rf" fits "-fr", "-r -f", "-Rf", "--recursive --force"
            if not {c.lower() for c in want[1:]} <= letters:
                return False
            continue
        while at < len(rest) and not _deny_word(want, rest[at]):
            at += 1
        if at >= len(rest):
            return False
        at += 1
    return True


def _cluster(word: str) -> bool:
    return len(word) > 1 and word[0] == "-" and word[1] != "-" and word[1:].isalpha()


def _operand(word: str, cwd: str = "") -> str:
    """A word as a program may take it whatever its spelling: ``./deploy``, ``.//deploy`` and ``{cwd}/deploy`` are ``deploy``."""
    if word.startswith("-") or not word:
        return word
    normal = posixpath.normpath(word)
    if cwd.startswith("/") and normal.startswith("/") and inside(normal, cwd) and normal != cwd:
        normal = posixpath.relpath(normal, cwd)
    return normal


def _deny_word(pattern: str, word: str) -> bool:
    """A deny's word, read wide: its glob, an abbreviated long option (``--forc``) or command (npm's ``pub``), an option with its value, a letter in a cluster."""
    if denies(pattern, word) or word.startswith(pattern + "="):
        return True
    if not word.startswith("-") and not pattern.startswith("-") and len(word) >= 2 and pattern.startswith(word) and word.isalpha():
        return True
    name = word.split("=", 1)[0]
    if pattern.startswith("--") and name.startswith("--") and len(name) >= 3 and pattern.startswith(name):
        return True
    return len(pattern) == 2 and pattern[0] == "-" and word.startswith("-") and not word.startswith("--") and pattern[1] in word[1:]
