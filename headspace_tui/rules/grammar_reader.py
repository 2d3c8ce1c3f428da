"""The second reader: the command line by tree-sitter's bash grammar, taken only when the tree names every byte.

A grammar written for editors forgives what bash does not forgive the
other way round: it files ``-rf /home/victim`` after ``> /dev/null`` under
the redirection (bash runs them as arguments), reads ``\\ #`` as an
escaped blank and a comment (bash runs what follows), and drops tokens it
has no node for (``npm test $``, ``==``).  So this reader accepts a tree
only when

* every node is one it knows: a program, lists and pipelines of
  commands, a command's name and words, a file redirection with exactly
  one target after the program's words, a comment;
* every leaf it used, put back in place, covers the text: each byte not
  under a used leaf is a blank or a newline;
* each word is plain (``plain.py``) as the tree gives it.

Its reading must equal the first reader's (``strict_reader.py``) word for
word, redirection for redirection; ``shell.parse`` refuses the command
when they differ.  Pure: text in, a reading out.
"""

from __future__ import annotations

from functools import cache

from .plain import NOT_IN_DOUBLE_QUOTES, check_program, check_unquoted
from .reading import Parsed, Redirect, Simple, Unreadable

_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "&", "\n"})
_FD_OPS = frozenset({">", ">>", ">|", "<", ">&", ">&-", "&>", "&>>"})
_DIGITS = "0123456789"


@cache
def _parser():
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def read(text: str) -> Parsed:
    """``text``'s simple commands by the grammar, or ``Unreadable``; the caller has checked its characters (``plain.check_text``)."""
    data = text.encode("utf-8")
    tree = _parser().parse(data)
    root = tree.root_node
    if root.has_error or root.type != "program":
        raise Unreadable("the shell grammar does not read it")
    walk = _Walk()
    walk.node(root)
    walk.covers(data)
    if not walk.done:
        raise Unreadable("no command in it")
    return Parsed(tuple(walk.done), walk.concurrent)


