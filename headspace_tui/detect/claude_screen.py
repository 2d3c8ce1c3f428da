"""Reading Claude Code 2.x's screen: which state, which prompt, and why.

Pure functions over the text of a pane (plus, optionally, its ANSI capture
for the one thing only colour tells: which question tab is active).  The rules
were written against the recorded corpus of 2.1.330 screens
(``snapshots/panes/claude-2.1.330``) and are tested on every one of them.

The central idea: **only the bottom of the screen is live.**  Claude draws its
input box (a rule, a ``❯`` line, a rule, a footer) or a dialog at the bottom;
everything above is transcript.  So the detector looks from the bottom up,
and text that merely *looks* like a dialog (an answer quoting "Do you want to
proceed?", an old permission prompt in the scrollback) is never read as live,
because it is above the input box or not at the bottom.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ..model import AgentState, Evidence, Observation, Option, Prompt

SGR = re.compile(r"\x1b\[[0-9;:]*m")
RULE = re.compile(r"^\s*─{10,}\s*$")
DASHED_RULE = re.compile(r"^\s*╌{10,}\s*$")
# Claude puts a no-break space after the input box's ❯.
INPUT_LINE = re.compile(r"^❯(?:[ \u00a0]|$)")
OPTION = re.compile(r"^\s{0,4}(?P<cursor>❯)?\s*(?P<num>\d{1,2})\.\s+(?P<label>\S.*?)\s*$")
CHECKBOX = re.compile(r"^\[(?P<mark>[ ✔✓xX×])\]\s+")
SPINNER = re.compile(r"^\S\s+\S.*…")
RETRYING = re.compile(r"^\S\s+(?P<msg>.*?)\s+·\s+retrying in \d+s\s+·\s+attempt \d+/\d+")
TURN_DONE = re.compile(r"^\S\s+\w+ for \d+[hms]")
BULLET = re.compile(r"^● ")
SHELL_PROMPT = re.compile(r"[\w~/)\]]\s?[$#%]\s*$|^[$#%>]\s*$")
TOOL_CALL = re.compile(r"^● (?P<name>[A-Z]\w*)\((?P<arg>.*)\)\s*$")
TAB_LINE = re.compile(r"[☐☒✔]\s+\S")
BACKGROUND = re.compile(r"\x1b\[(?:[0-9;]*;)?48;[0-9;:]+m")

SHELLS = frozenset({"bash", "zsh", "sh", "fish", "dash", "ksh", "tcsh", "csh", "nu", "xonsh", "elvish", "login"})
VERSION_NAME = re.compile(r"^\d+\.\d+\.\d+$")

# The header under a permission dialog's top rule names the tool.
PERMISSION_HEADERS = {
    "bash command": "Bash",
    "create file": "Write",
    "edit file": "Edit",
    "fetch": "WebFetch",
    "read file": "Read",
    "web search": "WebSearch",
    "notebook edit": "NotebookEdit",
}
# The transcript line above the dialog says the same: "● Update(README.md)".
TOOL_CALL_NAMES = {"Update": "Edit", "Fetch": "WebFetch", "Create": "Write"}
FOOTER_HINTS = ("Esc to cancel", "Enter to select", "Enter to confirm", "ctrl+g to edit", "Tab to amend", "shift+tab")


def is_claude_command(command: str) -> bool:
    """Is ``#{pane_current_command}`` Claude Code (native, node, or a version-named binary)?"""
    name = command.rsplit("/", 1)[-1]
    return name in ("claude", "node") or bool(VERSION_NAME.match(name))


def strip_sgr(ansi: str) -> list[str]:
    """The screen rows of a ``capture-pane -p -e`` capture, colours dropped."""
    return [line.rstrip() for line in SGR.sub("", ansi).split("\n")]


@dataclass
class _Screen:
    lines: list[str]
    ansi: list[str] | None

    def last_nonblank(self) -> int:
        for i in range(len(self.lines) - 1, -1, -1):
            if self.lines[i].strip():
                return i
        return -1


