"""Reading opencode's full-screen UI: which state, which prompt, and why.

Pure functions over one ``capture-pane -p -e`` capture.  Measured on 1.15.4
and 1.18.33 (the recorded corpus under ``snapshots/panes/opencode-*``), the
screen is built from a few shapes, read **structure before strings**, from
the bottom up:

* **The input box**: a run of rows behind a heavy bar ``┃`` closed by a
  bottom edge ``╹▀▀▀…``; its last bar row is the footer ("Build · <model>
  <provider>").  The row(s) under the edge are the status line: a progress
  bar of ``⬝``/``■`` and "esc interrupt" while a turn runs, with
  "<error> [retrying in 2s attempt #2]" while opencode retries a request;
  the folder and "ctrl+p commands" otherwise.
* **The transcript** above the box: each message of yours is a ``┃`` block
  in the agent's colour; the reply is plain indented text; every turn ends
  with a ``▣  Build · <model> · <duration>`` row (no duration while it
  runs, nor after an error).  An error opencode gave up on is a ``┃`` block
  in the error colour (only the ANSI capture tells the colour; without it,
  a second ``┃`` block right before a duration-less ``▣`` row).
* **The approval dialog** replaces the box: a ``┃`` block whose first row is
  "△ Permission required" (the stage after "Allow always" says "△ Always
  allow"), a header naming the tool by icon ("# Shell command", "→ Edit
  x.py", "% WebFetch …"), the command ("$ touch marker.txt") and one row of
  options ("Allow once   Allow always   Reject") followed by its hints
  ("⇆ select  enter confirm").  The selected option is drawn on a
  background of its own (ANSI only).
* **The question dialog** (opencode's own ``question`` tool) replaces the
  box too: a ``┃`` block of numbered options above its hints ("↑↓ select
  enter submit  esc dismiss"), the question above them (``question.py``).
* **Dialogs over the box** (``/connect``'s "Connect a provider", the model
  picker): a panel with a title row ending in "esc".  Provider and model
  set-up is ``starting``; any other panel someone opened is ``unknown``.

The dialog, its options and their keys are read in ``dialog.py``; the rows
and their colours in ``rows.py``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...model import AgentState, Evidence, Observation, Prompt
from ..asks import asked
from ..screen_text import SHELLS, fingerprint, strip_sgr
from .dialog import find_dialog, read_dialog
from .question import find_question, read_question
from .rows import MAX_LINE, Rows, block_top

BOX_EDGE = re.compile(r"^(?P<indent>\s*)╹▀{10,}\s*$")
OVERLAID_EDGE = re.compile(r"^\s*╹▀+\s{2,}\S")  # a dialog panel drawn over the box's edge
PROGRESS = re.compile(r"^\s*[⬝■]{4,}")
INTERRUPT = re.compile(r"\besc (?:again )?(?:to )?interrupt\b")
RETRY = re.compile(r"\[retrying(?: in (?P<wait>\S+))? attempt #(?P<attempt>\d+)\]")
TURN_END = re.compile(r"^\s*▣\s+(?P<what>\S.*)$")
# A tool's row in a turn: a glyph of its own, then a space ("$ touch x", "→ Read notes.md"); not a list mark.
TOOL_ROW = re.compile(r"^\s*[^\w\s\-*•\"'`(\[]\s")
DURATION = re.compile(r"·\s*(?:\d+h\s*)?(?:\d+m\s*)?\d+(?:\.\d+)?m?s\s*$")
PANEL_TITLE = re.compile(r"^\s+(?P<title>\S.*?\S)\s{3,}esc\s*$")
SETUP_PANEL = re.compile(r"\b(?:provider|model|api key|sign in|log ?in|connect|auth\w*)\b", re.I)
# 1.15 moves an older install's JSON storage into SQLite at its first start, before drawing anything.
MIGRATING = re.compile(r"^Performing one time database migration")
SHELL_PROMPT = re.compile(r"[\w~/)\]]\s?[$#%]\s*$|^[$#%>]\s*$")
QUESTION_END = re.compile(r"\?[\"')\]*_`]*\s*$")


def is_opencode_command(command: str) -> bool:
    """Is ``#{pane_current_command}`` opencode?  Its native binary names itself ``opencode`` (comm), the file is ``opencode.exe``."""
    name = command.rsplit("/", 1)[-1]
    return name in ("opencode", "opencode.exe")


