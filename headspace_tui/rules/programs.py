"""Per program, the options and words that write a file or run another program: what a rule's wildcards and prefixes never let through.

``prefix = ["git"]`` reads as "git, with whatever follows", but what
follows may be ``--output=~/.bashrc`` (git diff writes it), ``-c
core.pager=…`` (git runs it), ``-exec`` (find), ``--to-command`` (tar),
``-e`` (rsync's remote shell) or a remote command (ssh).  So a prefix
rule's tail, and each word a wildcard matched in a command rule, is
checked against the program's table in ``programs.toml`` (its header says
how entries match); a rule that names the option or word itself still
allows it.  Pure: the table is data, read once.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

_VERSION = re.compile(r"[\d.]+$")


@dataclass(frozen=True)
class Program:
    """One program's table (programs.toml)."""

    name: str
    flags: tuple[str, ...] = ()
    words: frozenset[str] = frozenset()
    code: str = ""  # "first": its first plain argument is code; "all": all of them are
    writes: bool = False  # every plain argument is a file it writes
    assignments: bool = False  # an argument with "=" sets a variable its runs read
    clusters: bool = True  # "-xvf" is three one-letter options (False: "-json" is one word)
    remote: bool = False  # an argument may name another host ("host:path"), where it copies to or from
    inline: bool = False  # its script is text among its arguments (sed, awk): a wildcard never stands for one
    oldstyle: bool = False  # its first argument may be its options without a dash (tar xPf)
    globs: bool = False  # it expands patterns in its arguments itself (git's pathspecs, zip)
    abbreviates: bool = False  # it takes any unique start of a command's name (npm's "exe" is exec)
    fetches: bool = False  # its first argument names a package it fetches and runs (npx): never a wildcard's

    def risky(self, word: str) -> str:
        """Why ``word`` writes or runs something for this program ("" when it is not known to)."""
        for flag in self.flags:
            if _matches(flag, word, self.clusters):
                return f"{self.name} {flag} writes or runs something"
        if word in self.words:
            return f"{self.name} {word} writes or runs something"
        if self.abbreviates and len(word) >= 2 and not word.startswith("-") and word.isalpha():
            whole = min((w for w in self.words if w.startswith(word)), default=None)
            if whole is not None:
                return f"{self.name} {word} ({whole}) writes or runs something"
        if self.assignments and "=" in word and not word.startswith("-"):
            return f"{self.name} {word.split('=', 1)[0]}=… sets what it runs"
        return ""


def _matches(flag: str, word: str, clusters: bool) -> bool:
    if not clusters and word.startswith("--") and not flag.startswith("--"):
        word = word[1:]  # Go's flags (and the like) take "--flag" as "-flag"
    if flag.endswith(":*"):  # a URL scheme: case does not matter to it (fIlE:)
        return word.casefold().startswith(flag[:-1])
    if flag.endswith(("=", "*")):
        return word.startswith(flag.rstrip("*"))
    if flag.startswith("--"):
        if not word.startswith("--") or len(word) < 3:
            return False
        name = word.split("=", 1)[0]
        return name == flag or flag.startswith(name) or name.startswith(flag + ".")  # "--out" abbreviates "--output"
    if flag.startswith("-") and len(flag) == 2:
        if clusters:
            return word.startswith("-") and not word.startswith("--") and flag[1] in word[1:]
        return word.startswith(flag)
    if flag.startswith("-"):
        return word == flag or word.startswith(flag + "=")
    return word == flag


def name_of(word: str) -> str:
    """The program a command's first word runs, as the table names it: its file name, a version suffix dropped (python3.12 → python)."""
    base = word.rsplit("/", 1)[-1]
    return _VERSION.sub("", base) or base


@cache
def table() -> dict[str, Program]:
    data = tomllib.loads(resources.files(__package__).joinpath("programs.toml").read_text(encoding="utf-8"))
    out = {}
    for name, entry in data.items():
        out[name] = Program(
            name=name,
            flags=tuple(entry.get("flags", ())),
            words=frozenset(entry.get("words", ())),
            code=str(entry.get("code", "")),
            writes=bool(entry.get("writes", False)),
            assignments=bool(entry.get("assignments", False)),
            clusters=bool(entry.get("clusters", True)),
            remote=bool(entry.get("remote", False)),
            inline=bool(entry.get("inline", False)),
            oldstyle=bool(entry.get("oldstyle", False)),
            globs=bool(entry.get("globs", False)),
            abbreviates=bool(entry.get("abbreviates", False)),
            fetches=bool(entry.get("fetches", False)),
        )
    return out


# Programs that only read (with no option of theirs that writes or runs: those are in the table), and git's reading words:
# after any other program in a line, the files a later part names may have moved, been made or linked (judge.py).
READ_ONLY = frozenset(
    {
        "ls", "cat", "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "head", "tail", "wc", "pwd", "true", "false",
        "diff", "cmp", "stat", "file", "which", "type", "date", "uniq", "cut", "tr", "jq", "basename", "dirname", "realpath",
        "readlink", "du", "df", "sleep", "whoami", "id", "uname", "hostname", "nproc", "less", "tree", "sha256sum", "md5sum",
        "column", "nl", "od", "xxd", "hexdump", "strings", "seq", "yes", "expr",
    }
)  # fmt: skip
GIT_READS = frozenset(
    {"status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "grep", "describe", "shortlog", "cat-file", "rev-list", "merge-base", "name-rev"}
)  # fmt: skip


def reads_only(words: tuple[str, ...]) -> bool:
    """Does this simple command only read (so that the files a later part of the line names are still where they are)?"""
    name = name_of(words[0]) if words else ""
    if name == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        return sub in GIT_READS
    return name in READ_ONLY


def table_of(word: str) -> Program | None:
    """The table of the program ``word`` runs, if it has one."""
    return table().get(name_of(word))