def classify(text: str, *, ansi: str | None = None, command: str | None = None) -> Observation:
    """Classify one screen.

    ``text`` is the plain capture; ``ansi`` the same capture with escapes
    (optional: it only sharpens "which question is showing");
    ``command`` is ``#{pane_current_command}`` when known.
    """
    lines = [line.rstrip() for line in text.split("\n")]
    ansi_lines = ansi.split("\n") if ansi is not None else None
    screen = _Screen(lines, ansi_lines)
    bottom = screen.last_nonblank()

    if command is not None and not is_claude_command(command):
        if command in SHELLS:
            return Observation(
                AgentState.EXITED,
                evidence=(Evidence("pane-command-is-shell", -1, command),),
                confidence=0.9,
            )
        return Observation(AgentState.UNKNOWN, evidence=(Evidence("pane-command-not-claude", -1, command),), confidence=0.3)

    if bottom < 0:
        return _starting_or_unknown(command, Evidence("blank-screen", -1, ""))

    box = _find_input_box(lines, bottom)
    if box is not None:
        return _at_input_box(lines, *box)

    for reader in (_read_permission, _read_question, _read_plan, _read_startup_dialog):
        observation = reader(screen, bottom)
        if observation is not None:
            return observation

    if command is None and SHELL_PROMPT.search(lines[bottom]) and not lines[bottom].startswith(("❯", " ")):
        return Observation(
            AgentState.EXITED, evidence=(Evidence("shell-prompt-at-bottom", bottom, lines[bottom]),), confidence=0.6
        )
    return _starting_or_unknown(command, Evidence("no-known-layout", bottom, lines[bottom]))


def classify_capture(ansi: str, *, command: str | None = None) -> Observation:
    """Classify a ``capture-pane -p -e`` capture (the format of ``headspace classify``)."""
    return classify("\n".join(strip_sgr(ansi)), ansi=ansi, command=command)


def _starting_or_unknown(command: str | None, evidence: Evidence) -> Observation:
    # Claude is the pane's process but has not drawn its UI yet: it is starting.
    if command is not None and is_claude_command(command):
        return Observation(AgentState.STARTING, evidence=(evidence, Evidence("claude-running-no-ui", -1, command)), confidence=0.5)
    return Observation(AgentState.UNKNOWN, evidence=(evidence,), confidence=0.1)


# ---------------------------------------------------------------------------
# The input box: idle, working, input, error


def _find_input_box(lines: list[str], bottom: int) -> tuple[int, int, int] | None:
    """(top rule, ❯ line, bottom rule) of the input box, if it is the last thing drawn.

    Only a footer (status hints, never more than a few lines) may follow it.
    """
    for i in range(bottom, 0, -1):
        if INPUT_LINE.match(lines[i]) and not OPTION.match(lines[i]) and RULE.match(lines[i - 1]):
            for j in range(i + 1, min(bottom + 1, i + 12)):
                if RULE.match(lines[j]):
                    if bottom - j <= 4:
                        return i - 1, i, j
                    return None
            return None
    return None


def _at_input_box(lines: list[str], top: int, prompt_line: int, rule_below: int) -> Observation:
    footer = " ".join(line.strip() for line in lines[rule_below + 1 :])
    evidence = [Evidence("input-box", prompt_line, lines[prompt_line])]
    # What sits between the transcript and the input box: spinner, retry notice, hints.
    status_rows = range(max(0, top - 4), top)
    for i in status_rows:
        match = RETRYING.match(lines[i])
        if match:
            return Observation(
                AgentState.ERROR,
                evidence=(*evidence, Evidence("retry-notice", i, lines[i])),
                error=match.group("msg"),
                retrying=True,
                confidence=0.9,
            )
    if "esc to interrupt" in footer:
        spinner = next((i for i in status_rows if SPINNER.match(lines[i]) and not lines[i].startswith("●")), None)
        extra = [Evidence("spinner", spinner, lines[spinner])] if spinner is not None else []
        return Observation(
            AgentState.WORKING,
            evidence=(*evidence, Evidence("footer-esc-to-interrupt", rule_below + 1, footer), *extra),
            confidence=0.9,
        )
    block = _last_reply(lines, top)
    if block is not None:
        start, text = block
        if text.startswith("API Error"):
            return Observation(
                AgentState.ERROR, evidence=(*evidence, Evidence("api-error-reply", start, lines[start])), error=text, confidence=0.8
            )
        last_paragraph = text.split("\n\n")[-1].strip()
        if last_paragraph.endswith("?"):
            question = last_paragraph
            prompt = Prompt(kind="input", title=question, fingerprint=_fingerprint("input", question))
            return Observation(
                AgentState.INPUT,
                prompt=prompt,
                evidence=(*evidence, Evidence("reply-ends-with-question", start, lines[start])),
                confidence=0.7,
            )
    return Observation(AgentState.IDLE, evidence=tuple(evidence), confidence=0.8)


