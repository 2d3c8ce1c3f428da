"""Reading Qwen Code's screen: which state, which prompt, and why.

Pure functions over one ``capture-pane -p -e`` capture.  Every word it
looks for comes from the release's words file (``words/*.toml``,
detect/words.py); what is code here is the shape.  Qwen Code 0.24 (Ink, on
the alternate screen, a scrollbar in the last column once the history
overflows) keeps its live area at the bottom; from the bottom up:

1. **The input box**: a full-width rule, the prompt line (``>`` and the
   draft, or the placeholder), a second rule, then the footer (folder and
   model, then the mode line: "⏸ Ask permissions (shift + tab to cycle)").
   The row or two over the box is the status row while a turn runs
   (``.. Reticulating… (2s · ↓ 13 tokens · esc to cancel)``, wrapped when
   the phrase is long): working.  Otherwise the last history block
   decides: ``✕ [API Error: …]`` (error), a ``◆`` reply that asks something
   (input, detect/asks.py), else idle.
2. **A tool's approval** (the box and footer are gone while it is up): a
   title ``? Shell touch x.txt (Create x.txt) ←`` (wrapped when long), the
   call again in a body, a question ("Allow execution of: 'touch'?"), the
   options ``› 1. Yes, allow once`` … ``4. No, suggest changes (esc)`` (the
   cursor ``›``; each takes its digit), and ``⠏ Waiting for user
   confirmation...`` under them.  The command is the body's, as the title
   gives it whole: the body is cut at the pane's edge in a narrow pane, and
   the title ends with the call's description in brackets, so the command is
   the title's text up to where the body's last row ends.
3. Otherwise: a shell as the pane's command, or a shell prompt at the
   bottom, means it exited; the banner alone means it is starting.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ...model import AgentState, Evidence, Observation, Option, Prompt
from ..screen_text import before_reading, clean_rows, fingerprint, last_block_says, none_of_its_shapes, version_after
from ..words import FamilyWords, Words

WORDS = FamilyWords(Path(__file__).with_name("words"))
RULE = re.compile(r"^─{10,}$")
OPTION = re.compile(r"^\s*(?:(?P<cursor>\S)\s+)?(?P<num>\d{1,2})\.\s+(?P<label>\S(?:.*\S)?)$")
FOOTER_MAX = 4  # rows under the box's lower rule: folder and model, the mode line (wrapped when narrow)
STATUS_ROWS = 3  # rows over the box the status row may take, wrapped
DIALOG_REACH = 60  # rows above "Waiting for user confirmation" its title may be


def classify_capture(ansi: str, *, command: str | None = None, version: str | None = None, words: Words | None = None) -> Observation:
    """Read one capture of a Qwen Code pane with the words of its release (``words``: another set, as a test gives)."""
    said = words or WORDS.of(version)
    lines = clean_rows(ansi, scrollbar=True)
    first = before_reading(lines, command)
    if first is not None:
        return first
    box = _input_box(lines, said)
    if box is not None:
        seen = _at_prompt(lines, box, said)
        mode = _mode(lines[box[1] + 1 :], said)
        return replace(seen, mode=mode) if mode else seen
    dialog = _dialog(lines, said)
    if dialog is not None:
        return dialog
    return none_of_its_shapes(lines, said.one("banner", "name"))


def screen_version(text: str, words: Words | None = None) -> str | None:
    """The version in the start-up box (">_ Qwen Code (v0.24.4)"), while it is on screen."""
    return version_after(text, (words or WORDS.of()).one("banner", "name"))


# ---------------------------------------------------------------------------
# 1. the input box


def _input_box(lines: list[str], said: Words) -> tuple[int, int, int] | None:
    """(the upper rule's row, the lower rule's row, the prompt line's row) of the live box: two rules at the bottom, the prompt
    between them (a draft of several rows too), no more than the footer under it."""
    marks = said.all("box", "prompt")
    bottom = len(lines)
    lower = next((row for row in range(bottom - 1, max(-1, bottom - 2 - FOOTER_MAX), -1) if RULE.match(lines[row])), None)
    if lower is None:
        return None
    upper = next((row for row in range(lower - 1, max(-1, lower - 40), -1) if RULE.match(lines[row])), None)
    if upper is None or upper == lower - 1 or not lines[upper + 1].startswith(marks):
        return None
    return upper, lower, upper + 1


def box_text(ansi: str, *, version: str | None = None) -> str | None:
    """What the input box holds ("" when empty: its placeholder), its rows joined; None with no box on screen."""
    said = WORDS.of(version)
    lines = clean_rows(ansi, scrollbar=True)
    box = _input_box(lines, said)
    if box is None:
        return None
    upper, lower, prompt = box
    first = lines[prompt][1:]  # after its one-character mark
    text = " ".join(part.strip() for part in [first, *lines[prompt + 1 : lower]]).strip()
    shell = said.one("box", "shell_mode")
    if lines[prompt].startswith(shell):
        return shell + text  # what is typed there runs as a shell command: the "!" that turned it on is the person's
    return "" if text.startswith(said.one("box", "placeholder")) else text


def _at_prompt(lines: list[str], box: tuple[int, int, int], said: Words) -> Observation:
    upper, _lower, prompt = box
    here = Evidence("input-box", prompt, lines[prompt])
    status_rows = [row for row in range(max(0, upper - STATUS_ROWS), upper) if lines[row].strip()]
    status = " ".join(" ".join(lines[row].split()) for row in status_rows)
    if said.one("working", "hint") in status:
        row = status_rows[-1]
        return Observation(AgentState.WORKING, evidence=(here, Evidence("running-turn-hint", row, lines[row])), confidence=0.9)
    footer = " ".join(lines[_lower + 1 :])
    working_footer = next((word for word in said.all("working", "footer") if word in footer), None)
    if working_footer is not None:
        return Observation(AgentState.WORKING, evidence=(here, Evidence("steer-or-queue-footer", _lower + 1, working_footer)), confidence=0.7)
    head = _last_block(lines, upper, said)
    if head is not None:
        return last_block_says(here, lines, *head)
    return Observation(AgentState.IDLE, evidence=(here,), confidence=0.8)


def _head(line: str, mark: str) -> bool:
    """Does this history row begin a block with ``mark`` ("  ◆ reply", "  ✕ [API Error…")?"""
    return line.startswith("  " + mark + " ") or line == "  " + mark


def _last_block(lines: list[str], above: int, said: Words) -> tuple[int, str, str] | None:
    """The last history block above row ``above`` that is not a note: (row, kind, its text; a reply's one line per row)."""
    kinds = (("reply", said.all("history", "reply")), ("error", said.all("history", "error")), ("echo", said.all("history", "echo")))
    notes = said.all("history", "info")
    end = above
    for row in range(above - 1, -1, -1):
        line = lines[row]
        if any(_head(line, mark) for mark in notes):
            end = row
            continue
        kind = next((name for name, marks in kinds if any(_head(line, mark) for mark in marks)), None)
        if kind is None:
            continue
        if kind == "echo":
            return row, kind, ""
        body = [line.strip()[len(line.strip().split(" ", 1)[0]) :].strip()] + [text.strip() for text in lines[row + 1 : end]]
        if kind == "reply":
            return row, kind, "\n".join(body)
        text = " ".join(" ".join(body).split())
        for tail in said.all("history", "error_tail"):
            text = text.removesuffix(tail).strip()
        return row, kind, text
    return None


def _mode(footer: list[str], said: Words) -> str:
    """The approval mode the footer names, in headspace's words ("" when it names none)."""
    text = " ".join(" ".join(footer).split())
    return next((mode for mode, names in said.names("modes").items() if any(name in text for name in names)), "")


# ---------------------------------------------------------------------------
# 2. a tool's approval


def _dialog(lines: list[str], said: Words) -> Observation | None:
    """The approval drawn at the bottom: its title, its call, its question and options."""
    waiting = said.one("dialog", "waiting")
    end = next((row for row in range(len(lines) - 1, max(-1, len(lines) - 4), -1) if waiting in lines[row]), None)
    if end is None:
        return None
    options, option_rows = _options(lines[max(0, end - DIALOG_REACH) : end], said)
    if not options:
        return None
    first_option = option_rows[0] + max(0, end - DIALOG_REACH)
    title_mark = said.one("dialog", "title") + " "
    top = next((row for row in range(first_option - 1, max(-1, first_option - DIALOG_REACH), -1) if lines[row].lstrip().startswith(title_mark)), None)
    if top is None:
        return None
    title_rows, body_rows, question = _parts(lines, top, first_option, said)
    title = " ".join(part.strip() for part in title_rows).strip()[len(title_mark) :]
    tool, _, call = title.partition(" ")
    if tool in said.all("dialog", "question"):
        return _question(lines, top, question, options, said)
    body = [lines[row].strip() for row in body_rows if lines[row].strip()]
    detail = _command(call, body) if tool in said.all("dialog", "shell") else call.strip()
    whole = bool(body) and tool in said.all("dialog", "shell") and detail.endswith(body[-1])
    shown = tuple(options)
    prompt = Prompt(
        kind="permission",
        title=question,
        tool=tool,
        detail=detail,
        options=shown,
        fingerprint=fingerprint("permission", tool, detail, question, *(f"{o.key}. {o.label}" for o in shown)),
        whole=whole,
    )
    auto = any(said.one("dialog", "auto_fallback") in lines[row] for row in range(top, first_option))
    return Observation(AgentState.PERMISSION, prompt=prompt, evidence=(Evidence("tool-approval-dialog", top, lines[top]),), confidence=0.9, mode="auto" if auto else "")


def _question(lines: list[str], top: int, question: str, options: list[Option], said: Words) -> Observation:
    """Its question tool's dialog: the question over numbered options (each a digit), one of them for your own words."""
    field = said.one("dialog", "field_mark") + " "
    shown = tuple(replace(o, label=o.label.removeprefix(field)) for o in options)  # the field's own mark, while it is open
    # Its "Type something..." is the field for your own words: its digit moves there without submitting (the label then
    # reads "> Type something..."), what is typed fills it, Enter sends it (measured on 0.24.4).  Only while it is empty.
    free = next((o.key for o in shown if o.label == said.one("dialog", "free_text")), "")
    prompt = Prompt(kind="question", title=question, options=shown, free_text=free, fingerprint=fingerprint("question", question, *(f"{o.key}. {o.label}" for o in shown)))
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=(Evidence("ask-user-dialog", top, lines[top]),), confidence=0.9)


def _options(rows: list[str], said: Words) -> tuple[list[Option], list[int]]:
    """The last run of ``1.``, ``2.``, … (the cursor ``›`` on one of them), with their rows."""
    cursors = said.all("dialog", "cursor")
    run: list[tuple[int, Option]] = []
    for row, text in enumerate(rows):
        match = OPTION.match(text)
        if match is None or (match.group("cursor") and match.group("cursor") not in cursors):
            continue
        option = Option(match.group("num"), match.group("label"), selected=bool(match.group("cursor")))
        if run and int(option.key) == int(run[-1][1].key) + 1:
            run.append((row, option))
        elif option.key == "1":
            run = [(row, option)]
    return [o for _, o in run], [row for row, _ in run]


def _parts(lines: list[str], top: int, first_option: int, said: Words) -> tuple[list[str], list[int], str]:
    """The title's rows (its wrapped rows are indented four, the ``←`` dropped), the body's rows, and the question over the options."""
    end_mark = said.one("dialog", "title_end")
    indent = len(lines[top]) - len(lines[top].lstrip())
    row = top + 1
    while row < first_option and lines[row].startswith(" " * (indent + 2)) and not lines[row].startswith(" " * (indent + 3)):
        row += 1
    title = [text.rstrip().removesuffix(end_mark) for text in lines[top:row]]
    rest = [r for r in range(row, first_option) if lines[r].strip()]
    question = lines[rest[-1]].strip() if rest and lines[rest[-1]].strip().endswith("?") else ""
    body = rest[:-1] if question else rest
    return title, body, question


def _command(call: str, body: list[str]) -> str:
    """A shell call's command: the title's text up to where the body's last row ends (after it: " (its description)")."""
    joined = " ".join(call.split())
    if body:
        last = " ".join(body[-1].split())
        at = joined.find(last)
        while at >= 0:  # the first place it ends after which only " (its description)" is left ("git status (Check git status)")
            rest = joined[at + len(last) :]
            if not rest or (rest.startswith(" (") and rest.endswith(")")):
                return joined[: at + len(last)]
            at = joined.find(last, at + 1)
    described = re.match(r"^(?P<command>.*\S)\s+\([^()]*\)$", joined)
    return described.group("command") if described else joined


def is_qwen_command(command: str) -> bool:
    """Does ``#{pane_current_command}`` mean Qwen Code may still run there (``node``, or its own name)?"""
    name = command.rsplit("/", 1)[-1]
    return name in ("qwen", "node", "nodejs", "bun") or bool(re.fullmatch(r"node\d[\w.-]*", name))
