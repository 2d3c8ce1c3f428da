"""Reading Codex CLI's screen: which state, which prompt, and why (pure).

Structure before strings, from the bottom up (only the bottom is live):

1. **A live numbered menu** at the bottom: option rows ``N. label`` with
   the cursor (``›``, ``>``) on one of them and only the dialog's hints
   under them ("Press enter to confirm or esc to cancel", "enter continue ·
   esc back", "enter to submit answer").  Named by its words: Codex's
   approval dialog ("Would you like to run the following command?") is
   ``permission``; request_user_input's "Question 1/1" (Plan mode) is a
   ``question`` whose digits pick (and submit) an option; the sign-in menu and
   the folder-trust dialog are ``starting`` (never a question for you);
   anything else is a generic menu, which still waits for you.
2. **The composer**: a ``› `` line with Codex's footer under it (the model
   and folder line, the shortcut hints) and nothing else.  With it on
   screen Codex is at its prompt, and what it printed since your last prompt
   (the last ``› `` echo above) says which: the status row "Working (4s •
   esc to interrupt)" is ``working``, "Reconnecting... 2/5" there is
   ``working`` and ``retrying``, a last cell ``■ …`` is an ``error`` it gave
   up on, a reply still without the mark of a finished turn under it
   ("Worked for 3s", "done 12:33 PM", a time: from 0.155; the status row
   hides while text streams) is ``working``, a finished reply
   ending in a question is ``input``, else ``idle``.
3. Otherwise a shell prompt at the bottom means Codex exited; a screen with
   only its banner is ``starting``; anything else ``unknown``.

An answer that quotes a dialog is never read as live: the composer under it
is found first, and a menu counts only with nothing but its hints below it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...model import AgentState, Evidence, Observation, Option, Prompt
from ..asks import asked
from ..screen_text import SGR, SHELLS, fingerprint, strip_sgr
from .process import is_command

DIM_SGR = re.compile(r"\x1b\[(?:[0-9;]*;)?2(?:;[0-9;]*)?m")
MAX_LINE = 2000
# An option row: the cursor in the margin, a number, a label; Codex shows its own key at the end: "(y)", "(esc)".
OPTION = re.compile(r"^(?P<indent> {0,4})(?:(?P<cursor>[›>❯])\s*)?(?P<num>\d{1,2})\.\s+(?P<label>\S.*?)\s*$")
OWN_KEY = re.compile(r"\s+\((?P<key>esc|enter|tab|[a-z0-9])\)$", re.I)
# The dialog's own hints under its options.
MENU_HINT = re.compile(r"press enter to (?:confirm|continue)|esc to cancel|enter continue|esc back|to navigate|enter to select|enter to submit", re.I)
# request_user_input's dialog (Plan mode, 0.169): "Question 1/2 (2 unanswered)" above the question and its options.
QUESTION_HEADER = re.compile(r"^\s*Questions? (?P<index>\d+)/(?P<count>\d+)\b")
BESIDE = re.compile(r"\s{2,}\S")  # an option's description drawn beside its label
COMPOSER = re.compile(r"^› (?P<text>.*)$")
# The footer under the composer: "gpt-5.1-codex default · /work · title", "← for agents · ? for shortcuts".
FOOTER = re.compile(r"^  \S.*(?: · |\? for shortcuts|esc to interrupt|to send|ctrl\+)")
STATUS = re.compile(r"^[•◦·] (?P<what>.+?) \((?P<time>[^()]*?)esc to interrupt\)\s*$")
RETRY = re.compile(r"^[•◦·] Reconnecting\.\.\. (?P<n>\d+)/(?P<of>\d+)")
ERROR_CELL = re.compile(r"^■ (?P<text>.+)$")
INTERRUPTED = re.compile(r"conversation interrupted", re.I)
CELL = re.compile(r"^[•◦■⚠›] ")  # the first row of a transcript cell
# The mark under a finished turn, by version: "done 12:33 PM" (0.155), the time alone "12:27" (0.156-0.158),
# "Worked for <1s • 12:29" (0.160), "─ Worked for 3s ─" (0.169).  Measured on each (the reply and the mark, idle).
WORKED_FOR = re.compile(r"^\s*(?:─+ )?(?:Worked for (?:<?\d+[hms]\s*)+|done \d{1,2}:\d{2}(?:\s?[AP]M)?\s*$|\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AP]M)?\s*$)")
SHELL_PROMPT = re.compile(r"[\w~/)\]]\s?[$#%]\s*$|^[$#%]\s*$")
BANNER = re.compile(r">_ OpenAI Codex \(v(?P<version>\d+\.\d+\.\d+)\)")
PERMISSION_TITLE = re.compile(r"(?P<what>would you like to (?:run the following command|make the following edits|allow)|do you want to (?:allow|approve))", re.I)
STARTUP = (
    ("sign-in-menu", re.compile(r"sign in with chatgpt|sign in with device code|welcome to codex|choose how you want to use codex|finish signing in", re.I)),
    ("trust-dialog", re.compile(r"trust this folder|do you trust|trust and continue|folder access", re.I)),
    ("api-key-setup", re.compile(r"api key|choose a provider|set up a provider", re.I)),
)
# From 0.155 Codex marks every finished turn (WORKED_FOR), and it hides the status row while a reply
# streams (from 0.144 on); before 0.155 a streaming reply and a finished one look the same (only the title tells).
# Measured by recording a reply and a streaming one on 0.144, 0.152, 0.153, 0.154, 0.155, 0.156, 0.158, 0.160.1 and 0.169.
WORKED_FOR_SINCE = (0, 155, 0)


def _key(version: str | None) -> tuple[int, ...] | None:
    if not version:
        return None
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:3])
    return parts if len(parts) == 3 else None


@dataclass(frozen=True)
class _Menu:
    rows: tuple[int, ...]
    options: tuple[Option, ...]


def classify_capture(ansi: str, *, command: str | None = None, version: str | None = None) -> Observation:
    """Classify a ``capture-pane -p -e`` capture of a Codex pane."""
    return classify("\n".join(strip_sgr(ansi)), command=command, version=version)


def classify(text: str, *, command: str | None = None, version: str | None = None) -> Observation:
    """Classify the plain text of one Codex screen (``version``: of its install; None: the banner's, else the newest)."""
    lines = [raw[:MAX_LINE].rstrip() for raw in text.split("\n")]
    if command is not None and not is_command(command):
        if command.rsplit("/", 1)[-1] in SHELLS:
            return Observation(AgentState.EXITED, evidence=(Evidence("pane-command-is-shell", -1, command),), confidence=0.9)
        return Observation(AgentState.UNKNOWN, evidence=(Evidence("pane-command-not-codex", -1, command),), confidence=0.3)
    bottom = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), -1)
    if bottom < 0:
        return _starting(command, Evidence("blank-screen", -1, ""))
    if version is None:
        banner = next((m for m in map(BANNER.search, lines) if m), None)
        version = banner.group("version") if banner else None

    menu = _find_menu(lines, bottom)
    if menu is not None:
        return _read_menu(lines, bottom, menu)
    composer = _find_composer(lines, bottom)
    if composer is not None:
        return _at_composer(lines, composer, bottom, version)
    if SHELL_PROMPT.search(lines[bottom]) and not lines[bottom].startswith(("›", " ")):
        return Observation(AgentState.EXITED, evidence=(Evidence("shell-prompt-at-bottom", bottom, lines[bottom]),), confidence=0.6)
    if all(not line.strip() or BANNER.search(line) or _is_art(line) or line.startswith("     /") for line in lines[: bottom + 1]):
        return _starting(command, Evidence("codex-banner-only", bottom, lines[bottom]), banner=True)
    return Observation(AgentState.UNKNOWN, evidence=(Evidence("unrecognised-screen", bottom, lines[bottom]),), confidence=0.1)


