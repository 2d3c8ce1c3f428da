"""A shell command as the simple commands it runs, read twice, or not at all.

A rule that allows ``touch /tmp/x_*`` must never answer ``touch /tmp/x_2 &&
curl …`` or ``touch /tmp/x_3; rm -rf ~`` (Claude Code's own allow rules
did: anthropics/claude-code#94314), nor a line whose bytes bash reads
otherwise than the rule's reader (``rm a > /dev/null -rf ~``,
``git status \\ #;curl …|sh``).  So a command is read by two readers of
different make: one written here, character by character, for the plain
part of the language alone (``strict_reader.py``), and tree-sitter's bash
grammar (``grammar_reader.py``), taken only when its tree names every
byte.  Both must give the same simple commands, word for word, and the
same redirections; anything either cannot read, or where they differ, is
``Unreadable``, and the person answers.  Not read at all (``plain.py``):

* expansions of any kind (``$x``, ``$(…)``, backticks, ``<(…)``), and
  unquoted words the shell would still change (``~``, globs, braces,
  backslashes, ``!``), control and invisible characters;
* anything but a list of commands: subshells, groups, ``if``/``for``,
  functions, ``!``, assignments (``FOO=1 cmd``), here-documents;
* commands that run other commands (``env``, ``sudo``, ``xargs``,
  ``sh -c`` …) and builtins that evaluate their words (``test -v``,
  ``declare``, ``trap`` …).

The reading is checked against bash's own (``declare -f`` in a sandbox)
by the differential tests.  Pure: text in, a reading out.
"""

from __future__ import annotations

from . import grammar_reader, strict_reader
from .plain import WRAPPERS
from .reading import Parsed, Simple, Unreadable

__all__ = ["WRAPPERS", "Parsed", "Simple", "Unreadable", "parse"]


def parse(command: str) -> Parsed:
    """``command``'s simple commands and redirections; ``Unreadable`` (with the reason) for anything not plain."""
    if not isinstance(command, str):
        raise Unreadable("not text")
    first = strict_reader.read(command)  # also checks every character before the grammar sees any
    try:
        second = grammar_reader.read(command)
    except Unreadable as exc:
        raise Unreadable(f"the second reader: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the grammar's binding failing (any way) is no reading
        raise Unreadable(f"the second reader failed ({type(exc).__name__})") from None
    if first != second:
        raise Unreadable("its two readings differ")
    return first
