"""What a shell command runs, as data both of the rules' readers give: simple commands, their words, their redirections.

A reading is the judge's whole knowledge of a command line, so it is kept
in the form bash itself would print it back (``declare -f`` normalises a
function's body the same way): the simple commands in order, each its
words after quote removal and its redirections in one normal form
``(fd, op, target)``:

* ``>``, ``>|``, ``>>``, ``<`` with the descriptor written out (``1`` for
  the output forms, ``0`` for ``<``);
* ``&>`` and bash's ``>&FILE`` (both stdout and stderr into FILE) as
  ``("&", ">", FILE)``, ``&>>`` as ``("&", ">>", FILE)``;
* ``N>&M`` as ``(N, ">&", M)``, a close ``N>&-`` as ``(N, ">&", "-")``;
* ``a |& b`` is bash's ``a 2>&1 | b``: the left command gains ``("2", ">&", "1")``.

Separators (``;``, ``&&``, ``|`` …) are not kept: every part must fit an
allow whatever joins them.  Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass

Redirect = tuple[str, str, str]  # (fd, op, target): see the module's docstring
WRITES = frozenset({">", ">>", ">|"})  # the ops that write their target (with fd "&" too)
BLANKS = " \t"


class Unreadable(ValueError):
    """Why a command is not read plainly (the person answers it)."""


@dataclass(frozen=True)
class Simple:
    """One simple command: its words (the program first) and its redirections, in the order written."""

    words: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()


@dataclass(frozen=True)
class Parsed:
    """The simple commands a command line runs, in order."""

    simple: tuple[Simple, ...]
    # Some of its parts run at once (a pipe, or ``&`` sending one to the background): their order is not the line's.
    concurrent: bool = False

    @property
    def commands(self) -> tuple[tuple[str, ...], ...]:
        return tuple(s.words for s in self.simple)

    @property
    def redirects(self) -> tuple[Redirect, ...]:
        return tuple(r for s in self.simple for r in s.redirects)

    @property
    def writes(self) -> tuple[str, ...]:
        """The files its redirections write (or create)."""
        return tuple(target for _, op, target in self.redirects if op in WRITES)

    @property
    def reads(self) -> tuple[str, ...]:
        """The files its redirections read."""
        return tuple(target for _, op, target in self.redirects if op == "<")

    def normal(self) -> tuple[tuple[tuple[str, ...], tuple[Redirect, ...]], ...]:
        """The reading as plain tuples, to hold against another reader's (bash's own, in the tests)."""
        return tuple((s.words, s.redirects) for s in self.simple)