def _starting(command: str | None, evidence: Evidence, *, banner: bool = False) -> Observation:
    if banner or (command is not None and is_command(command)):
        return Observation(AgentState.STARTING, evidence=(evidence,), confidence=0.5)
    return Observation(AgentState.UNKNOWN, evidence=(evidence,), confidence=0.1)


def _is_art(line: str) -> bool:
    """A row of the start-up animation (braille art) or a box edge of 0.144's banner."""
    chars = set(line.strip())
    return bool(chars) and all("\u2800" <= c <= "\u28ff" or c in "╭╮╰╯│─ " for c in chars)


# ---------------------------------------------------------------------------
# Menus


def _find_menu(lines: list[str], bottom: int) -> _Menu | None:
    """The numbered options nearest the bottom, if only the dialog's hints and blanks follow them."""
    k = bottom
    while k >= 0 and (not lines[k].strip() or MENU_HINT.search(lines[k])) and not OPTION.match(lines[k]):
        k -= 1
    if k < 0 or bottom - k > 6:
        return None
    rows: list[int] = []
    # Walk up through the options (a description may sit under each, and blanks between them).
    gap = 0
    while k >= 0 and gap <= 3:
        match = OPTION.match(lines[k])
        if match:
            rows.insert(0, k)
            gap = 0
        elif lines[k].startswith("     ") or not lines[k].strip():
            gap += 1
        else:
            break
        k -= 1
    if not rows:
        return None
    numbers = [int(OPTION.match(lines[r]).group("num")) for r in rows]  # type: ignore[union-attr]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))) or len(rows) < 2:
        return None
    cursor = any(OPTION.match(lines[r]).group("cursor") for r in rows)  # type: ignore[union-attr]
    hint = any(MENU_HINT.search(lines[i]) for i in range(rows[-1] + 1, bottom + 1))
    if not (cursor or hint):
        return None
    ends = [*rows[1:], rows[-1] + 8]
    return _Menu(tuple(rows), tuple(_option(lines, r, min(end, bottom + 1)) for r, end in zip(rows, ends, strict=True)))


