"""Reading Gemini CLI's screen: which state, which prompt, and why.

Pure functions over one ``capture-pane -p -e`` capture.  Gemini CLI (Ink,
drawn inline: ``alternate_on`` is 0) keeps its live area at the bottom of
the pane and its history above it; only the live area says what it does
now.  Measured on 0.53.0 and 0.61.0, from the bottom up:

1. **The input box**: a full-width rule (``───``), then within a few rows a
   prompt line `` > `` (``!`` in shell mode, ``*`` in YOLO), optionally
   between half-block edges (``▄▄▄`` / ``▀▀▀`` with a truecolor terminal) or
   blank rows; under it the footer (workspace, sandbox, model).  The row
   right above the rule is the status row: ``⠋ Thinking... (esc to cancel,
   3s)`` while a turn runs (working), ``? for shortcuts`` otherwise.  With
   the box there and no turn running, the last history block decides:
   ``✕ [API Error: …]`` (an error it gave up on: error), a ``✦`` reply whose
   last paragraph ends with ``?`` (input), else idle.  Echoed prompts in the
   history (`` > say hello``) have no rule under them, so they are never
   taken for the box.
2. **A dialog**: a rounded box (``╭─╮`` … ``╰─╯``) at the bottom that holds
   numbered options (``● 1. Allow once``: ``●`` is the cursor).  The input
   box is gone while it is up.  Its first line names it:
   ``? Shell  touch x`` / ``? WriteFile  Writing to notes.txt`` (a tool's
   approval: permission; the command is in the nested box),
   ``Answer Questions`` (its ``ask_user`` tool: question),
   ``Ready to start implementation?`` (leaving plan mode: plan; the plan's
   own numbered steps sit above the options, so the options are the run of
   numbers that holds the ``●`` cursor, and Esc refuses it),
   ``Do you trust the files in this folder?`` or the sign-in choice
   (``? Get started`` / "How would you like to authenticate for this
   project?", shown without a key or a chosen sign-in): starting, never a
   question, and matched as a whole line outside any nested box, so a
   command that says "Get started" stays a permission.  Any other box with options is a generic
   menu (``question``, ``prompt.kind == "menu"``).  The dialog's options take
   their digit: pressing ``1`` picks "Allow once" at once (measured).
3. Otherwise: a shell prompt at the bottom, or a shell as the pane's
   command, means it exited; a blank pane or the banner alone means it is
   starting.

Retries: 0.61.0 shows nothing while it retries a 429/503 (the status row
keeps "Thinking..."; its retry hint is wired to a stream that never sets
it), so a retry reads as working; the "Trying to reach … (Attempt 2/10)" /
"This is taking a bit longer" hint, where a version draws it, sets
``retrying``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...model import AgentState, Evidence, Observation, Option, Prompt
from ..screen_text import SHELLS, fingerprint, last_block_says

ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
RULE = re.compile(r"^─{10,}\s*$")
HALF_BLOCK = re.compile(r"^[▄▀]{10,}\s*$")
PROMPT_LINE = re.compile(r"^ (?P<glyph>[>!*]) (?P<text>.*)$")
WORKING_HINT = re.compile(r"\(esc to cancel\b", re.I)
RETRY_HINT = re.compile(r"Trying to reach .*\(Attempt (\d+)/(\d+)\)|This is taking a bit longer", re.I)
BOX_TOP = re.compile(r"^(?P<indent>\s*)╭─{4,}╮\s*$")
BOX_BOTTOM = re.compile(r"^(?P<indent>\s*)╰─{4,}╯\s*$")
# Unambiguous (no two runs of blanks that could split the same spaces): a hostile
# box of long blank rows costs linear time, not quadratic.
OPTION = re.compile(r"^\s*(?:(?P<cursor>●)\s*)?(?P<num>\d{1,2})\.\s+(?P<label>\S(?:.*\S)?)\s*$")
TOOL_TITLE = re.compile(r"^\?\s+(?P<tool>[A-Za-z][\w-]*)(?:\s+(?P<summary>\S.*))?$")  # on a stripped line
SHELL_PROMPT = re.compile(r"[\w~/)\]]\s?[$#%]\s*$|^[$#%>]\s*$")
REQUEST_FAILED = re.compile(r"^ℹ This request failed\b")
REPLY = "✦ "
ERROR = "✕ "
INFO_HEADS = ("ℹ ", "⚠ ")
WRITING_TO = re.compile(r"^(?:Writing to|Editing|Overwriting)\s+(?P<path>\S+)", re.I)
PLAN_TITLE = re.compile(r"^Ready to start implementation\?", re.I)
# A start-up dialog's own line (a whole line, never inside a nested box, so a
# command that says "Get started" is not one): folder trust, the sign-in choice.
STARTING_TITLE = re.compile(r"^(?:\?\s+)?(?:Get started|Do you trust the files in this folder\?|How would you like to authenticate\b.*)$", re.I)
STARTING_WORDS = re.compile(r"trust the files in this folder|how would you like to authenticate|get started|sign in|waiting for auth", re.I)
BANNER = re.compile(r"Gemini CLI v(\d+\.\d+\.\d+)")
FOOTER_MAX = 6  # rows under a draft: the box's lower edge and the footer (workspace, sandbox, model; wrapped when narrow)
BOX_REACH = 60  # rows above the bottom the box's rule may be, with a draft of many lines in it
DRAFT_INDENT = "   "  # a draft's continuation rows
MAX_LINE = 2000


def strip_escapes(ansi: str) -> list[str]:
    """The screen rows of a capture: escapes and other control characters dropped, trailing blanks trimmed.

    (Outside text: what a pane shows goes into evidence and prompts, so no
    control character survives to a terminal that shows them.)
    """
    return [CONTROL.sub("", ESCAPES.sub("", line))[:MAX_LINE].rstrip() for line in ansi.split("\n")]


def screen_version(text: str) -> str | None:
    """The version in the banner ("Gemini CLI v0.61.0"), while it is on screen."""
    match = BANNER.search(text)
    return match.group(1) if match else None


def classify_capture(ansi: str, *, command: str | None = None, version: str | None = None) -> Observation:
    """Read one capture of a Gemini CLI pane (``version`` is not needed: 0.53 and 0.61 draw alike)."""
    lines = strip_escapes(ansi)
    while lines and not lines[-1]:
        lines.pop()
    if command is not None and command.rsplit("/", 1)[-1] in SHELLS:
        return Observation(AgentState.EXITED, evidence=(Evidence("shell-is-the-pane-command", -1, command),), confidence=0.9)
    if not lines:
        return Observation(AgentState.STARTING, evidence=(Evidence("blank-pane", -1, ""),), confidence=0.4)
    box = _input_box(lines)
    if box is not None:
        seen = _at_prompt(lines, box)
        mode = next((m for m in (_mode(lines[k]) for k in range(box.rule + 1, box.prompt)) if m), "")  # the row over the box's top edge
        return replace(seen, mode=mode) if mode else seen
    dialog = _dialog(lines)
    if dialog is not None:
        return dialog
    last = len(lines) - 1
    if SHELL_PROMPT.search(lines[last]):
        return Observation(AgentState.EXITED, evidence=(Evidence("shell-prompt-at-bottom", last, lines[last]),), confidence=0.8)
    if all(not line.strip() or BANNER.search(line) or _is_logo(line) for line in lines[-12:]) or STARTING_WORDS.search("\n".join(lines[-12:])):
        return Observation(AgentState.STARTING, evidence=(Evidence("banner-without-prompt", last, lines[last]),), confidence=0.5)
    return Observation(AgentState.UNKNOWN, evidence=(Evidence("no-input-box-or-dialog", last, lines[last]),), confidence=0.2)


# The approval mode on the row between the rule and the box (0.53 to 0.61): "Shift+Tab to accept edits" in the default one, else its name first
# ("auto-accept edits Shift+Tab to manual", "plan Shift+Tab to manual", "YOLO Ctrl+Y").
MODES = (
    (re.compile(r"\bYOLO\b"), "bypass"),
    (re.compile(r"^\s*auto-accept edits\b", re.I), "accept-edits"),
    (re.compile(r"^\s*plan\b.*\bto manual\b", re.I), "plan"),
    (re.compile(r"^\s*Shift\+Tab to accept edits\b", re.I), "manual"),
)


def _mode(status: str) -> str:
    """Gemini CLI's approval mode, in headspace's words, from the row over its box ("" when it names none)."""
    return next((mode for pattern, mode in MODES if pattern.search(status)), "")


def _is_logo(line: str) -> bool:
    return bool(line.strip()) and set(line.strip()) <= set("▝▜▄▗▟▀▘▖▐▌█ ")


# ---------------------------------------------------------------------------
# 1. the input box


@dataclass(frozen=True)
class _Box:
    rule: int  # the rule's row
    prompt: int  # the prompt line's row
    status: int  # the status row above the rule (-1: none)


def _input_box(lines: list[str]) -> _Box | None:
    """The live input box: the lowest full-width rule, a prompt line right under it, the footer under that.

    The box grows with a draft of several lines (continuation rows indented
    three spaces, or blank), so the rule is looked for well above the
    bottom; what follows the draft down to the bottom must be no more than
    the box's edge and its footer, so an echoed prompt in the history (more
    history, or a dialog, under it) is never taken for the box.
    """
    bottom = len(lines)
    for rule in range(bottom - 1, max(-1, bottom - 1 - BOX_REACH), -1):
        if not RULE.match(lines[rule]):
            continue
        prompt = next((row for row in range(rule + 1, min(bottom, rule + 5)) if PROMPT_LINE.match(lines[row])), None)
        if prompt is None:
            return None
        row = prompt + 1
        while row < bottom and (not lines[row] or lines[row].startswith(DRAFT_INDENT)):
            row += 1
        if bottom - row > FOOTER_MAX:
            return None
        return _Box(rule, prompt, rule - 1 if rule > 0 else -1)
    return None


PLACEHOLDER = "Type your message or @path/to/file"  # the empty box's hint (0.53 and 0.61)
SHELL_MODE = "!"  # the box's mark after "!" was typed: a line sent there is run by the shell, never a reply


def box_text(ansi: str) -> str | None:
    """What the input box holds ("" when empty: its placeholder), its draft's rows joined; None with no box on screen."""
    lines = strip_escapes(ansi)
    while lines and not lines[-1]:
        lines.pop()
    box = _input_box(lines)
    if box is None:
        return None
    line = _matched(PROMPT_LINE, lines[box.prompt])
    rows = [line.group("text")]
    row = box.prompt + 1
    while row < len(lines) and lines[row].startswith(DRAFT_INDENT):
        rows.append(lines[row])
        row += 1
    text = " ".join(part.strip() for part in rows).strip()
    if line.group("glyph") == SHELL_MODE:
        return SHELL_MODE + text  # what is typed there runs as a shell command: the "!" that turned it on is the person's
    return "" if text.startswith(PLACEHOLDER) else text