def _last_reply(lines: list[str], top: int) -> tuple[int, str] | None:
    """The last ``●`` text block above the input box, if it is Claude's final reply.

    A reply is a ``●`` line plus the indented lines under it.  Tool calls
    (``● Bash(...)``) and blocks followed by a new user prompt do not count.
    """
    start = None
    for i in range(top - 1, -1, -1):
        line = lines[i]
        if line.startswith("❯"):
            return None  # the user spoke after any reply above
        if BULLET.match(line):
            start = i
            break
    if start is None or TOOL_CALL.match(lines[start]):
        return None
    rows = [lines[start][2:]]
    for line in lines[start + 1 : top]:
        if line and not line.startswith(" "):
            break
        rows.append(line[2:] if line.startswith("  ") else line.strip())
    text = "\n".join(rows).strip()
    # Re-join soft-wrapped lines inside paragraphs; keep blank-line breaks.
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return start, "\n\n".join(p for p in paragraphs if p)


# ---------------------------------------------------------------------------
# Dialogs: permission, question, plan, start-up


def _options(lines: list[str], start: int, bottom: int, *, wrapped: bool = False) -> tuple[list[Option], list[int]]:
    """Numbered options from ``start`` down.

    Lines under an option, indented to its label, are either the label
    wrapped (permission dialogs: ``wrapped=True`` joins them) or a
    description (questions, plan hints: skipped).
    """
    options: list[Option] = []
    rows: list[int] = []
    for i in range(start, bottom + 1):
        match = OPTION.match(lines[i])
        if not match and wrapped and options and rows[-1] == i - 1 and lines[i].startswith("      ") and lines[i].strip():
            last = options[-1]
            options[-1] = Option(last.key, f"{last.label} {lines[i].strip()}", last.selected)
            rows[-1] = i
            continue
        if match and (not options or int(match.group("num")) == int(options[-1].key) + 1):
            label = match.group("label")
            checkbox = CHECKBOX.match(label)
            if checkbox:
                label = label[checkbox.end() :]
            options.append(Option(key=match.group("num"), label=label.strip(), selected=bool(match.group("cursor"))))
            rows.append(i)
    return options, rows


def _only_dialog_below(lines: list[str], start: int, bottom: int) -> bool:
    """From ``start`` to the bottom there is nothing but the dialog (options, hints, blanks).

    This is what makes a prompt *live*: a quoted or old dialog has transcript
    or an input box below it.
    """
    for line in lines[start : bottom + 1]:
        stripped = line.strip()
        if not stripped or OPTION.match(line) or RULE.match(line) or line.startswith("    ") or line.startswith("     "):
            continue
        if any(hint in stripped for hint in FOOTER_HINTS) or stripped.startswith(("Submit", "~/", "/")):
            continue
        if line.startswith("   ") and not line.startswith("    "):  # wrapped option label
            continue
        return False
    return True


def _dialog_top(lines: list[str], anchor: int) -> int:
    """The top rule of the dialog that holds line ``anchor`` (or 0)."""
    for i in range(anchor, -1, -1):
        if RULE.match(lines[i]):
            return i
    return 0


