"""What counts as plain in a command line: the characters, the words and the programs a rule may judge.

The readers (``strict_reader.py``, ``grammar_reader.py``) accept only a
small part of the shell language, chosen so that bash and zsh (an agent's
shell may be either) read it alike and neither changes a word before it
runs.  Everything outside it makes the command unreadable, and the person
answers.  Why each line is here:

* Unquoted, a word may hold only ``A-Z a-z 0-9 _ . / : , @ % + = -``,
  and ``~`` inside it (``HEAD~1``): no expansion (``$``, backticks), no
  glob (``* ? [ ]``, and ``^``, zsh's negation under ``extended_glob``:
  ``rm docs/^keep`` removes every other file), no brace, no ``!``
  (history, zsh's ``>!``), no ``#`` inside a word, no backslash (an
  escaped blank or a line continuation hides a comment or joins two words:
  ``git status \\ #;curl …|sh`` runs curl), nothing outside ASCII
  (look-alike letters, zero-width marks, a no-break space bash takes for a
  letter).  A word never begins with ``=`` (zsh's ``=cmd`` is a path) or
  ``~`` (home), not even after empty quotes (zsh expands ``''~``), holds
  no ``==``, and no ``~`` follows ``=`` or ``:`` (bash expands ``x=~/y``
  even in an argument).
* Inside single quotes anything printable is data (and a newline);
  inside double quotes too, but ``$``, backticks, backslashes and ``!``.
* No control character anywhere but a tab and a newline (a bare CR, VT
  or FF is drawn as nothing, or as a line break, by a terminal).
* At most ``MAX_COMMAND`` characters: a dialog that long is not read by
  a person either (Claude Code's own matcher gave up at 10,000).
"""

from __future__ import annotations

import string
import unicodedata

from .programs import name_of
from .reading import Unreadable

MAX_COMMAND = 10_000
UNQUOTED = frozenset(string.ascii_letters + string.digits + "_./:,@%+=-~")
NOT_FIRST = frozenset("=~")  # never a word's first character, quotes or not (zsh's =cmd, home)
NOT_IN_DOUBLE_QUOTES = frozenset('$`\\!"')

# Words a shell reads as its own grammar at a command's start (bash's, and zsh's own; ``-`` is zsh's precommand modifier).
RESERVED = frozenset(
    {
        "!", "{", "}", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in",
        "select", "then", "time", "until", "while", "foreach", "end", "repeat", "nocorrect", "noglob", "-",
    }
)  # fmt: skip

# Commands that run another command (or code) given as their arguments: what they run is not the words read here.
WRAPPERS = frozenset(
    {
        "env", "sudo", "doas", "su", "timeout", "xargs", "nohup", "nice", "ionice", "stdbuf", "time", "command", "builtin",
        "exec", "eval", "source", ".", "sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "busybox", "chroot",
        "setsid", "unbuffer", "script", "watch", "parallel", "flock", "strace", "ltrace", "gdb", "nsenter", "unshare",
        "runuser", "chronic", "pkexec", "systemd-run", "firejail", "bwrap", "proot", "fakeroot", "catchsegv", "valgrind",
        "taskset", "chrt", "prlimit", "sg", "newgrp", "expect", "sched", "zpty",
    }
)  # fmt: skip

# Builtins that evaluate their arguments as code (an array subscript in ``test -v 'a[$(id)]'`` runs ``id``), change
# how later words are read or run (aliases, traps, options), or move the shell elsewhere for what follows.
EVALUATES = frozenset(
    {
        "let", "test", "[", "read", "declare", "typeset", "local", "export", "readonly", "unset", "mapfile", "readarray",
        "trap", "alias", "unalias", "enable", "fc", "complete", "compgen", "bind", "shopt", "set", "setopt", "unsetopt",
        "emulate", "autoload", "zmodload", "functions", "hash", "integer", "float", "caller", "wait", "disown", "ulimit", "umask",
    }
)  # fmt: skip


def check_text(text: str) -> None:
    """Refuse a command line a person could not read as it runs: empty, too long, or with a control character."""
    if not text.strip():
        raise Unreadable("an empty command")
    if len(text) > MAX_COMMAND:
        raise Unreadable(f"longer than {MAX_COMMAND:,} characters")
    for char in text:
        if char not in "\t\n" and not printable(char):
            raise Unreadable(f"a control or invisible character ({ord(char):#06x})")


def printable(char: str) -> bool:
    """A character shown as itself: no control, format (zero-width), surrogate, private or unassigned one, no line separator."""
    if char == " ":
        return True
    category = unicodedata.category(char)
    return category[0] != "C" and category not in ("Zl", "Zp")


def check_unquoted(word: str) -> str:
    """Why an unquoted word (or part of one, from ``after``) is not plain ("" when it is)."""
    bad = next((c for c in word if c not in UNQUOTED), None)
    if bad is not None:
        return f"{bad!r} is changed by the shell, or not plain"
    if word[:1] in NOT_FIRST:
        return f"a word that begins with {word[0]!r}"
    if "==" in word or "=~" in word or ":~" in word:
        return "'==', '=~' or ':~' in a word"
    return ""


def check_program(words: tuple[str, ...], quoted_name: bool = False) -> None:
    """Refuse a simple command whose first word is grammar, an assignment, or a program that runs what its words say."""
    if not words or not words[0]:
        raise Unreadable("a command without a name")
    name = words[0]
    if name in RESERVED:
        raise Unreadable(f"{name!r} is the shell's own grammar")
    if "=" in name:
        raise Unreadable("a variable set for the command")
    base = name.rsplit("/", 1)[-1]
    if base in WRAPPERS or name_of(base) in WRAPPERS:
        raise Unreadable(f"{base} runs another command")
    if base in EVALUATES or name_of(base) in EVALUATES:
        raise Unreadable(f"{base} is a shell builtin that evaluates or changes what follows")