def _at_prompt(lines: list[str], box: _Box) -> Observation:
    here = Evidence("input-box", box.prompt, lines[box.prompt])
    status = lines[box.status] if box.status >= 0 else ""
    if WORKING_HINT.search(status):
        retry = next((RETRY_HINT.search(lines[i]) for i in range(max(0, box.status - 2), box.status + 1) if RETRY_HINT.search(lines[i])), None)
        evidence = (here, Evidence("running-turn-hint", box.status, status))
        if retry is not None:
            return Observation(AgentState.WORKING, evidence=(*evidence, Evidence("retry-hint", box.status, retry.group(0))), retrying=True, confidence=0.8)
        return Observation(AgentState.WORKING, evidence=evidence, confidence=0.9)
    head = _last_block(lines, box.status if box.status >= 0 else box.rule)
    if head is not None:
        return last_block_says(here, lines, *head)
    return Observation(AgentState.IDLE, evidence=(here,), confidence=0.8)


def _last_block(lines: list[str], above: int) -> tuple[int, str, str] | None:
    """The last history block above row ``above`` that is not an info note: (row, kind, its text; a reply's one line per row).

    Kinds: ``reply`` (``✦``), ``error`` (``✕``), ``echo`` (the user's prompt),
    ``tool`` (a tool's box).  Info and warning notes (``ℹ``/``⚠``: "This
    request failed. Press F12 …", "Initializing…") are skipped: they comment
    on the block before them; but when the block they follow has scrolled
    off the top of a short pane, "This request failed" alone says error.
    """
    end = above
    failed: tuple[int, str] | None = None
    for row in range(above - 1, -1, -1):
        line = lines[row]
        if line.startswith(INFO_HEADS):
            end = row
            if REQUEST_FAILED.search(line):
                failed = (row, line[2:].strip())
            continue
        kind = None
        if line.startswith(REPLY):
            kind = "reply"
        elif line.startswith(ERROR):
            kind = "error"
        elif PROMPT_LINE.match(line) or HALF_BLOCK.match(line):
            kind = "echo"
        elif BOX_BOTTOM.match(line) or BOX_TOP.match(line):
            kind = "tool"
        if kind is None:
            continue
        if kind in ("echo", "tool"):
            return row, kind, ""
        rows = [line[2:]] + [text[2:] if text.startswith("  ") else text.strip() for text in lines[row + 1 : end]]
        if kind == "reply":
            return row, kind, "\n".join(rows)  # its lines, one per screen row: a list or code keeps its shape
        text = "\n".join(rows).strip()
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
        return row, kind, "\n\n".join(p for p in paragraphs if p)
    if failed is not None:
        return failed[0], "error", failed[1]
    return None


