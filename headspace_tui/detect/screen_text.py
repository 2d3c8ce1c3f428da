"""What every family's screen reader needs of a captured screen, written once.

A ``capture-pane -p -e`` capture is rows of text with SGR colour escapes;
every reader drops the colours the same way, knows the same shells (a pane
whose agent has gone shows one again), and names a prompt by the same kind
of short hash.  A fix to any of these is a fix for all four families.
Pure: no tmux, no clock.
"""

from __future__ import annotations

import hashlib
import re

from ..model import AgentState, Evidence, Observation, Prompt
from .asks import asked

SGR = re.compile(r"\x1b\[[0-9;:]*m")  # one colour or style escape
# ``#{pane_current_command}`` when the pane shows a shell, not an agent (any family's agent has left).
SHELLS = frozenset({"bash", "zsh", "sh", "fish", "dash", "ksh", "tcsh", "csh", "nu", "xonsh", "elvish", "login"})


def strip_sgr(ansi: str) -> list[str]:
    """The screen rows of a ``capture-pane -p -e`` capture, colours dropped."""
    return [line.rstrip() for line in SGR.sub("", ansi).split("\n")]


def fingerprint(*parts: str) -> str:
    """A short stable hash of what identifies a prompt (its words, not its cursor or animation).

    Two readings of the same dialog have the same one; the answering guard
    refuses keys when the prompt on screen has another.
    """
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]


ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Marks drawn with no width of their own: variation selectors ("◆︎" is ◆ and U+FE0E), zero-width spaces (a box's cursor cell).
NO_WIDTH = re.compile("[\u200b-\u200d\u2060\ufe0e\ufe0f]")
# A scrollbar in the last column, a block or a bar after a blank (Qwen Code's, Copilot CLI's history).
SCROLLBAR = ("█", "┃", "│", "▐")
MAX_ROW = 2000  # characters of a row kept: a hostile row costs no more than this


def clean_rows(ansi: str, *, scrollbar: bool = False) -> list[str]:
    """The rows of a capture as plain text: every escape, control character and zero-width mark dropped, trailing blanks
    and trailing blank rows trimmed (and, with ``scrollbar``, a scrollbar at the right edge).

    (Outside text: what a pane shows goes into evidence and prompts, so no
    control character survives to a terminal that shows them.)
    """
    rows = [NO_WIDTH.sub("", CONTROL.sub("", ESCAPES.sub("", line)))[:MAX_ROW].rstrip() for line in ansi.split("\n")]
    if scrollbar:  # string tests, not a pattern searched along the row: a row of blanks costs its length, once
        rows = [row[:-1].rstrip() if row.endswith(SCROLLBAR) and row[-2:-1].isspace() else row for row in rows]
    while rows and not rows[-1]:
        rows.pop()
    return rows


# A shell's prompt on the bottom row: the agent has left its pane.
SHELL_PROMPT = re.compile(r"[\w~/)\]]\s?[$#%]\s*$|^[$#%>]\s*$")
VERSION_AFTER = re.compile(r"(\d+\.\d+\.\d+)")


def version_after(text: str, mark: str) -> str | None:
    """The version right after ``mark`` in a screen's text ("Copilot v" → "1.0.102"), while a banner shows it."""
    for line in text.split("\n"):
        at = line.find(mark)
        if at >= 0:
            found = VERSION_AFTER.match(line[at + len(mark) :])
            if found:
                return found.group(1)
    return None


def before_reading(lines: list[str], command: str | None) -> Observation | None:
    """What a pane says before its agent's shapes are looked for: a shell as its command (exited), nothing on it (starting)."""
    if command is not None and command.rsplit("/", 1)[-1] in SHELLS:
        return Observation(AgentState.EXITED, evidence=(Evidence("shell-is-the-pane-command", -1, command),), confidence=0.9)
    if not lines:
        return Observation(AgentState.STARTING, evidence=(Evidence("blank-pane", -1, ""),), confidence=0.4)
    return None


def none_of_its_shapes(lines: list[str], banner: str) -> Observation:
    """A pane that shows none of its agent's shapes: a shell prompt at the bottom (exited), its banner alone (starting), else unknown."""
    last = len(lines) - 1
    if SHELL_PROMPT.search(lines[last]):
        return Observation(AgentState.EXITED, evidence=(Evidence("shell-prompt-at-bottom", last, lines[last]),), confidence=0.8)
    if any(banner in line for line in lines):
        return Observation(AgentState.STARTING, evidence=(Evidence("banner-without-prompt", last, lines[last]),), confidence=0.5)
    return Observation(AgentState.UNKNOWN, evidence=(Evidence("no-input-box-or-dialog", last, lines[last]),), confidence=0.2)


def last_block_says(here: Evidence, lines: list[str], row: int, kind: str, text: str) -> Observation:
    """At the prompt, what the last history block says: an error it gave up on, a reply that asks you something, or idle."""
    if kind == "error":
        return Observation(AgentState.ERROR, evidence=(here, Evidence("error-block-last", row, lines[row])), error=text, confidence=0.8)
    found = asked(text.split("\n")) if kind == "reply" else None
    if found is not None:
        # A question typed in the reply: at its end, or before the choices, code or remark it offers (detect/asks.py).
        rule = "reply-ends-with-question" if found.how == "ends-with-question" else f"reply-asks-{found.how}"
        prompt = Prompt(kind="input", title=found.paragraph, fingerprint=fingerprint("input", found.paragraph))
        return Observation(AgentState.INPUT, prompt=prompt, evidence=(here, Evidence(rule, row + found.row, lines[row + found.row])), confidence=0.7)
    return Observation(AgentState.IDLE, evidence=(here,), confidence=0.8)