def _read_permission(screen: _Screen, bottom: int) -> Observation | None:
    lines = screen.lines
    anchor = None
    for i in range(bottom, max(-1, bottom - 20), -1):
        if re.match(r"^\s*Do you want to (?!use this API key)", lines[i]):
            anchor = i
            break
    if anchor is None:
        return None
    options, rows = _options(lines, anchor + 1, bottom, wrapped=True)
    if not options or not _only_dialog_below(lines, anchor + 1, bottom):
        return None
    title = lines[anchor].strip()
    tool, detail, header_row = _permission_tool(lines, anchor, title)
    evidence = [Evidence("permission-question", anchor, lines[anchor]), Evidence("numbered-options", rows[0], lines[rows[0]])]
    if header_row is not None:
        evidence.insert(0, Evidence("permission-header", header_row, lines[header_row]))
    prompt = Prompt(
        kind="permission",
        title=title,
        tool=tool,
        detail=detail,
        options=tuple(options),
        fingerprint=_fingerprint("permission", tool, detail, title, *[o.label for o in options]),
    )
    return Observation(AgentState.PERMISSION, prompt=prompt, evidence=tuple(evidence), confidence=0.9)


def _permission_tool(lines: list[str], anchor: int, title: str) -> tuple[str, str, int | None]:
    """(tool, what it wants, header row) for the permission dialog asking ``title``."""
    top = _dialog_top(lines, anchor)
    header_row = top + 1 if top + 1 < anchor else None
    header = lines[header_row].strip().lower() if header_row is not None else ""
    tool = PERMISSION_HEADERS.get(header, "")
    body = [line.strip() for line in lines[(header_row or top) + 1 : anchor]]
    detail = ""
    if tool == "Bash":
        dashed = [k for k in range((header_row or top) + 1, anchor) if DASHED_RULE.match(lines[k])]
        if len(dashed) >= 2:
            detail = " ".join(line.strip() for line in lines[dashed[0] + 1 : dashed[1]]).strip()
    elif tool in ("Write", "Edit", "Read", "NotebookEdit"):
        detail = body[0] if body else ""
    elif tool == "WebFetch":
        detail = next((b[len("url: ") :] for b in body if b.startswith("url: ")), "")
    if not tool or not detail:
        # Fall back on the tool call line in the transcript above the dialog.
        for k in range(top - 1, max(-1, top - 12), -1):
            call = TOOL_CALL.match(lines[k])
            if call:
                tool = tool or TOOL_CALL_NAMES.get(call.group("name"), call.group("name"))
                detail = detail or call.group("arg")
                break
    if not tool:
        lowered = title.lower()
        tool = "Write" if "create" in lowered else "Edit" if "edit" in lowered else "WebFetch" if "fetch" in lowered else ""
    return tool, detail, header_row if tool and header_row is not None and header in PERMISSION_HEADERS else None


def _read_question(screen: _Screen, bottom: int) -> Observation | None:
    lines = screen.lines
    footer = next((i for i in range(bottom, max(-1, bottom - 4), -1) if "Enter to select" in lines[i]), None)
    if footer is None:
        return None
    first = next((i for i in range(footer, -1, -1) if OPTION.match(lines[i]) and OPTION.match(lines[i]).group("num") == "1"), None)
    if first is None:
        return None
    options, rows = _options(lines, first, footer)
    if not options or not _only_dialog_below(lines, first, footer):
        return None
    # The question: the non-blank lines between the tab line and the first option.
    tab_row = next((i for i in range(first - 1, max(-1, first - 12), -1) if TAB_LINE.search(lines[i])), None)
    text_start = (tab_row + 1) if tab_row is not None else max(0, first - 3)
    question = " ".join(line.strip() for line in lines[text_start:first] if line.strip())
    multi = bool(CHECKBOX.match(OPTION.match(lines[first]).group("label")))
    index, count = _question_tabs(screen, tab_row)
    evidence = [Evidence("select-footer", footer, lines[footer]), Evidence("numbered-options", first, lines[first])]
    if tab_row is not None:
        evidence.insert(0, Evidence("question-tabs", tab_row, lines[tab_row]))
    prompt = Prompt(
        kind="question",
        title=question,
        tool="AskUserQuestion",
        options=tuple(options),
        multi_select=multi,
        question_index=index,
        question_count=count,
        fingerprint=_fingerprint("question", question, str(index), *[o.label for o in options]),
    )
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=tuple(evidence), confidence=0.9)