# ---------------------------------------------------------------------------
# 2. a dialog


def _dialog(lines: list[str]) -> Observation | None:
    """A rounded box at the bottom of the pane with numbered options in it."""
    bottom = next((i for i in range(len(lines) - 1, max(-1, len(lines) - 4), -1) if BOX_BOTTOM.match(lines[i])), None)
    if bottom is None:
        return None
    indent = len(_matched(BOX_BOTTOM, lines[bottom]).group("indent"))
    top = next((i for i in range(bottom - 1, -1, -1) if BOX_TOP.match(lines[i]) and len(_matched(BOX_TOP, lines[i]).group("indent")) == indent), -1)
    body = [(row, _inside(lines[row], indent)) for row in range(top + 1, bottom)]
    options, option_rows = _live_options(body)
    if not options:
        return None
    content = [(row, text) for row, text in body if text.strip()]
    first_row, first = content[0] if content else (top, "")
    shown = tuple(options)
    starting = next(((row, t.strip()) for row, t in content if not t.lstrip().startswith(("│", "╭", "╰")) and STARTING_TITLE.match(t.strip())), None)
    if starting is not None:
        first_row, first = starting
        title = first
        prompt = Prompt(kind="starting", title=title, options=shown, fingerprint=fingerprint("starting", title, *_labels(shown)))
        return Observation(AgentState.STARTING, prompt=prompt, evidence=(Evidence("start-up-dialog", first_row, first),), confidence=0.8)
    tool = TOOL_TITLE.match(first.strip())
    if tool is not None:
        name = tool.group("tool")
        detail = _tool_detail(body, indent, name, tool.group("summary") or "", option_rows[0])
        question = next((t.strip() for _, t in content if t.strip().endswith("?") and not t.strip().startswith("?")), "")
        prompt = Prompt(
            kind="permission",
            title=question,
            tool=name,
            detail=detail,
            options=shown,
            fingerprint=fingerprint("permission", name, detail, question, *_labels(shown)),
        )
        return Observation(AgentState.PERMISSION, prompt=prompt, evidence=(Evidence("tool-approval-dialog", first_row, first),), confidence=0.9)
    if first.strip().lower().startswith("answer question"):
        asked = [t.strip() for row, t in content[1:] if row < option_rows[0]]
        title = " ".join(asked).strip()
        prompt = Prompt(kind="question", title=title, options=shown, fingerprint=fingerprint("question", title, *_labels(shown)))
        return Observation(AgentState.QUESTION, prompt=prompt, evidence=(Evidence("ask-user-dialog", first_row, first),), confidence=0.9)
    if PLAN_TITLE.match(first.strip()):
        title = first.strip()
        steps = " ".join(t.strip() for row, t in content[1:] if row < option_rows[0])
        detail = re.sub(r"^Plan\s+", "", steps)
        prompt = Prompt(kind="plan", title=title, detail=detail, options=shown, deny_key="Escape", fingerprint=fingerprint("plan", title, detail, *_labels(shown)))
        return Observation(AgentState.PLAN, prompt=prompt, evidence=(Evidence("plan-approval-dialog", first_row, first),), confidence=0.9)
    title = first.strip()
    prompt = Prompt(kind="menu", title=title, options=shown, fingerprint=fingerprint("menu", title, *_labels(shown)))
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=(Evidence("numbered-menu-in-a-box", option_rows[0], lines[option_rows[0]]),), confidence=0.6)


