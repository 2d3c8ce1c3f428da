"""A rule's globs, two ways: an allow's, that never match more than its words, and a deny's, that match generously.

An allow's glob (``allows``) works on path segments, as a shell glob does:

* ``*`` and ``?`` stay inside one segment (never cross ``/``); ``**`` as a
  whole segment stands for any number of segments (``build/**``,
  ``src/**/test_*.py``), and elsewhere in a segment it is ``*``;
* no wildcard matches a segment that begins with ``.`` (so never ``.``,
  ``..``, ``.git`` or ``.env``): ``rm -rf build/**`` does not reach
  ``build/../../home``, ``git checkout *`` does not reach ``.``; a pattern
  segment that begins with a literal ``.`` may (``.github/*``).

A deny's glob (``denies``) is the plain reading: ``*`` any characters,
``/`` included, ``?`` any one; wider is safer for a deny.  Pure.
"""

from __future__ import annotations

import re
from functools import cache

WILD = frozenset("*?")


def has_wildcard(pattern: str) -> bool:
    return any(c in WILD for c in pattern)


@cache
def _segment(pattern: str) -> re.Pattern[str]:
    out = []
    for char in pattern:
        out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char))
    return re.compile("".join(out), re.DOTALL)


def _segment_matches(pattern: str, text: str) -> bool:
    if not has_wildcard(pattern):
        return pattern == text
    if text in (".", "..") or (text.startswith(".") and not pattern.startswith(".")):
        return False  # "." and ".." never by a wildcard; a hidden name (".git") only by a pattern that names its dot
    return _segment(pattern.replace("**", "*")).fullmatch(text) is not None


def allows(pattern: str, text: str) -> bool:
    """Does an allow's glob match ``text`` (a word, or a path) without matching more than it says?"""
    return _segments(tuple(pattern.split("/")), tuple(text.split("/")))


def _segments(pattern: tuple[str, ...], text: tuple[str, ...]) -> bool:
    if not pattern:
        return not text
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        for taken in range(len(text) + 1):
            if taken and (text[taken - 1].startswith(".") or not text[taken - 1]):
                return False  # "**" never walks through a hidden or empty segment
            if _segments(rest, text[taken:]):
                return True
        return False
    return bool(text) and _segment_matches(head, text[0]) and _segments(rest, text[1:])


@cache
def _wide(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.DOTALL)


def denies(pattern: str, text: str) -> bool:
    """Does a deny's glob match ``text``: ``*`` any characters (``/`` too), ``?`` any one."""
    return _wide(pattern).fullmatch(text) is not None


def anchor(pattern: str) -> str:
    """The literal folder a path pattern begins with, before its first wildcard segment ("" for none): what its wildcards stay under."""
    parts = pattern.split("/")
    literal = []
    for part in parts[:-1]:
        if has_wildcard(part):
            break
        literal.append(part)
    else:
        if not has_wildcard(parts[-1]):
            return pattern
    return "/".join(literal) if literal != [""] else "/"
