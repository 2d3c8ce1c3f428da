"""The tmux key that opens headspace in a popup, written so that it works whatever tmux's PATH is.

A tmux server keeps the environment it was started with: one started before
``pipx ensurepath`` (or from a login without ``~/.local/bin``) runs a bare
``display-popup -E headspace`` through ``sh -c`` with a PATH that has no
``headspace``, and the popup closes at once without a word.  So the binding
names the installed command by its absolute path (``binding``), and
``headspace doctor`` checks what the server would run (``popup_programs``
reads tmux's own ``list-keys``; ``TmuxServer.global_path`` the server's PATH).

Two layers of quoting: the command is a shell line (``sh -c``), quoted
with ``shlex``; that line is one argument of a tmux command, quoted for
tmux's parser (``tmux_quote``).  Neither ``$``, ``#{…}``, ``;``, spaces nor
quotes in the path survive as anything but themselves (checked against a real
tmux and a real client in tests/e2e/test_popup_key.py).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass, field

DEFAULT_KEY = "h"
SIZE = "90%"
POPUP_COMMAND = "popup"  # the launcher: the warm UI, else the cold headspace
NAME_CLIENT = "set-environment -gF HEADSPACE_CLIENT '#{client_name}'"  # before the popup: whose client a jump moves
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+-]*$")
# display-popup's flags that take a value (tmux 3.2-3.5): the shell command is the first word after them.
_POPUP_VALUE_FLAGS = frozenset("bcdehsStTwxy")


def installed_command(argv0: str | None = None, executable: str | None = None) -> list[str]:
    """The words that start this headspace from anywhere, with no PATH lookup.

    The ``headspace`` script this process was started as (its absolute path,
    symlinks kept: pipx's ``~/.local/bin/headspace`` still works after an
    upgrade); when started another way (``python -m headspace_tui``), this
    Python (unresolved: a venv's ``python`` finds the venv) with ``-m``.
    """
    script = sys.argv[0] if argv0 is None else argv0
    if os.path.basename(script) == "headspace" and os.path.isfile(script) and os.access(script, os.X_OK):
        return [os.path.abspath(script)]
    return [os.path.abspath(executable or sys.executable), "-m", "headspace_tui"]


def tmux_quote(word: str) -> str:
    """``word`` as one argument for tmux's command parser (a config file, ``source-file``, the command prompt).

    Single quotes take everything literally; a word holding one goes in
    double quotes, where tmux's escapes (``\\``, ``"``, ``$`` for its
    environment expansion) are escaped.
    """
    if "'" not in word:
        return f"'{word}'"
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


def binding(key: str = DEFAULT_KEY, command: list[str] | None = None) -> str:
    """The ``bind-key`` line for ``~/.tmux.conf``: ``key`` after the prefix opens headspace in a popup.

    The popup runs ``headspace popup``, the launcher of the warm UI
    (cli/popup.py, docs/popup.md), after naming the client that pressed the
    key (``HEADSPACE_CLIENT``: the one a jump moves, tmux/clients.py).
    """
    if not key or any(ord(c) < 0x20 or ord(c) == 0x7F for c in key):
        raise ValueError("a tmux key name, such as h, M-h or F5")
    shell = shlex.join([*(command or installed_command()), POPUP_COMMAND])
    key_word = key if _PLAIN_KEY.match(key) else tmux_quote(key)
    return f"bind-key {key_word} {NAME_CLIENT} \\; display-popup -E -w {SIZE} -h {SIZE} {tmux_quote(shell)}"


@dataclass(frozen=True)
class PopupKey:
    """A key bound to a popup that runs headspace, as tmux holds it."""

    key: str  # as list-keys shows it: "h", or "-n F5" for a key without the prefix
    program: str  # the first word of the popup's shell command: a path, or a name looked up on PATH
    warm: bool = field(default=False, compare=False)  # it runs ``headspace popup`` (the warm UI), not a cold headspace


def _popup_command(words: list[str]) -> str | None:
    """The shell command of a ``display-popup`` (the words after its name), or None."""
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            return words[index + 1] if index + 1 < len(words) else None
        if word.startswith("-") and len(word) > 1:
            # Flags may be bundled (-EE, -Ew 90%); the first value-taking one consumes the rest or the next word.
            for position, flag in enumerate(word[1:], start=1):
                if flag in _POPUP_VALUE_FLAGS:
                    if position == len(word) - 1:
                        index += 1
                    break
            index += 1
            continue
        return word
    return None


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "e": "\x1b"}


def tmux_words(line: str) -> list[str]:
    """One line of tmux commands split into words as tmux's parser does: quotes, and backslash escapes.

    Not ``shlex``: inside double quotes tmux takes ``\\$`` as ``$`` (its
    environment expansion is escaped so), where the shell's rules, as shlex
    has them, keep the backslash.
    """
    words: list[str] = []
    word: list[str] = []
    started = False  # a word has begun (an empty '' is a word too)
    quote = ""
    chars = iter(line)
    for char in chars:
        if quote == "'" and char != "'":
            word.append(char)
        elif char == "\\" and quote != "'":
            nxt = next(chars, "")
            word.append(_ESCAPES.get(nxt, nxt) if quote else nxt)
            started = True
        elif quote and char == quote:
            quote = ""
        elif quote:
            word.append(char)
        elif char in "'\"":
            quote, started = char, True
        elif char.isspace():
            if started:
                words.append("".join(word))
            word, started = [], False
        else:
            word.append(char)
            started = True
    if started:
        words.append("".join(word))
    return words


def _bound_key(words: list[str]) -> tuple[str, str]:
    """The table and key of a ``bind-key [-nr] [-N note] [-T table] key command…`` line."""
    table, index = "prefix", 1
    while index < len(words) and words[index].startswith("-") and len(words[index]) > 1:
        if words[index] in ("-T", "-N") and index + 1 < len(words):
            table = words[index + 1] if words[index] == "-T" else table
            index += 1
        elif words[index] == "-n":
            table = "root"
        index += 1
    return table, words[index] if index < len(words) else ""


def popup_programs(list_keys: str) -> list[PopupKey]:
    """The keys of ``tmux list-keys`` output whose popup runs headspace, and the program each starts.

    list-keys prints each binding as a command tmux would parse back.  A
    popup counts as headspace's when a word of its shell command is
    ``headspace`` (or ends in ``/headspace``) or ``headspace_tui``.
    """
    found = []
    for line in list_keys.splitlines():
        if "popup" not in line:
            continue
        words = tmux_words(line)
        if "display-popup" in words:
            at = words.index("display-popup")
        elif "popup" in words:
            at = words.index("popup")
        else:
            continue
        table, key = _bound_key(words)
        command = _popup_command(words[at + 1 :])
        if command is None:
            continue
        try:
            shell = shlex.split(command)
        except ValueError:
            continue
        if not any(os.path.basename(w) == "headspace" or w == "headspace_tui" for w in shell):
            continue
        while shell and (shell[0] in ("exec", "env") or "=" in shell[0]):
            shell = shell[1:]  # exec headspace, env X=1 headspace
        if shell:
            found.append(PopupKey(key if table == "prefix" else f"{key} (table {table})", shell[0], warm=POPUP_COMMAND in shell[1:]))
    return found
