"""Where a word a rule did not spell out may lead: the paths it names, resolved where the call runs, and held to the rule's reach.

A prefix rule's tail and a word a wildcard matched are the agent's words,
not the person's: each may name a place (itself, an option's value, a
piece after ``=``, ``,``, ``:`` or ``@``), and every place must stay where
the rule may reach once symlinks are followed (its project, with none the
agent's folder, or a glob's own literal folder), never be one of the
agent's controls (controls.py) or a git repository's own folder, and, for a
program that writes what it is given, be written only inside a project.
A place another part of the line may move first (``Place.settled``), or on
another host (its symlinks are not seen from here), is not known: the
person answers.  Pure but for resolving local paths.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass

from .controls import protected
from .model import Rule
from .programs import Program

LOCAL = "local"


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


def git_dir_around(folder: str) -> bool:
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


def guarded(found: str, own: tuple[str, ...]) -> str:
    """Why a resolved path is never a rule's to reach ("" when it may be): a control of the agent's, or a git repository's own folder."""
    return protected(found, own) or (f"{found[:60]} is in a git repository's own folder" if git_dir_around(posixpath.dirname(found)) else "")


def _remote(word: str) -> bool:
    """Does a word name a place on another host (``host:path``, ``user@host:``, ``rsync://``, ``host::module``)?"""
    head = word.split("/", 1)[0]
    return ":" in head


def free_word(word: str, place: Place, rule: Rule, tables: list[Program], within: str | None, operand: bool) -> str:
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
        why = reach(candidate, place, rule, writes, within if candidate == word else None) if pathlike else _plain(candidate, place, rule)
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


def reach(path: str, place: Place, rule: Rule, writes: bool, within: str | None) -> str:
    """Why a path may not stand ("" when it may): resolved (symlinks followed) where the call runs, and held to where the rule may reach.

    Both a free word's path and a redirection's target come here, so the
    two are held to one measure.
    """
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
    why = guarded(found, place.own)
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