def _option(lines: list[str], row: int, stop: int) -> Option:
    """The option on ``row``; a label wrapped onto the rows under it is joined when they end in its own key ("(p)")."""
    match = OPTION.match(lines[row])
    assert match is not None
    label = match.group("label")
    beside = BESIDE.search(label)
    if beside:
        label = label[: beside.start()]
    if not OWN_KEY.search(label):
        wrapped: list[str] = []
        for k in range(row + 1, stop):
            if not lines[k].startswith("     ") or not lines[k].strip():
                break
            wrapped.append(lines[k].strip())
            if OWN_KEY.search(lines[k]):
                label = " ".join([label, *wrapped])
                break
    own = OWN_KEY.search(label)
    key = match.group("num")
    if own:
        label = label[: own.start()].rstrip()
        key = {"esc": "Escape", "enter": "Enter", "tab": "Tab"}.get(own.group("key").lower(), own.group("key"))
    return Option(key=key, label=label, selected=bool(match.group("cursor")))


def _read_menu(lines: list[str], bottom: int, menu: _Menu) -> Observation:
    first = menu.rows[0]
    top = max(0, first - 30)
    dialog = "\n".join(lines[top : bottom + 1])
    found = Evidence("numbered-menu", first, lines[first])
    labels = [o.label for o in menu.options]
    for rule, pattern in STARTUP:
        if pattern.search(dialog):
            row = next(i for i in range(top, bottom + 1) if pattern.search(lines[i]))
            prompt = Prompt(kind="starting", title=lines[row].strip(), options=menu.options, fingerprint=fingerprint("starting", rule, *labels))
            return Observation(AgentState.STARTING, prompt=prompt, evidence=(Evidence(rule, row, lines[row]), found), confidence=0.9)
    title_row = next((i for i in range(first - 1, top - 1, -1) if PERMISSION_TITLE.search(lines[i])), None)
    if title_row is not None:
        return _permission(lines, menu, title_row, found)
    header = next((i for i in range(first - 1, max(top, first - 12) - 1, -1) if QUESTION_HEADER.match(lines[i])), None)
    if header is not None:
        return _ask_dialog(lines, menu, header, found)
    title_row = next((i for i in range(first - 1, top - 1, -1) if lines[i].strip()), first)
    title = lines[title_row].strip()
    prompt = Prompt(kind="menu", title=title, options=menu.options, fingerprint=fingerprint("menu", title, *labels))
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=(Evidence("unnamed-menu", title_row, lines[title_row]), found), confidence=0.6)


def _permission(lines: list[str], menu: _Menu, title_row: int, found: Evidence) -> Observation:
    title = lines[title_row].strip()
    what = PERMISSION_TITLE.search(title)
    kind = what.group("what").lower() if what else ""
    body = range(title_row + 1, menu.rows[0])
    tool = "apply_patch" if "edits" in kind else "exec_command"
    detail = _command(lines, body) if tool == "exec_command" else _edited_file(lines, body)
    reason = next((lines[i].strip()[len("Reason:") :].strip() for i in body if lines[i].strip().startswith("Reason:")), "")
    labels = [o.label for o in menu.options]
    prompt = Prompt(
        kind="permission",
        title=title,
        tool=tool,
        detail=detail,
        options=menu.options,
        fingerprint=fingerprint("permission", tool, detail, title, reason, *labels),
    )
    return Observation(AgentState.PERMISSION, prompt=prompt, evidence=(Evidence("permission-title", title_row, lines[title_row]), found), confidence=0.9)


