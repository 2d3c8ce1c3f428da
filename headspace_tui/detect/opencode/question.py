"""opencode's question dialog (its own ``question`` tool): the question, its numbered options, the keys that pick them.

Measured on 1.18.33: the dialog replaces the input box at the bottom of the
screen, a ``┃`` block with no box edge under it and no "△" title (that is
the approval dialog, ``dialog.py``).  Read by its structure:

* a row of **hints** among its last rows: "↑↓ select  enter submit  esc
  dismiss" ("enter toggle" for a multi-select question, "⇆ tab" first when
  there are several questions);
* a run of **numbered options** above it, each at the block's own indent
  ("1. pnpm"), its description indented under it; a multi-select question
  draws a checkbox ("1. [ ] lint", "[✓]" once ticked) and says "(select all
  that apply)" after the question;
* the **question** above the first option, soft wraps joined;
* with several questions, a row of **tabs** above it, one per question
  (its header) and "Confirm" last, the one showing on a background of its
  own (ANSI only; without it, the first is assumed).

A digit picks its option (measured: "2" on a single choice answers it and
shows the next question; on a multi-select it ticks or unticks), so an
option's key is its number, as in Claude's questions.  The option the cursor
is on is drawn with its number on a background of its own.
"""

from __future__ import annotations

import re

from ...model import AgentState, Evidence, Observation, Option, Prompt
from ..screen_text import fingerprint
from .rows import BAR, Rows, block_top

HINTS = re.compile(r"↑↓\s*select\b.*\benter\s+(?:submit|confirm|toggle)\b|\besc\s+dismiss\b")
OPTION = re.compile(r"^(?P<key>\d{1,2})\.\s+(?:\[(?P<box>.)\]\s+)?(?P<label>\S.*?)\s*$")
MULTI_NOTE = re.compile(r"\s*\(select all that apply\)\s*$", re.I)
TAB_GAP = re.compile(r"\s{3,}")


def find_question(screen: Rows, bottom: int) -> int | None:
    """The hints row of a question dialog at the bottom of the screen, or None.

    The block of ``┃`` rows that ends the screen holds, among its last four
    rows, the dialog's hints, and numbered options above them.
    """
    if screen.bar_text(bottom) is None:
        return None
    top = block_top(screen, bottom)
    for k in range(bottom, max(top, bottom - 4) - 1, -1):
        if HINTS.search(screen.bar_text(k) or "") and _options(screen, top, k):
            return k
    return None


def _indent(screen: Rows, row: int) -> int:
    """Columns between the bar and the row's text."""
    line = screen.lines[row]
    after = line[line.find(BAR) + 1 :]
    return len(after) - len(after.lstrip())


def _options(screen: Rows, top: int, hints: int) -> list[int]:
    """The rows of the numbered options above ``hints``: the last run of "N." rows at one indent, numbered 1, 2, 3…"""
    rows = [k for k in range(top, hints) if OPTION.match(screen.bar_text(k) or "")]
    if not rows:
        return []
    indent = _indent(screen, rows[-1])
    rows = [k for k in rows if _indent(screen, k) == indent]
    numbers = [int(OPTION.match(screen.bar_text(k) or "").group("key")) for k in rows]  # type: ignore[union-attr]
    start = max((i for i, n in enumerate(numbers) if n == 1), default=None)
    if start is None:
        return []
    run = rows[start:]
    return run if numbers[start:] == list(range(1, len(run) + 1)) and len(run) >= 2 else []


def _cursor(screen: Rows, row: int) -> bool:
    """The option's number is drawn on a background other than the row's own (the cursor is on it)."""
    backgrounds = screen.backgrounds(row)
    if not backgrounds:
        return False
    line = screen.lines[row]
    bar = line.find(BAR)
    number = len(line) - len(line[bar + 1 :].lstrip()) if bar >= 0 else 0
    if number >= len(backgrounds) or bar + 1 >= len(backgrounds):
        return False
    return backgrounds[number] != backgrounds[bar + 1]


def _tabs(screen: Rows, top: int, first_text: int) -> tuple[int | None, int, int]:
    """(row, index, count) of the question tabs above the question; (None, 1, 1) when there is one question.

    The tabs row: the first text row of the block, three or more labels apart,
    the last "Confirm"-like page that submits them (not a question: not counted).
    """
    for k in range(top, first_text + 1):
        text = screen.bar_text(k) or ""
        if not text:
            continue
        tabs = [t for t in TAB_GAP.split(text) if t]
        if len(tabs) < 2:
            return None, 1, 1
        count = len(tabs) - 1
        index = 1
        backgrounds = screen.backgrounds(k)
        if backgrounds:
            line = screen.lines[k]
            base = backgrounds[line.find(BAR) + 1] if line.find(BAR) + 1 < len(backgrounds) else ""
            at = 0
            for n, tab in enumerate(tabs, start=1):
                at = line.find(tab, at)
                if 0 <= at < len(backgrounds) and backgrounds[at] != base:
                    index = n
                    break
                at += len(tab)
        return k, index, count
    return None, 1, 1


def read_question(screen: Rows, hints: int) -> Observation:
    lines = screen.lines
    top = block_top(screen, hints)
    rows = _options(screen, top, hints)
    options: list[Option] = []
    for k in rows:
        found = OPTION.match(screen.bar_text(k) or "")
        assert found is not None  # _options kept only these
        box = found.group("box")
        options.append(Option(found.group("key"), found.group("label"), selected=_cursor(screen, k), ticked=None if box is None else box.strip() != ""))
    multi = any(o.ticked is not None for o in options)
    text_rows = [k for k in range(top, rows[0]) if screen.bar_text(k)]
    tab_row, index, count = _tabs(screen, top, text_rows[0]) if text_rows else (None, 1, 1)
    question = " ".join(screen.bar_text(k) or "" for k in text_rows if k != tab_row)
    question = MULTI_NOTE.sub("", question).strip()
    evidence = [Evidence("question-options", rows[0], lines[rows[0]]), Evidence("question-hints", hints, lines[hints])]
    if tab_row is not None:
        evidence.insert(0, Evidence("question-tabs", tab_row, lines[tab_row]))
    prompt = Prompt(
        kind="question",
        title=question,
        tool="question",
        options=tuple(options),
        multi_select=multi,
        question_index=index,
        question_count=count,
        fingerprint=fingerprint("question", question, str(index), *[o.label for o in options]),
    )
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=tuple(evidence), confidence=0.9)


__all__ = ["find_question", "read_question"]
