"""Reading GitHub Copilot CLI's screen: which state, which prompt, and why.

Pure functions over one ``capture-pane -p -e`` capture.  Every word it
looks for comes from the release's words file (``words/*.toml``,
detect/words.py); what is code here is the shape.  Copilot CLI 1.0 draws
full-screen on the alternate screen: a tab bar on the first row, the
timeline (a ``┃`` scrollbar in the last column once it overflows), and at
the bottom, from the bottom up:

1. **The input box**: the footer row ("← open sidebar · Interactive ·
   Manual Approval · / commands", or "◉ Working · 44 B esc esc interrupt"
   while a turn runs, "◎ Working esc esc edit prompt" while it retries a
   refused request: working), a full-width rule, the prompt ``❯`` with
   the draft, a rule, and the folder.  Otherwise the last timeline block
   decides: ``✗ 400 …`` (error), a ``●`` reply after the user's ``❯``
   prompt that asks something (input, detect/asks.py), else idle.  The
   start-up notes are ``●`` rows too; they come before any prompt.
2. **A dialog** (the box and footer are gone while it is up): a rounded box
   at the bottom, its title (a call's description, "Confirm folder trust"),
   the call in a nested box, a question, options ``❯ 1. Yes`` … (long
   labels wrapped), and "↑/↓ to navigate · enter to select · esc to
   cancel".  "Do you want to run this command?" is a shell call's approval:
   its command is the nested box's.  The option whose label says "(Esc to
   stop)" refuses by Esc (its digit only opens a field for feedback).
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
BOX_BOTTOM = re.compile(r"^╰─{10,}╯$")
BOX_TOP = re.compile(r"^╭─{10,}╮$")
OPTION = re.compile(r"^\s*(?:(?P<cursor>\S)\s+)?(?P<num>\d{1,2})\.\s+(?P<label>\S(?:.*\S)?)$")
DIALOG_REACH = 60  # rows above its bottom edge a dialog's top may be


def classify_capture(ansi: str, *, command: str | None = None, version: str | None = None, words: Words | None = None) -> Observation:
    """Read one capture of a Copilot CLI pane with the words of its release (``words``: another set, as a test gives)."""
    said = words or WORDS.of(version)
    lines = clean_rows(ansi, scrollbar=True)
    first = before_reading(lines, command)
    if first is not None:
        return first
    box = _input_box(lines, said)
    if box is not None:
        seen = _at_prompt(lines, box, said)
        mode = _mode(lines[box[1] + 1], said)
        return replace(seen, mode=mode) if mode else seen
    dialog = _dialog(lines, said) or _form(lines, said)
    if dialog is not None:
        return dialog
    return none_of_its_shapes(lines, said.one("banner", "name"))


def screen_version(text: str, words: Words | None = None) -> str | None:
    """The version in the banner ("Copilot v1.0.102 uses AI."), while it is on screen."""
    return version_after(text, (words or WORDS.of()).one("banner", "name"))


# ---------------------------------------------------------------------------
# 1. the input box


def _input_box(lines: list[str], said: Words) -> tuple[int, int, int] | None:
    """(the upper rule's row, the lower rule's row, the prompt's row): the lower rule right over the footer, the upper
    one over the prompt and its draft."""
    lower = len(lines) - 2
    if lower < 1 or not RULE.match(lines[lower]):
        return None
    upper = next((row for row in range(lower - 1, max(-1, lower - 40), -1) if RULE.match(lines[row])), None)
    if upper is None or upper == lower - 1 or not lines[upper + 1].startswith(said.one("box", "prompt")):
        return None
    return upper, lower, upper + 1


def box_text(ansi: str, *, version: str | None = None) -> str | None:
    """What the input box holds ("" when empty), its rows joined; None with no box on screen."""
    said = WORDS.of(version)
    lines = clean_rows(ansi, scrollbar=True)
    box = _input_box(lines, said)
    if box is None:
        return None
    upper, lower, prompt = box
    first = lines[prompt][len(said.one("box", "prompt")) :]
    return " ".join(part.strip() for part in [first, *lines[prompt + 1 : lower]]).strip()


def _at_prompt(lines: list[str], box: tuple[int, int, int], said: Words) -> Observation:
    upper, lower, prompt = box
    here = Evidence("input-box", prompt, lines[prompt])
    footer = lines[lower + 1].strip()
    if footer.startswith(said.all("working", "marks")) and said.one("working", "word") in footer.split(" ", 2)[1:2]:
        return Observation(AgentState.WORKING, evidence=(here, Evidence("working-footer", lower + 1, footer)), confidence=0.9)
    head = _last_block(lines, upper - 1, said)  # over the folder's row
    if head is not None:
        return last_block_says(here, lines, *head)
    return Observation(AgentState.IDLE, evidence=(here,), confidence=0.8)


def _head(line: str, mark: str) -> bool:
    return line.startswith(" " + mark + " ")


def _last_block(lines: list[str], above: int, said: Words) -> tuple[int, str, str] | None:
    """The last timeline block above row ``above``: (row, kind, its text); a ``●`` block before the first prompt is a start-up note, not a reply."""
    kinds = (("echo", said.all("history", "echo")), ("error", said.all("history", "error")), ("reply", said.all("history", "reply")), ("tool", said.all("history", "tool")))
    end = above
    for row in range(above - 1, -1, -1):
        line = lines[row]
        kind = next((name for name, marks in kinds if any(_head(line, mark) for mark in marks)), None)
        if kind == "error" and line[3:].startswith(tuple(f"{name} " for name in said.all("history", "tool_names"))):
            kind = "tool"  # a refused or failed call ("✗ Shell …"), drawn with the error's mark
        if kind is None:
            if not line.strip():
                end = row if end == row + 1 else end
            continue
        if kind in ("echo", "tool"):
            return row, kind, ""
        if kind == "reply" and not any(_head(lines[r], mark) for r in range(row) for mark in said.all("history", "echo")):
            return None  # a start-up note: no prompt was sent yet
        body = [line[3:].strip()] + [text.strip() for text in lines[row + 1 : end]]
        while body and not body[-1]:
            body.pop()
        if kind == "reply":
            return row, kind, "\n".join(body)
        return row, kind, " ".join(" ".join(body).split())
    return None


def _mode(footer: str, said: Words) -> str:
    """The mode the footer names, in headspace's words ("" when it names none)."""
    text = " ".join(footer.split())
    return next((mode for mode, names in said.names("modes").items() if any(name in text for name in names)), "")


# ---------------------------------------------------------------------------
# 2. a dialog


def _dialog(lines: list[str], said: Words) -> Observation | None:
    """The rounded box at the bottom: its title, the call in its nested box, its question and options."""
    bottom = len(lines) - 1
    if not BOX_BOTTOM.match(lines[bottom]):
        return None
    top = next((row for row in range(bottom - 1, max(-1, bottom - DIALOG_REACH), -1) if BOX_TOP.match(lines[row])), None)
    if top is None:
        return None
    body = [(row, _inside(lines[row])) for row in range(top + 1, bottom)]
    options, option_rows = _options(body, said)
    if not options:
        return None
    content = [(row, text) for row, text in body if text.strip() and not text.strip().startswith("──")]
    title_row, title = content[0] if content else (top, "")
    title = title.strip()
    nested = _nested(body, option_rows[0])
    question = next((text.strip() for row, text in reversed(content) if row < option_rows[0] and text.strip().endswith("?")), "")
    shown = tuple(options)
    labels = tuple(f"{o.key}. {o.label}" for o in shown)
    if title in said.all("dialog", "starting"):
        prompt = Prompt(kind="starting", title=title, options=shown, fingerprint=fingerprint("starting", title, *labels))
        return Observation(AgentState.STARTING, prompt=prompt, evidence=(Evidence("start-up-dialog", title_row, lines[title_row]),), confidence=0.8)
    # A tool's approval shows its call in a nested box (a command, a path); any other dialog that asks "Do you want to"
    # (turning a mode on, say) is a menu, which the approve key never answers.
    if nested and (question in said.all("dialog", "shell") or question.startswith(said.one("dialog", "asks"))):
        shell = question in said.all("dialog", "shell")
        tool = said.one("dialog", "shell_tool") if shell else title
        detail, broken = _joined(nested) if nested else (title, False)
        prompt = Prompt(
            kind="permission",
            title=question,
            tool=tool,
            detail=detail,
            options=shown,
            fingerprint=fingerprint("permission", tool, detail, question, *labels),
            whole=shell and bool(nested) and not broken,
        )
        return Observation(AgentState.PERMISSION, prompt=prompt, evidence=(Evidence("tool-approval-dialog", title_row, lines[title_row]),), confidence=0.9)
    prompt = Prompt(kind="menu", title=question or title, options=shown, fingerprint=fingerprint("menu", question or title, *labels))
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=(Evidence("numbered-menu-in-a-box", option_rows[0], lines[option_rows[0]]),), confidence=0.6)