def classify_capture(ansi: str, *, command: str | None = None, version: str | None = None) -> Observation:
    """Classify one ``capture-pane -p -e`` capture of opencode's pane (``version`` unused: one reader fits 1.15 to 1.18)."""
    lines = [line[:MAX_LINE] for line in strip_sgr(ansi)]
    screen = Rows(lines, [raw[: MAX_LINE * 8] for raw in ansi.split("\n")])
    return _with_mode(_classify(screen, command), lines)


# The agent named in the box ("┃  Build · <model>"), opencode's mode: plan changes nothing; build (its default)
# asks as its permission config says (not read).  Other agents of the user's own: not named here.
AGENT_IN_BOX = re.compile(r"^\s*┃\s+(?P<agent>Plan|Build)\s+·\s")


def _with_mode(seen: Observation, lines: list[str]) -> Observation:
    found = next((m.group("agent").lower() for m in (AGENT_IN_BOX.match(line) for line in lines[-12:]) if m), "")
    return replace(seen, mode=found) if found else seen


def classify(text: str, *, command: str | None = None, version: str | None = None) -> Observation:
    """Classify the plain text of a screen (no colours: a little less certain about errors and selection)."""
    return _classify(Rows([line.rstrip()[:MAX_LINE] for line in text.split("\n")], None), command)


def _classify(screen: Rows, command: str | None) -> Observation:
    if command is not None and not is_opencode_command(command):
        if command in SHELLS:
            return Observation(AgentState.EXITED, evidence=(Evidence("pane-command-is-shell", -1, command),), confidence=0.9)
        return Observation(AgentState.UNKNOWN, evidence=(Evidence("pane-command-not-opencode", -1, command),), confidence=0.3)
    bottom = screen.last_nonblank()
    if bottom < 0:
        return _starting(command, Evidence("blank-screen", -1, ""))

    dialog = find_dialog(screen, bottom)
    if dialog is not None:
        return read_dialog(screen, dialog, bottom)
    hints = find_question(screen, bottom)
    if hints is not None:
        return read_question(screen, hints)

    edge = _find_box_edge(screen, bottom)
    if edge is not None:
        return _at_box(screen, edge, bottom)

    panel = _find_panel(screen, bottom)
    if panel is not None:
        return panel

    migrating = next((k for k in range(bottom, -1, -1) if MIGRATING.match(screen.lines[k])), None)
    if migrating is not None and migrating >= bottom - 1:
        return Observation(AgentState.STARTING, evidence=(Evidence("storage-migration", migrating, screen.lines[migrating]),), confidence=0.8)
    if SHELL_PROMPT.search(screen.lines[bottom]) and command is None:
        return Observation(AgentState.EXITED, evidence=(Evidence("shell-prompt-at-bottom", bottom, screen.lines[bottom]),), confidence=0.6)
    if _logo_only(screen, bottom):
        return _starting(command, Evidence("opencode-not-drawn-yet", bottom, screen.lines[bottom]))
    return Observation(AgentState.UNKNOWN, evidence=(Evidence("unrecognised-screen", bottom, screen.lines[bottom]),), confidence=0.1)


def _starting(command: str | None, evidence: Evidence) -> Observation:
    """opencode runs but has drawn nothing of its own yet; without the pane's command a blank screen says nothing."""
    if command is not None and is_opencode_command(command):
        return Observation(AgentState.STARTING, evidence=(evidence, Evidence("opencode-running-no-ui", -1, command)), confidence=0.5)
    return Observation(AgentState.UNKNOWN, evidence=(evidence,), confidence=0.1)


