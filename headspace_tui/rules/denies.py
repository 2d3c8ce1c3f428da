"""How a deny (or a notice) reads a call: generously, since a deny that fits more refuses more, never allows it.

Its words appear in a command in order (``git push`` fits ``git -C .
push -f``); its program by name (``/usr/bin/git``); its one-dash letters in
any order, case or option (``-rf`` fits ``-fr``, ``-r -f``, ``--recursive
--force``); abbreviated options and commands (``--forc``, npm's ``pub``);
a path however written (``./.env``, ``docs/../.env``, ``/project/.env``,
a redirection's file); path globs with case folded; and in a line no reader
can read, the words a crude split finds, from any word on.  Pure.
"""

from __future__ import annotations

import posixpath
import re

from .globs import denies
from .model import Call, Rule
from .places import inside
from .programs import name_of

_CRUDE_SPLIT = re.compile(r"[;&|()\n`<>{}]+")


def path_denied(pattern: str, rule: Rule, call: Call, path: str) -> bool:
    """A deny's (or a notice's) path glob, read wide: relative to its project, else to the call's folder, else anywhere; case folded."""
    pattern, path = pattern.casefold(), path.casefold()
    if pattern.startswith("/"):
        return denies(pattern, path)
    bases = [rule.project.casefold()] if rule.project else [b.casefold() for b in (call.cwd,) if b]
    return any(denies(posixpath.join(b, pattern), path) for b in bases) or denies("*/" + pattern, path)


def crude(text: str) -> tuple[tuple[str, ...], ...]:
    """The words a deny looks for in a line no reader could read: continuations joined, quotes and escapes dropped, split at operators."""
    text = text.replace("\\\r\n", "").replace("\\\n", "")
    text = re.sub(r"[\\'\"]", "", text)
    return tuple(tuple(part.split()) for part in _CRUDE_SPLIT.split(text))


def deny_fields(rule: Rule, commands: tuple[tuple[str, ...], ...], anywhere: bool = False, cwd: str = "") -> tuple[str, ...]:
    """The fields by which a deny (or a notice) fits any simple command ("": it does not); ``anywhere``: from any of its words."""
    if not rule.shell:
        return rule.placed_by
    pattern = tuple(operand(w, cwd) for w in (rule.command or rule.prefix))
    for words in commands:
        for start in range(len(words) if anywhere else min(1, len(words))):
            if _deny_fits(pattern, words[start:]):
                return (*rule.placed_by, "command" if rule.command else "prefix")
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


def operand(word: str, cwd: str = "") -> str:
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