def _form(lines: list[str], said: Words) -> Observation | None:
    """Its ask_user form between two rules at the bottom: the question, and its choices (no keys: they are picked in the pane).

    Its choices are moved through with the arrows and taken with Enter, and
    the form's fields may be several: headspace shows the question and leaves
    the answer to the pane (the options carry no key).
    """
    bottom = len(lines) - 1
    hint = next((row for row in range(bottom, max(-1, bottom - 3), -1) if said.one("question", "hint") in lines[row]), None)
    if hint is None:
        return None
    top = next((row for row in range(hint - 1, max(-1, hint - DIALOG_REACH), -1) if RULE.match(lines[row])), None)
    if top is None:
        return None
    rows = [(row, lines[row].strip()) for row in range(top + 1, hint) if lines[row].strip()]
    head = next((i for i, (_, text) in enumerate(rows) if text == said.one("question", "head")), None)
    if head is None or head + 1 >= len(rows):
        return None
    cursor = said.one("question", "cursor")
    asked_at = head + 1  # the question (wrapped: up to the field's label, or the first choice)
    end = next((i for i in range(asked_at, len(rows)) if rows[i][1].endswith(":") or rows[i][1].startswith(cursor)), len(rows))
    question = " ".join(text for _, text in rows[asked_at : max(end, asked_at + 1)])
    choices = [text for _, text in rows[end:] if not text.endswith(":")]
    options = tuple(Option("", text.removeprefix(cursor).strip(), selected=text.startswith(cursor)) for text in choices)
    prompt = Prompt(kind="question", title=question, options=options, fingerprint=fingerprint("question", question, *(o.label for o in options)))
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=(Evidence("ask-user-form", rows[asked_at][0], lines[rows[asked_at][0]]),), confidence=0.8)


