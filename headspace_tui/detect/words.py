"""A family's screen words as data: one TOML file per family and range of its releases.

What a screen reader looks for that is only words and marks (footer words,
dialog titles, option labels, busy marks, mode names) lives in
``detect/<family>/words/<first release>.toml``, not in its code, so a
release that only renames words is a change to a data file and a recorded
screen.  Each file says the releases it holds for::

    [releases]
    from = "0.24.0"     # the first release these words are right for
    before = "0.30.0"   # the first they are not ("" or absent: up to the newest)

and then sections of named words: a string, or a list of strings each of
which counts.  Every word is matched literally (a reader escapes it), so a
file can rename a word but never make a reader slow or match anything.

``FamilyWords(folder).of(version)`` gives the words for a release: the file
whose range holds it; an unknown version, or one newer than every file,
gets the newest file's words (a new release most often draws as the last),
one older than every file the oldest's.  The files are read once, when a
reader first asks.  Pure but for reading the family's own folder.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..shared.safe_files import Unreadable, read_regular

MAX_FILE = 64 << 10  # a words file larger than this is not read
MAX_WORD = 200  # characters: a longer word is a mistake, not a screen's word


class WordsError(ValueError):
    """A words file that cannot be used: said with its path and what is wrong."""


def release_key(version: str) -> tuple[int, ...]:
    """``"0.24.4"`` → (0, 24, 4): how releases sort (a suffix such as ``-preview.1`` is left out)."""
    head = re.match(r"\d+(?:\.\d+)*", version.strip())
    return tuple(int(part) for part in head.group(0).split(".")) if head else ()


@dataclass(frozen=True)
class Words:
    """One file's words: ``words.all("working", "hints")`` (every word of a name), ``words.one(...)`` (its first)."""

    path: Path
    since: tuple[int, ...]
    before: tuple[int, ...]  # () : no end
    sections: Mapping[str, Mapping[str, tuple[str, ...]]] = field(repr=False)

    def holds(self, version: str) -> bool:
        key = release_key(version)
        return bool(key) and key >= self.since and (not self.before or key < self.before)

    def all(self, section: str, name: str) -> tuple[str, ...]:
        """Every word given for ``section.name``; WordsError when the file has none (a reader's name the file lacks)."""
        try:
            return self.sections[section][name]
        except KeyError:
            raise WordsError(f"{self.path}: no words for {section}.{name}") from None

    def one(self, section: str, name: str) -> str:
        return self.all(section, name)[0]

    def names(self, section: str) -> Mapping[str, tuple[str, ...]]:
        """A whole section, name → its words (the modes, in the file's order)."""
        try:
            return self.sections[section]
        except KeyError:
            raise WordsError(f"{self.path}: no section [{section}]") from None

    def any_of(self, section: str, name: str) -> re.Pattern[str]:
        """A pattern that finds any of ``section.name``'s words, each literally."""
        return re.compile("|".join(re.escape(word) for word in self.all(section, name)))

    def every_word(self) -> list[tuple[str, str]]:
        """(``section.name``, word) for each word of the file: what the release canary looks for on a release's screens."""
        return [(f"{section}.{name}", word) for section, names in self.sections.items() for name, words in names.items() for word in words]


def load_words(path: Path) -> Words:
    """One words file, checked: its releases, and every word a non-empty string of at most ``MAX_WORD`` characters."""
    try:
        data = tomllib.loads(read_regular(path, MAX_FILE).decode("utf-8"))
    except (OSError, Unreadable, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise WordsError(f"{path}: {exc}") from None
    releases = data.pop("releases", None)
    if not isinstance(releases, dict) or not isinstance(releases.get("from"), str) or not release_key(releases["from"]):
        raise WordsError(f'{path}: [releases] needs from = "X.Y.Z"')
    before = releases.get("before", "")
    if not isinstance(before, str):
        raise WordsError(f"{path}: releases.before must be a version")
    sections: dict[str, dict[str, tuple[str, ...]]] = {}
    for section, names in data.items():
        if not isinstance(names, dict):
            raise WordsError(f"{path}: {section} must be a section of named words")
        sections[section] = {}
        for name, value in names.items():
            words = (value,) if isinstance(value, str) else tuple(value) if isinstance(value, list) else ()
            if not words or not all(isinstance(w, str) and 0 < len(w) <= MAX_WORD for w in words):
                raise WordsError(f"{path}: {section}.{name} must be a word or a list of words (1 to {MAX_WORD} characters each)")
            sections[section][name] = words
    return Words(path, release_key(releases["from"]), release_key(before) if before else (), sections)


class FamilyWords:
    """Every words file of one family (``<folder>/*.toml``), and which one a release reads with."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @cached_property
    def files(self) -> tuple[Words, ...]:
        """The family's words files, oldest range first; WordsError when there is none (an install without its data)."""
        found = sorted((load_words(path) for path in self.folder.glob("*.toml")), key=lambda w: w.since)
        if not found:
            raise WordsError(f"{self.folder}: no words file (an install without its data files?)")
        return tuple(found)

    def of(self, version: str | None = None) -> Words:
        """The words for ``version`` (None or "": the newest file's)."""
        files = self.files
        if version:
            held = next((w for w in files if w.holds(version)), None)
            if held is not None:
                return held
            key = release_key(version)
            if key and key < files[0].since:
                return files[0]
        return files[-1]
