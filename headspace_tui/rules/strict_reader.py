"""The first reader: a command line read character by character, every byte accounted for, or not read at all.

It reads only the plain part of the shell language (``plain.py`` says
which characters and words): words (unquoted characters, single- and
double-quoted parts, joined), the separators ``;`` ``&&`` ``||`` ``|``
``|&`` ``&`` and newlines, comments after a blank, and redirections at the
end of a simple command.  Each byte is part of a word, an operator, a
redirection, a comment, or blank space; anything else raises
``Unreadable``.  Narrower than bash on purpose, where bash's own reading
is easy to get wrong:

* a word after a redirection (bash runs ``rm a > /dev/null -rf b`` as
  ``rm a -rf b``), or a redirection before the program's name;
* a redirection glued to a word (``a2>f`` is ``a2`` writing ``f``) or
  with its descriptor quoted; a descriptor of more than one digit;
* ``<>``, ``<&``, here-documents and here-strings, ``N>&FILE`` for N other
  than 1, a quoted target after ``>&``;
* ``#`` that does not follow a blank (bash's comment rules differ by
  what came before), ``;;`` and ``;&`` (``case``), parentheses;
* an empty command between two separators, and a line that ends in
  ``&&``, ``||`` or ``|`` (the shell would wait for more).

Checked against bash's own reading of the same text (``declare -f``) by
``tests/unit/test_shell_differential.py``.  Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .plain import NOT_FIRST, NOT_IN_DOUBLE_QUOTES, UNQUOTED, check_program, check_text
from .reading import BLANKS, Parsed, Redirect, Simple, Unreadable

# After these a command must follow (newlines may come first); after ";" and "&" it may not be another separator.
_JOINS = frozenset({"&&", "||", "|", "|&"})
DIGITS = "0123456789"


@dataclass
class _Word:
    value: list[str] = field(default_factory=list)
    quoted: bool = False  # some part of it was in quotes
    started: bool = False

    def text(self) -> str:
        return "".join(self.value)


@dataclass
class _Command:
    words: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)

    def empty(self) -> bool:
        return not self.words and not self.redirects


def read(text: str) -> Parsed:
    """``text``'s simple commands, or ``Unreadable`` saying why not."""
    check_text(text)
    return _Reader(text).run()


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.done: list[Simple] = []
        self.command = _Command()
        self.word = _Word()
        self.last_op = "\n"  # the separator before the current command ("\n" at the start)
        self.concurrent = False  # a pipe or a "&" seen: parts that run at once

    # -- the loop ---------------------------------------------------------------------
    def run(self) -> Parsed:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char in BLANKS:
                self._end_word()
                self.i += 1
            elif char == "\n":
                self._end_word()
                self._separator("\n")
                self.i += 1
            elif char == "#":
                self._comment()
            elif char == "'":
                self._single_quoted()
            elif char == '"':
                self._double_quoted()
            elif char in "<>" or text.startswith("&>", self.i):
                self._redirect(None)
            elif char in DIGITS and not self.word.started and text[self.i + 1 : self.i + 2] in ("<", ">"):
                self.i += 1
                self._redirect(char)  # a descriptor: one digit, then the operator
            elif char in ";&|":
                self._operator()
            elif char in "()":
                raise Unreadable("a subshell or a group")
            elif char == "\\":
                raise Unreadable("a backslash outside single quotes (an escape or a line continuation)")
            elif char in UNQUOTED:
                self._unquoted(char)
                self.i += 1
            else:
                raise Unreadable(f"{char!r} is changed by the shell, or not plain")
        self._end_word()
        if self.last_op in _JOINS and self.command.empty():
            raise Unreadable(f"it ends with {self.last_op!r}")
        self._finish_command()
        if not self.done:
            raise Unreadable("no command in it")
        return Parsed(tuple(self.done), self.concurrent)

    # -- words ------------------------------------------------------------------------
    def _unquoted(self, char: str) -> None:
        if self.command.redirects and not self.word.started:
            raise Unreadable("a word after a redirection (bash runs it as an argument)")
        if char in NOT_FIRST and not self.word.text():
            raise Unreadable(f"a word that begins with {char!r}")  # after empty quotes too: zsh expands ''~ and ''=cmd
        before = self.word.value[-1][-1:] if self.word.value else ""
        if (char == "=" and before == "=") or (char == "~" and before in ("=", ":")):
            raise Unreadable(f"{before + char!r} in a word")
        self.word.value.append(char)
        self.word.started = True

    def _single_quoted(self) -> None:
        end = self.text.find("'", self.i + 1)
        if end < 0:
            raise Unreadable("a quote that is never closed")
        self._quoted(self.text[self.i + 1 : end])
        self.i = end + 1

    def _double_quoted(self) -> None:
        end = self.text.find('"', self.i + 1)
        if end < 0:
            raise Unreadable("a quote that is never closed")
        inner = self.text[self.i + 1 : end]
        bad = next((c for c in inner if c in NOT_IN_DOUBLE_QUOTES), None)
        if bad is not None:
            raise Unreadable(f"{bad!r} inside double quotes (the shell expands or escapes there)")
        self._quoted(inner)
        self.i = end + 1

    def _quoted(self, inner: str) -> None:
        if self.command.redirects and not self.word.started:
            raise Unreadable("a word after a redirection (bash runs it as an argument)")
        self.word.value.append(inner)
        self.word.quoted = self.word.started = True

    def _end_word(self) -> None:
        if not self.word.started:
            return
        self.command.words.append(self.word.text())
        if len(self.command.words) == 1:
            check_program((self.command.words[0],))
        self.word = _Word()

    # -- comments and operators ------------------------------------------------------
    def _comment(self) -> None:
        before = self.text[self.i - 1] if self.i else "\n"
        if self.word.started or before not in BLANKS + "\n":
            raise Unreadable("'#' that does not follow a blank")
        end = self.text.find("\n", self.i)
        end = len(self.text) if end < 0 else end
        if "\\" in self.text[self.i : end]:
            raise Unreadable("a backslash in a comment")
        self.i = end

    def _operator(self) -> None:
        text, i = self.text, self.i
        pair = text[i : i + 2]
        if pair in (";;", ";&"):
            raise Unreadable(f"{pair!r} (a case branch)")
        op = pair if pair in ("&&", "||", "|&") else text[i]
        self._end_word()
        self._separator(op)
        self.i += len(op)

    def _separator(self, op: str) -> None:
        """A separator: the command before it ends (none there is an error, but for newlines)."""
        if self.command.empty():
            if op == "\n" and self.last_op in _JOINS | {"\n", ";", "&"}:
                return  # newlines after a join, a separator or another newline
            raise Unreadable(f"nothing before {op!r}")
        if op == "|&":
            self.command.redirects.append(("2", ">&", "1"))  # bash's ``a 2>&1 | b``
        self.concurrent = self.concurrent or op in ("|", "|&", "&")
        self._finish_command()
        self.last_op = op

    def _finish_command(self) -> None:
        if self.command.empty():
            return
        if not self.command.words:
            raise Unreadable("a redirection with no command")
        self.done.append(Simple(tuple(self.command.words), tuple(self.command.redirects)))
        self.command = _Command()

    # -- redirections ----------------------------------------------------------------
    def _redirect(self, fd: str | None) -> None:
        text = self.text
        if self.word.started:
            raise Unreadable("a redirection glued to a word (or a descriptor of more than one digit)")
        if not self.command.words:
            raise Unreadable("a redirection before the command's name")
        op = next((o for o in ("&>>", "&>", ">>", ">|", ">&", ">", "<") if text.startswith(o, self.i)), "")
        if text.startswith(("<<", "<>", "<&"), self.i):
            raise Unreadable(f"{text[self.i : self.i + 2]!r} (a here-document, or a descriptor read or opened both ways)")
        if op.startswith("&") and fd is not None:
            raise Unreadable("a descriptor before '&>'")
        self.i += len(op)
        while self.i < len(text) and text[self.i] in BLANKS:
            self.i += 1
        target, quoted = self._target()
        self.command.redirects.append(_normal(fd, op, target, quoted))

    def _target(self) -> tuple[str, bool]:
        """The word a redirection names (its file, or a descriptor): read as any word, and it must be there."""
        start = self.i
        saved_command, saved_word = self.command, self.word
        self.command, self.word = _Command(), _Word()  # read the target as a word of its own
        while self.i < len(self.text):
            char = self.text[self.i]
            if char == "'":
                self._single_quoted()
            elif char == '"':
                self._double_quoted()
            elif char in UNQUOTED:
                self._unquoted(char)
                self.i += 1
            elif char in BLANKS + "\n;&|<>()#" or char == "\\":
                break
            else:
                raise Unreadable(f"{char!r} is changed by the shell, or not plain")
        word = self.word
        self.command, self.word = saved_command, saved_word
        if self.i == start or not word.text():
            raise Unreadable("a redirection without its file")
        if self.i < len(self.text) and self.text[self.i] in "\\#(":
            raise Unreadable("a redirection's file glued to what follows")
        if self.i < len(self.text) and self.text[self.i] in "<>" and not word.quoted and all(c in DIGITS for c in word.text()):
            raise Unreadable("a redirection whose file bash reads as the next one's descriptor")  # '< 1>f': '1>' is a descriptor
        return word.text(), word.quoted


def _normal(fd: str | None, op: str, target: str, quoted: bool) -> Redirect:
    """The redirection in the normal form both readers give (reading.py)."""
    if op in ("&>", "&>>"):
        return ("&", op[1:], target)
    if op == ">&":
        if quoted:
            raise Unreadable("a quoted word after '>&'")
        if target != "-" and (target.endswith("-") or target.startswith("-")):
            raise Unreadable("a descriptor moved ('>&2-') or closed before a word ('>& -x' is '>&-' and 'x')")
        if (target and all(c in DIGITS for c in target)) or target == "-":
            return (fd or "1", ">&", target)
        if fd not in (None, "1"):
            raise Unreadable(f"'{fd}>&' a file")
        return ("&", ">", target)
    return (fd or ("0" if op == "<" else "1"), op, target)