class _Walk:
    def __init__(self) -> None:
        self.done: list[Simple] = []
        self.used: list[tuple[int, int]] = []  # byte spans of the leaves read
        self.concurrent = False  # a pipe or a "&": parts that run at once

    def leaf(self, node) -> None:
        self.used.append((node.start_byte, node.end_byte))

    def covers(self, data: bytes) -> None:
        """Every byte is under a leaf read, or blank space: nothing the grammar skipped."""
        spans = sorted(self.used)
        at = 0
        for start, end in spans:
            if start > at and data[at:start].strip(b" \t\n"):
                raise Unreadable("a part the grammar does not account for")
            at = max(at, end)
        if data[at:].strip(b" \t\n"):
            raise Unreadable("a part the grammar does not account for")

    def node(self, node) -> None:
        kind = node.type
        if kind in ("program", "list", "pipeline"):
            children = node.children
            for n, child in enumerate(children):
                if child.type in _SEPARATORS:
                    self.leaf(child)
                    self.concurrent = self.concurrent or child.type in ("|", "|&", "&")
                    if child.type == "|&":
                        self._stderr_too(children[:n])
                elif child.type == "comment":
                    self.leaf(child)
                elif child.is_named:
                    self.node(child)
                else:
                    raise Unreadable(f"the token {child.type!r}")
        elif kind == "redirected_statement":
            body, *redirects = node.children
            if not redirects:
                raise Unreadable(f"a redirected {body.type.replace('_', ' ')} without its redirection")
            if body.type == "command":
                self.done.append(Simple(self._words(body), tuple(self._redirect(r) for r in redirects)))
            elif body.type in ("list", "pipeline"):
                # The grammar hangs ``a && b 2>&1`` on the whole list; bash gives a redirection to the simple command it follows.
                before = len(self.done)
                self.node(body)
                if len(self.done) == before:
                    raise Unreadable("a redirected list with no command")
                last = self.done[-1]
                self.done[-1] = Simple(last.words, (*last.redirects, *(self._redirect(r) for r in redirects)))
            else:
                raise Unreadable(f"a redirected {body.type.replace('_', ' ')}")
        elif kind == "command":
            self.done.append(Simple(self._words(node)))
        else:
            raise Unreadable(f"a {kind.replace('_', ' ')}")

    def _stderr_too(self, before: list) -> None:
        """``a |& b`` is ``a 2>&1 | b``: the command just before it also pipes its errors."""
        if not before or not self.done:
            raise Unreadable("'|&' with nothing before it")
        last = self.done[-1]
        self.done[-1] = Simple(last.words, (*last.redirects, ("2", ">&", "1")))

    def _words(self, node) -> tuple[str, ...]:
        words: list[str] = []
        for child in node.children:
            if child.type == "command_name":
                if child.named_child_count != 1 or child.child_count != 1:
                    raise Unreadable("a command name that is not one word")
                words.append(self._word(child.named_children[0]))
            elif child.is_named and not words:
                raise Unreadable(f"a {child.type.replace('_', ' ')} before the command's name")
            elif child.is_named:
                words.append(self._word(child))
            else:
                raise Unreadable(f"the token {child.type!r}")
        if not words:
            raise Unreadable("a command without a name")
        check_program(tuple(words))
        return tuple(words)

    def _word(self, node) -> str:
        """A word's value, when the shell would not change it."""
        kind = node.type
        text = node.text.decode("utf-8")
        if kind in ("word", "number"):
            why = check_unquoted(text) if text else "an empty word"
            if why:
                raise Unreadable(why)
            self.leaf(node)
            return text
        if kind == "raw_string":
            self.leaf(node)
            return text[1:-1]
        if kind == "string":
            parts = node.children
            if len(parts) < 2 or parts[0].type != '"' or parts[-1].type != '"':
                raise Unreadable("a quoted word the grammar does not close")
            at = parts[0].end_byte
            for part in parts[1:]:
                if part is not parts[-1] and part.type != "string_content":
                    raise Unreadable("an expansion inside quotes")
                if node.text[at - node.start_byte : part.start_byte - node.start_byte].strip(b" \t\n"):
                    raise Unreadable("a part of a quoted word the grammar does not name")  # only line breaks fall between its parts
                at = part.end_byte
            value = text[1:-1]
            if any(c in NOT_IN_DOUBLE_QUOTES for c in value):
                raise Unreadable("an escape or an expansion inside double quotes")
            self.leaf(node)
            return value
        if kind == "concatenation":
            return "".join(self._word(part) for part in _only_named(node))
        raise Unreadable(f"a {kind.replace('_', ' ')}")

    def _redirect(self, node) -> Redirect:
        if node.type != "file_redirect":
            raise Unreadable(f"a {node.type.replace('_', ' ')}")
        fd, op, targets = None, "", []
        for child in node.children:
            if child.type == "file_descriptor":
                fd = child.text.decode("utf-8")
                if len(fd) != 1 or fd not in _DIGITS or op:
                    raise Unreadable("a descriptor that is not one digit")
                self.leaf(child)
            elif not child.is_named:
                if op or child.type not in _FD_OPS:
                    raise Unreadable(f"the redirection {child.type!r}")
                op = child.type
                self.leaf(child)
            else:
                targets.append(child)
        if op == ">&-":
            if targets:
                raise Unreadable("a word after a redirection (bash runs it as an argument)")
            return (fd or "1", ">&", "-")
        if len(targets) != 1:
            raise Unreadable("a word after a redirection (bash runs it as an argument)" if targets else "a redirection without its file")
        (target,) = targets
        if op in ("&>", "&>>"):
            if fd is not None:
                raise Unreadable("a descriptor before '&>'")
            return ("&", op[1:], self._word(target))
        if op == ">&":
            if target.type not in ("word", "number"):
                raise Unreadable("a quoted word after '>&'")
            word = self._word(target)
            if word != "-" and (word.endswith("-") or word.startswith("-")):
                raise Unreadable("a descriptor moved ('>&2-') or closed before a word ('>& -x' is '>&-' and 'x')")
            if all(c in _DIGITS for c in word) or word == "-":
                return (fd or "1", ">&", word)
            if fd not in (None, "1"):
                raise Unreadable(f"'{fd}>&' a file")
            return ("&", ">", word)
        word = self._word(target)
        if not word:
            raise Unreadable("a redirection without its file")
        return (fd or ("0" if op == "<" else "1"), op, word)


def _only_named(node) -> list:
    if any(not child.is_named for child in node.children):
        raise Unreadable("a word with a part the grammar does not name")
    return list(node.named_children)