def _inside(line: str) -> str:
    """A box row without its side borders (``│ text │``; the right one may be gone with a scrollbar's strip)."""
    text = line[1:] if line.startswith("│") else line
    text = text.rstrip()
    if text.endswith("│"):
        text = text[:-1].rstrip()
    return text[1:] if text.startswith(" ") else text


def _nested(body: list[tuple[int, str]], first_option: int) -> list[str]:
    """The nested box's rows (the call), above the options."""
    rows: list[str] = []
    inside = False
    for row, text in body:
        if row >= first_option:
            break
        stripped = text.strip()
        if stripped.startswith("╭"):
            inside = True
            continue
        if stripped.startswith("╰"):
            break
        if inside:
            rows.append(stripped.removeprefix("│").removesuffix("│").strip())
    return [row for row in rows if row]


def _joined(rows: list[str]) -> tuple[str, bool]:
    """The nested box's rows as one call, and whether a row was broken inside a word.

    Copilot wraps a long call at blanks and also after a ``/`` ("build/reports/"
    then "coverage/README.txt"): a row that ends so continues without a space,
    which is a guess (the blank may have been the call's own), so such a call is
    not read whole.
    """
    text, broken = rows[0], False
    for row in rows[1:]:
        if text.endswith("/"):
            text, broken = text + row, True
        else:
            text = f"{text} {row}"
    return text, broken


def _options(body: list[tuple[int, str]], said: Words) -> tuple[list[Option], list[int]]:
    """The run of ``1.``, ``2.``, … (a wrapped label's rows joined), with their rows; an option refused by Esc keyed so."""
    cursor = said.one("dialog", "cursor")
    escapes = said.all("dialog", "by_escape")
    run: list[tuple[int, Option]] = []
    last = -2  # the row the run's last option (or its label's last row) is on
    for row, text in body:
        match = OPTION.match(text)
        if match is not None and (not match.group("cursor") or match.group("cursor") == cursor):
            option = Option(match.group("num"), match.group("label"), selected=bool(match.group("cursor")))
            if run and int(option.key) == int(run[-1][1].key) + 1:
                run.append((row, option))
                last = row
                continue
            if option.key == "1":
                run, last = [(row, option)], row
                continue
        if run and row == last + 1 and text.startswith("  ") and text.strip():
            first_row, option = run[-1]
            run[-1] = (first_row, replace(option, label=f"{option.label} {text.strip()}"))
            last = row
    options = [replace(o, key="Escape") if any(o.label.endswith(word) for word in escapes) else o for _, o in run]
    return options, [row for row, _ in run]


def is_copilot_command(command: str) -> bool:
    """Does ``#{pane_current_command}`` mean Copilot CLI may still run there (its loader's ``node``, or the binary)?"""
    name = command.rsplit("/", 1)[-1]
    return name in ("copilot", "node", "nodejs", "MainThread") or bool(re.fullmatch(r"node\d[\w.-]*", name))