def _ask_dialog(lines: list[str], menu: _Menu, header: int, found: Evidence) -> Observation:
    """request_user_input's question: its text between the "Question i/n" header and the options; digits pick."""
    counted = QUESTION_HEADER.match(lines[header])
    assert counted is not None
    question = " ".join(lines[k].strip() for k in range(header + 1, menu.rows[0]) if lines[k].strip())
    index, count = int(counted.group("index")), int(counted.group("count"))
    prompt = Prompt(
        kind="question",
        title=question,
        tool="request_user_input",
        options=menu.options,
        question_index=index,
        question_count=count,
        fingerprint=fingerprint("question", question, str(index), *[o.label for o in menu.options]),
    )
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=(Evidence("codex-question", header, lines[header]), found), confidence=0.9)


def _command(lines: list[str], body: range) -> str:
    """The command the dialog shows: its ``$ `` row and the rows it wraps onto, joined."""
    start = next((i for i in body if lines[i].strip().startswith("$ ")), None)
    if start is None:
        return ""
    parts = [lines[start].strip()[2:]]
    for i in range(start + 1, body.stop):
        row = lines[i]
        if not row.strip():
            break
        parts.append(row.strip())
    return " ".join(parts).strip()


def _edited_file(lines: list[str], body: range) -> str:
    for i in body:
        match = re.search(r"(?:^|\s)(?:Edited|Added|Deleted|Updated|M|A|D)\s+(\S+)", lines[i].strip())
        if match:
            return match.group(1)
    return ""


# ---------------------------------------------------------------------------
# The composer: idle, working, input, error


def box_text(ansi: str) -> str | None:
    """What Codex's composer holds: "" when it shows its dim placeholder, the draft's rows joined, None with no composer on screen.

    The placeholder ("Ask Codex to do anything" in 0.169, a rotating
    suggestion such as "Find and fix a bug in @filename" in 0.144) is drawn
    dim (SGR 2) right after the "› "; typed text is not.  A draft wraps onto
    rows indented two columns under it, up to the blank row above the footer.
    Codex takes an Enter that follows typed text within ~20 ms as part of a
    paste (measured on 0.169.0): a typed line is submitted only once this
    shows it.
    """
    lines = strip_sgr(ansi)
    bottom = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), -1)
    if bottom < 0 or _find_menu(lines, bottom) is not None:
        return None
    row = _find_composer(lines, bottom)
    if row is None:
        return None
    raw = ansi.split("\n")[row] if row < len(ansi.split("\n")) else ""
    styles = _styles_before_text(raw[raw.find("›") + 1 :] if "›" in raw else "")
    if DIM_SGR.search(styles):
        return ""
    parts = [COMPOSER.match(lines[row]).group("text").strip()]  # type: ignore[union-attr]
    for k in range(row + 1, bottom + 1):
        if not lines[k].strip() or not lines[k].startswith("  "):
            break
        parts.append(lines[k].strip())
    return " ".join(p for p in parts if p)


def _styles_before_text(raw: str) -> str:
    """The escapes in force where the first visible character of ``raw`` is drawn."""
    styles = []
    for piece in re.split(r"(\x1b\[[0-9;:]*m)", raw):
        if SGR.fullmatch(piece):
            styles.append(piece)
        elif piece.strip():
            break
    return "".join(styles)


def _find_composer(lines: list[str], bottom: int) -> int | None:
    """The composer's ``›`` row: only Codex's footer (and blanks) under it."""
    for i in range(bottom, max(-1, bottom - 8), -1):
        if COMPOSER.match(lines[i]) and not OPTION.match(lines[i]):
            below = [k for k in range(i + 1, bottom + 1) if lines[k].strip()]
            if all(FOOTER.match(lines[k]) or lines[k].startswith("  ") for k in below) and len(below) <= 4:
                return i
            return None
        if lines[i].strip() and not (FOOTER.match(lines[i]) or lines[i].startswith("  ")):
            return None
    return None