def _live_options(body: list[tuple[int, str]]) -> tuple[list[Option], list[int]]:
    """The dialog's own options: the run of ``1.``, ``2.``, … that holds the ``●`` cursor.

    A plan's approval shows the plan's numbered steps above its options; the
    steps have no cursor.  Without a cursor anywhere, the last run.
    """
    runs: list[list[tuple[int, Option]]] = []
    for row, text in body:
        match = OPTION.match(text)
        if match is None:
            continue
        option = Option(match.group("num"), match.group("label"), selected=bool(match.group("cursor")))
        if runs and int(option.key) == int(runs[-1][-1][1].key) + 1:
            runs[-1].append((row, option))
        elif option.key == "1":
            runs.append([(row, option)])
    if not runs:
        return [], []
    chosen = next((run for run in reversed(runs) if any(o.selected for _, o in run)), runs[-1])
    return [o for _, o in chosen], [row for row, _ in chosen]


def _inside(line: str, indent: int) -> str:
    """A box row without its side borders (``│ text │``)."""
    text = line[indent:]
    if text.startswith("│"):
        text = text[1:]
    text = text.rstrip()
    if text.endswith("│"):
        text = text[:-1].rstrip()  # (trailing blanks left in would make the option pattern backtrack)
    return text[1:] if text.startswith(" ") else text


def _tool_detail(body: list[tuple[int, str]], indent: int, tool: str, summary: str, first_option: int) -> str:
    """What the tool will do: the nested box's text (a shell command), else the title's file or summary."""
    nested: list[str] = []
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
            nested.append(stripped.strip("│").strip())
    written = WRITING_TO.match(summary)
    if written is not None:
        return written.group("path")
    if nested and tool.lower() in ("shell", "run_shell_command"):
        return " ".join(part for part in nested if part)
    return summary.rstrip("…").strip()


def _labels(options: tuple[Option, ...]) -> tuple[str, ...]:
    return tuple(f"{o.key}. {o.label}" for o in options)


def _matched(pattern: re.Pattern[str], line: str) -> re.Match[str]:
    match = pattern.match(line)
    if match is None:
        raise ValueError(f"{pattern.pattern!r} no longer matches {line[:80]!r}")
    return match


def is_gemini_command(command: str) -> bool:
    """Does ``#{pane_current_command}`` mean Gemini CLI may still run there (``node``, or its own name)?"""
    name = command.rsplit("/", 1)[-1]
    return name in ("gemini", "node", "nodejs", "bun") or bool(re.fullmatch(r"node\d[\w.-]*", name))