def _question_tabs(screen: _Screen, tab_row: int | None) -> tuple[int, int]:
    """(1-based index of the question showing, number of questions) from the tab line.

    The active tab is the one drawn on a background colour, which only the
    ANSI capture shows; without it, the first unanswered (☐) tab is assumed.
    """
    if tab_row is None:
        return 1, 1
    tabs = re.findall(r"([☐☒])\s+([^☐☒✔→]+?)\s{2,}|([☐☒])\s+([^☐☒✔→]+?)\s*$", screen.lines[tab_row])
    marks = [m[0] or m[2] for m in tabs]
    count = len(marks)
    if count == 0:
        return 1, 1
    if screen.ansi is not None and tab_row < len(screen.ansi):
        raw = screen.ansi[tab_row]
        highlighted = BACKGROUND.search(raw)
        if highlighted:
            before = SGR.sub("", raw[: highlighted.start()])
            return min(count, len(re.findall(r"[☐☒]", before)) + 1), count
    return (marks.index("☐") + 1 if "☐" in marks else count), count


def _read_plan(screen: _Screen, bottom: int) -> Observation | None:
    lines = screen.lines
    window = range(max(0, bottom - 14), bottom + 1)
    joined = " ".join(lines[i].strip() for i in window)
    if "Would you like to proceed?" not in joined:
        return None
    anchor = next(i for i in window if "Would you like to" in lines[i] or "proceed?" in lines[i])
    options, rows = _options(lines, anchor + 1, bottom)
    if not options or not _only_dialog_below(lines, rows[0], bottom):
        return None
    plan_row = next((i for i in range(anchor, -1, -1) if "Ready to code?" in lines[i] or "Here is Claude's plan" in lines[i]), None)
    evidence = [Evidence("plan-proceed", anchor, lines[anchor]), Evidence("numbered-options", rows[0], lines[rows[0]])]
    if plan_row is not None:
        evidence.insert(0, Evidence("plan-header", plan_row, lines[plan_row]))
    prompt = Prompt(
        kind="plan",
        title="Would you like to proceed?",
        tool="ExitPlanMode",
        options=tuple(options),
        fingerprint=_fingerprint("plan", *[o.label for o in options]),
    )
    return Observation(AgentState.PLAN, prompt=prompt, evidence=tuple(evidence), confidence=0.9)


STARTUP_DIALOGS = (
    ("Do you want to use this API key?", "api-key-dialog"),
    ("Yes, I trust this folder", "trust-dialog"),
)


def _read_startup_dialog(screen: _Screen, bottom: int) -> Observation | None:
    lines = screen.lines
    for needle, rule in STARTUP_DIALOGS:
        row = next((i for i in range(bottom, max(-1, bottom - 20), -1) if needle in lines[i]), None)
        if row is None:
            continue
        if not any("Enter to confirm" in lines[i] for i in range(row, bottom + 1)):
            continue
        labels = []
        for i in range(max(0, row - 3), bottom + 1):
            label = lines[i].strip().removeprefix("❯").strip()
            if label.startswith(("Yes", "No")) and i != row:
                labels.append(Option(key="", label=label, selected=lines[i].strip().startswith("❯")))
        prompt = Prompt(
            kind="starting",
            title=lines[row].strip() if rule == "api-key-dialog" else "Do you trust the files in this folder?",
            options=tuple(labels),
            fingerprint=_fingerprint("starting", rule, *[o.label for o in labels]),
        )
        return Observation(AgentState.STARTING, prompt=prompt, evidence=(Evidence(rule, row, lines[row]),), confidence=0.9)
    return None


def _fingerprint(*parts: str) -> str:
    """A short stable hash of what identifies a prompt (not its cursor or animation)."""
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]