def _at_composer(lines: list[str], composer: int, bottom: int, version: str | None) -> Observation:
    # A draft the user is typing may take several rows: the composer starts at the first of them.
    top = composer
    while top > 0 and lines[top - 1].startswith("  ") and lines[top - 1].strip() and not CELL.match(lines[top - 1]):
        top -= 1
    found = [Evidence("composer", composer, lines[composer])]
    echo = next((i for i in range(top - 1, -1, -1) if COMPOSER.match(lines[i]) and not OPTION.match(lines[i])), -1)
    region = range(echo + 1, top)
    footer = [k for k in range(composer + 1, bottom + 1) if lines[k].strip()]
    if echo < 0 and footer and not any(" · " in lines[k] for k in footer) and not any(CELL.match(lines[i]) for i in region):
        # 0.169's first frames: the composer and "? for shortcuts", no model line yet.
        return Observation(AgentState.STARTING, evidence=(*found, Evidence("codex-loading", footer[-1], lines[footer[-1]])), confidence=0.5)

    for i in reversed(region):
        line = lines[i]
        retry = RETRY.match(line)
        if retry:
            message = " ".join(lines[k].strip().lstrip("└").strip() for k in range(i + 1, top) if lines[k].strip()) or line.strip()
            return Observation(AgentState.WORKING, evidence=(*found, Evidence("codex-reconnecting", i, line)), error=message[:300], retrying=True, confidence=0.9)
        if STATUS.match(line):
            return Observation(AgentState.WORKING, evidence=(*found, Evidence("codex-status-row", i, line)), confidence=0.9)
        if CELL.match(line):
            break  # the status row, when there is one, is the last cell

    cell = _last_cell(lines, region)
    if cell is None:
        return Observation(AgentState.IDLE, evidence=(*found, Evidence("nothing-since-prompt", composer, lines[composer])), confidence=0.8)
    start, end = cell
    if lines[start].startswith("■ "):
        message = " ".join([lines[start][2:].strip(), *(lines[k].strip() for k in range(start + 1, end + 1))]).strip()
        if INTERRUPTED.search(message):
            return Observation(AgentState.IDLE, evidence=(*found, Evidence("codex-interrupted", start, lines[start])), confidence=0.7)
        return Observation(AgentState.ERROR, evidence=(*found, Evidence("codex-error-cell", start, lines[start])), error=message[:300], confidence=0.85)

    worked = next((i for i in reversed(region) if WORKED_FOR.match(lines[i])), None)
    newer = _writes_worked_for(version, [lines[k] for k in footer])
    reply = _last_reply(lines, region)
    if newer and worked is None and reply is not None:
        # 0.155+ hides the status row while a reply streams in; a finished turn has its mark under it.
        return Observation(AgentState.WORKING, evidence=(*found, Evidence("codex-reply-streaming", reply[0], lines[reply[0]])), confidence=0.7)
    if worked is not None:
        found.append(Evidence("codex-turn-done", worked, lines[worked]))
    if reply is not None:
        question = _question(lines, *reply)
        if question:
            prompt = Prompt(kind="input", title=question, fingerprint=fingerprint("input", question))
            return Observation(AgentState.INPUT, prompt=prompt, evidence=(*found, Evidence("reply-asks", reply[1], lines[reply[1]])), confidence=0.8)
    return Observation(AgentState.IDLE, evidence=tuple(found), confidence=0.85)


def _writes_worked_for(version: str | None, footer: list[str]) -> bool:
    """Does this Codex mark every finished turn (WORKED_FOR), so that a reply without the mark is still streaming?

    By its version when known (from 0.155); otherwise by its footer: 0.158
    and later show "← for agents" there, 0.144 only the model line.  An unknown old Codex read as
    new would show a finished question as still working.
    """
    known = _key(version)
    if known is not None:
        return known >= WORKED_FOR_SINCE
    return any("for agents" in row for row in footer)


def _last_cell(lines: list[str], region: range) -> tuple[int, int] | None:
    """(first row, last row) of the last transcript cell in ``region`` (its "Worked for" line and tips left out)."""
    end = None
    for i in reversed(region):
        line = lines[i]
        if end is None:
            if not line.strip() or WORKED_FOR.match(line) or line.strip().startswith("└ Tip:"):
                continue
            end = i
        if CELL.match(line) and not line.startswith("› "):
            return i, end
    return None


def _last_reply(lines: list[str], region: range) -> tuple[int, int] | None:
    """(first row, last text row) of the agent's last message: a ``• `` cell that is not a command it ran."""
    cell = _last_cell(lines, region)
    if cell is None or not lines[cell[0]].startswith("• "):
        return None
    start, end = cell
    if re.match(r"^• (?:Ran|Running|Explored|Exploring|Edited|Updated|Added|Deleted|Waiting|Working) ", lines[start]):
        return None
    while end > start and (lines[end].strip().startswith("└") or not lines[end].strip()):
        end -= 1
    return start, end


def _question(lines: list[str], start: int, end: int) -> str:
    """The paragraph of the reply that asks you something ("" if none): at its end, or before the choices, code or remark it offers (detect/asks.py)."""
    rows = [lines[start].removeprefix("• ")] + [line[2:] if line.startswith("  ") else line.strip() for line in lines[start + 1 : end + 1]]
    found = asked(rows)
    return found.paragraph if found is not None else ""
