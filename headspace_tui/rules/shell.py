"""A shell command as the simple commands it runs, by a real parser (tree-sitter's bash grammar), or None when it cannot be read plainly.

A rule that allows ``touch /tmp/x_*`` must never answer ``touch /tmp/x_2 &&
curl …`` or ``touch /tmp/x_3; rm -rf ~`` (Claude Code's own allow rules
did: anthropics/claude-code#94314).  So a command is split at ``;``,
``&&``, ``||``, ``|``, ``&`` and newlines into simple commands, each a list
of plain words, and every one must be allowed.  Anything whose words are
not known before the shell runs is not read at all (the person answers):

* expansions of any kind (``$x``, ``${x}``, ``$(…)``, backticks,
  ``<(…)``, arithmetic), and unquoted words the shell would still change
  (``~``, globs ``* ? [``, braces, backslashes);
* anything but a list of commands: subshells, ``{ …; }``, ``if``/``for``/
  ``while``/``case``, functions, ``!``, assignments (``FOO=1 cmd``:
  ``LD_PRELOAD`` is one), here-documents;
* commands that run other commands: ``env``, ``sudo``, ``timeout``,
  ``xargs``, ``nohup``, ``nice``, ``sh -c``, ``bash``, ``eval``, ``exec``,
  ``command``, ``time`` and the like;
* text the grammar reads with an error.

Redirections are kept apart (``writes``): the caller allows only those
into the project (or ``/dev/null``).  Pure: text in, words out.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

# Commands that run another command (or code) given as their arguments: what they run is not the words read here.
WRAPPERS = frozenset(
    {
        "env", "sudo", "doas", "su", "timeout", "xargs", "nohup", "nice", "ionice", "stdbuf", "time", "command", "builtin",
        "exec", "eval", "source", ".", "sh", "bash", "zsh", "dash", "ksh", "fish", "busybox", "chroot", "setsid", "unbuffer",
        "script", "watch", "parallel", "flock", "strace", "ltrace", "gdb", "nsenter", "unshare", "runuser", "chronic",
    }
)  # fmt: skip
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "&", "\n", ";;"})
_UNSAFE_IN_WORD = frozenset("*?[]{}~\\")
_OUTPUT = (">", ">>", "&>", "&>>", ">|")


@dataclass(frozen=True)
class Parsed:
    """The simple commands a command line runs (each its words) and the files its redirections write."""

    commands: tuple[tuple[str, ...], ...]
    writes: tuple[str, ...] = ()


class Unreadable(ValueError):
    """Why a command is not read plainly (the person answers it)."""


@cache
def _parser():
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def parse(command: str) -> Parsed:
    """``command``'s simple commands and written files; ``Unreadable`` (with the reason) for anything not plain."""
    if not command.strip():
        raise Unreadable("an empty command")
    tree = _parser().parse(command.encode("utf-8", "surrogatepass"))
    if tree.root_node.has_error:
        raise Unreadable("the shell grammar does not read it")
    commands: list[tuple[str, ...]] = []
    writes: list[str] = []
    _walk(tree.root_node, commands, writes)
    if not commands:
        raise Unreadable("no command in it")
    return Parsed(tuple(commands), tuple(writes))


def _walk(node, commands: list, writes: list) -> None:
    kind = node.type
    if kind in ("program", "list", "pipeline"):
        for child in node.children:
            if child.type in _SEPARATORS or child.type == "comment":
                continue
            _walk(child, commands, writes)
    elif kind == "redirected_statement":
        body, *redirects = node.children
        _walk(body, commands, writes)
        for redirect in redirects:
            _redirect(redirect, writes)
    elif kind == "command":
        commands.append(_command(node))
    elif kind == "comment":
        return
    else:
        raise Unreadable(f"a {kind.replace('_', ' ')}")


def _redirect(node, writes: list) -> None:
    if node.type != "file_redirect":
        raise Unreadable(f"a {node.type.replace('_', ' ')}")
    operator = next((c.type for c in node.children if not c.is_named), "")
    target = node.child_by_field_name("destination") or (node.children[-1] if node.children else None)
    if target is None:
        raise Unreadable("a redirection without a target")
    if target.type in ("number", "file_descriptor") or operator in (">&", "<&", "<&-", ">&-"):
        return  # onto another descriptor (2>&1): no file
    word = _word(target)
    if operator in _OUTPUT or operator.endswith(">"):
        writes.append(word)


def _command(node) -> tuple[str, ...]:
    words: list[str] = []
    for child in node.children:
        if child.type == "command_name":
            if child.named_child_count != 1:
                raise Unreadable("a command name that is not one word")
            words.append(_word(child.named_children[0]))
        elif child.type == "variable_assignment":
            raise Unreadable("a variable set for the command")
        elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
            raise Unreadable("a redirection inside the command")
        elif child.is_named:
            words.append(_word(child))
    if not words:
        raise Unreadable("a command without a name")
    name = words[0].rsplit("/", 1)[-1]
    if name in WRAPPERS:
        raise Unreadable(f"{name} runs another command")
    return tuple(words)


def _word(node) -> str:
    """A word's value, when the shell would not change it."""
    kind, text = node.type, node.text.decode("utf-8", "surrogatepass")
    if kind in ("word", "number"):
        if any(c in _UNSAFE_IN_WORD for c in text):
            raise Unreadable(f"{text!r} is changed by the shell before it runs")
        return text
    if kind == "raw_string":
        return text[1:-1]
    if kind == "string":
        parts = [c for c in node.named_children]
        if any(p.type != "string_content" for p in parts):
            raise Unreadable("an expansion inside quotes")
        inner = "".join(p.text.decode("utf-8", "surrogatepass") for p in parts)
        if "\\" in inner:
            raise Unreadable("an escape inside quotes")
        return inner
    if kind == "concatenation":
        return "".join(_word(part) for part in node.named_children)
    raise Unreadable(f"a {kind.replace('_', ' ')}")