def _logo_only(screen: Rows, bottom: int) -> bool:
    """Only the block-letter logo (and the shell line that started it) is on screen."""
    return all(not line.strip() or set(line.strip()) <= set("█▀▄ ") or "opencode" in line for line in screen.lines[: bottom + 1])


# ---------------------------------------------------------------------------
# The input box: idle, working (retrying), input, error


def _find_box_edge(screen: Rows, bottom: int) -> int | None:
    """The row of the box's bottom edge, with a ``┃`` row right above it, among the last rows."""
    for i in range(bottom, -1, -1):
        match = BOX_EDGE.match(screen.lines[i])
        if match and i > 0 and screen.bar_text(i - 1) is not None:
            return i
    return None


def _beside_sidebar(screen: Rows, edge: int) -> Rows:
    """The screen with the sidebar cut off the rows above the box: its text is not the transcript's.

    A wide pane (measured at 150 columns on 1.18.33, once a session has
    messages) draws opencode's sidebar (the session's title, context, LSP,
    its folder) on the same rows as the transcript, to the right of it.  The
    box's bottom edge ends where the transcript's column does, so every row
    above it is cut there; without a sidebar nothing lies beyond it anyway.
    (The colours are kept whole: only their left part, the bars, is read.)
    """
    right = len(screen.lines[edge].rstrip())
    if not any(len(screen.lines[k].rstrip()) > right for k in range(edge)):
        return screen
    return Rows([line[:right].rstrip() if k < edge else line for k, line in enumerate(screen.lines)], screen.ansi)


def _at_box(screen: Rows, edge: int, bottom: int) -> Observation:
    screen = _beside_sidebar(screen, edge)
    lines = screen.lines
    box_top = block_top(screen, edge - 1)
    status_rows = list(range(edge + 1, bottom + 1))
    status = " ".join(lines[k].strip() for k in status_rows)
    evidence = [Evidence("input-box", edge - 1, lines[edge - 1])]
    retry = RETRY.search(status)
    if retry is not None:
        row = next(k for k in status_rows if "[retrying" in lines[k])
        message = PROGRESS.sub("", lines[row]).strip()
        message = message[: message.find("[retrying")].strip() if "[retrying" in message else message
        return Observation(
            AgentState.WORKING,
            evidence=(*evidence, Evidence("retry-notice", row, lines[row])),
            error=message,
            retrying=True,
            confidence=0.9,
        )
    busy = next((k for k in status_rows if PROGRESS.match(lines[k]) or INTERRUPT.search(lines[k])), None)
    if busy is not None:
        return Observation(AgentState.WORKING, evidence=(*evidence, Evidence("running-turn", busy, lines[busy])), confidence=0.9)

    end = next((k for k in range(box_top - 1, -1, -1) if TURN_END.match(lines[k])), None)
    if end is None:
        return Observation(AgentState.IDLE, evidence=(*evidence, Evidence("no-turn-yet", box_top, lines[box_top])), confidence=0.8)
    finished = DURATION.search(lines[end]) is not None
    if not finished:
        failed = _error_block(screen, end, box_top)
        if failed is not None:
            row, message = failed
            return Observation(AgentState.ERROR, evidence=(*evidence, Evidence("error-block", row, lines[row])), error=message, confidence=0.85)
    asked = _question(screen, end) if finished else None
    if asked is not None:
        row, question = asked
        prompt = Prompt(kind="input", title=question, fingerprint=fingerprint("input", question))
        return Observation(AgentState.INPUT, prompt=prompt, evidence=(*evidence, Evidence("reply-asks", row, lines[row])), confidence=0.8)
    return Observation(AgentState.IDLE, evidence=(*evidence, Evidence("turn-ended", end, lines[end])), confidence=0.85)


def _error_block(screen: Rows, end: int, box_top: int) -> tuple[int, str] | None:
    """(row, message) of the error block that ends the last turn, if it ended in one.

    The block right above the turn's ``▣`` row is a ``┃`` block; with colours,
    its bar is not drawn in the colour of your own messages (the box's); without
    them, it follows another ``┃`` block (your message) with nothing between.
    """
    last = end - 1
    while last >= 0 and not screen.lines[last].strip():
        last -= 1
    if last < 0 or screen.bar_text(last) is None:
        return None
    top = block_top(screen, last)
    box_colour = screen.bar_colour(box_top)
    colour = next((c for c in (screen.bar_colour(k) for k in range(top, last + 1)) if c), None)
    if box_colour is not None and colour is not None:
        if colour == box_colour:
            return None
    else:
        above = top - 1
        while above >= 0 and not screen.lines[above].strip():
            above -= 1
        if above < 0 or screen.bar_text(above) is None:
            return None
    rows = [k for k in range(top, last + 1) if screen.bar_text(k)]
    if not rows:
        return None
    return rows[0], " ".join(screen.bar_text(k) or "" for k in rows)


def _question(screen: Rows, end: int) -> tuple[int, str] | None:
    """(row, question) when the reply that ended at ``end`` ends by asking something.

    The reply's last paragraph (the indented rows above the ``▣`` row, up to a
    blank row, a ``┃`` block or the previous turn), its soft wraps joined; the
    question is its last sentence, when that ends in "?".
    """
    rows: list[int] = []
    for k in range(end - 1, -1, -1):
        line = screen.lines[k]
        if not line.strip():
            if rows:
                break
            continue
        if screen.bar_text(k) is not None or TURN_END.match(line):
            break
        rows.insert(0, k)
    if not rows:
        return None
    text = " ".join(screen.lines[k].strip() for k in rows)
    if not QUESTION_END.search(text):
        return _asked_before(screen, end)
    sentences = re.split(r"(?<=[.!?:])\s+", text)
    question = sentences[-1].strip()
    row = next((k for k in reversed(rows) if question.split()[0] in screen.lines[k]), rows[-1])
    return row, question


def _asked_before(screen: Rows, end: int) -> tuple[int, str] | None:
    """(row, question) when the reply asks you something before the list, code or short remark it ends with (detect/asks.py).

    The reply's text: the rows above the ``▣`` row up to a ``┃`` block, the
    previous turn or a tool's row ("$ touch x", "→ Read …": what came before
    a tool ran is not the turn's last word), blank rows kept, its common
    indent removed.
    """
    start = end
    while start > 0 and screen.bar_text(start - 1) is None and not TURN_END.match(screen.lines[start - 1]) and not TOOL_ROW.match(screen.lines[start - 1]):
        start -= 1
    rows = screen.lines[start:end]
    indent = min((len(line) - len(line.lstrip()) for line in rows if line.strip()), default=0)
    found = asked([line[indent:] for line in rows])
    if found is None:
        return None
    return start + found.row, found.question


# ---------------------------------------------------------------------------
# The approval dialog


# ---------------------------------------------------------------------------
# Panels over the box (provider set-up, pickers)


def _find_panel(screen: Rows, bottom: int) -> Observation | None:
    lines = screen.lines
    overlaid = any(OVERLAID_EDGE.match(lines[k]) for k in range(max(0, bottom - 12), bottom + 1))
    for k in range(bottom + 1):
        found = PANEL_TITLE.match(lines[k])
        if found is None:
            continue
        title = found.group("title")
        if SETUP_PANEL.search(title):
            prompt = Prompt(kind="starting", title=title, fingerprint=fingerprint("starting", title))
            return Observation(AgentState.STARTING, prompt=prompt, evidence=(Evidence("setup-panel", k, lines[k]),), confidence=0.85)
        if overlaid:
            return Observation(AgentState.UNKNOWN, evidence=(Evidence("panel-open", k, lines[k]),), confidence=0.4)
    return None


__all__ = ["classify", "classify_capture", "is_opencode_command", "strip_sgr"]
