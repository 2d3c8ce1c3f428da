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
* **Dialogs over the box** (``/connect``'s "Connect a provider", the model
  picker): a panel with a title row ending in "esc".  Provider and model
  set-up is ``starting``; any other panel someone opened is ``unknown``.

opencode has no key per option: ←/→ (h/l) move the selection, Enter picks
it, Esc picks the dialog's escape option (Reject; Cancel in the "always"
stage).  So an option's ``key`` is what picks it *from the selection now on
screen*: "Enter" for the selected one, "Escape" for the escape option, and
otherwise tmux key names joined by spaces ("Right Enter").
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ...model import AgentState, Evidence, Observation, Option, Prompt

SGR = re.compile(r"\x1b\[[0-9;:]*m")
MAX_LINE = 2000
BAR = "┃"
BOX_EDGE = re.compile(r"^(?P<indent>\s*)╹▀{10,}\s*$")
OVERLAID_EDGE = re.compile(r"^\s*╹▀+\s{2,}\S")  # a dialog panel drawn over the box's edge
BAR_ROW = re.compile(r"^(?P<indent>\s*)┃(?:\s(?P<text>.*))?$")
PROGRESS = re.compile(r"^\s*[⬝■]{4,}")
INTERRUPT = re.compile(r"\besc (?:again )?(?:to )?interrupt\b")
RETRY = re.compile(r"\[retrying(?: in (?P<wait>\S+))? attempt #(?P<attempt>\d+)\]")
TURN_END = re.compile(r"^\s*▣\s+(?P<what>\S.*)$")
DURATION = re.compile(r"·\s*(?:\d+h\s*)?(?:\d+m\s*)?\d+(?:\.\d+)?m?s\s*$")
TRIANGLE = re.compile(r"^△\s+(?P<title>\S.*)$")
PANEL_TITLE = re.compile(r"^\s+(?P<title>\S.*?\S)\s{3,}esc\s*$")
SETUP_PANEL = re.compile(r"\b(?:provider|model|api key|sign in|log ?in|connect|auth\w*)\b", re.I)
HINT_TOKEN = re.compile(r"^(?:ctrl\+|⇆|enter\b|esc\b|tab\b|↑|↓)")
# 1.15 moves an older install's JSON storage into SQLite at its first start, before drawing anything.
MIGRATING = re.compile(r"^Performing one time database migration")
SHELL_PROMPT = re.compile(r"[\w~/)\]]\s?[$#%]\s*$|^[$#%>]\s*$")
SHELLS = frozenset({"bash", "zsh", "sh", "fish", "dash", "ksh", "tcsh", "csh", "nu", "xonsh", "elvish", "login"})
QUESTION_END = re.compile(r"\?[\"')\]*_`]*\s*$")
BACKGROUND = re.compile(r"\x1b\[(?:[0-9;]*;)?48;[0-9;:]+m")
FOREGROUND = re.compile(r"\x1b\[38;[0-9;:]+m")

# The header under "△ Permission required": its icon (and first word) name the tool.
HEADER_TOOLS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^→\s+Edit\s+(?P<detail>.+)$"), "edit"),
    (re.compile(r"^→\s+Read\s+(?P<detail>.+)$"), "read"),
    (re.compile(r"^→\s+List\s+(?P<detail>.+)$"), "list"),
    (re.compile(r"^✱\s+Glob\s+(?P<detail>.+)$"), "glob"),
    (re.compile(r"^✱\s+Grep\s+(?P<detail>.+)$"), "grep"),
    (re.compile(r"^%\s+WebFetch\s+(?P<detail>.+)$"), "webfetch"),
    (re.compile(r"^←\s+Access external directory\s*(?P<detail>.*)$"), "external_directory"),
    (re.compile(r"^⚙\s+Call tool\s+(?P<detail>.+)$"), "tool"),
    (re.compile(r"^⟳\s+(?P<detail>Continue after repeated failures)$"), "doom_loop"),
    (re.compile(r"^◈\s+(?P<detail>.+)$"), "websearch"),
    (re.compile(r"^#\s+(?P<detail>.+ Task)$"), "task"),
    (re.compile(r"^#\s+(?P<detail>.+)$"), "bash"),  # "# Shell command", or the command's description (1.15)
)


def is_opencode_command(command: str) -> bool:
    """Is ``#{pane_current_command}`` opencode?  Its native binary names itself ``opencode`` (comm), the file is ``opencode.exe``."""
    name = command.rsplit("/", 1)[-1]
    return name in ("opencode", "opencode.exe")


def strip_sgr(ansi: str) -> list[str]:
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

    def bar_text(self, row: int) -> str | None:
        """The text of a ``┃`` row (without the bar), or None when the row is not one."""
        match = BAR_ROW.match(self.lines[row])
        if match is None:
            return None
        return (match.group("text") or "").strip()

    def bar_colour(self, row: int) -> str | None:
        """The foreground SGR the row's ``┃`` is drawn in (ANSI capture only)."""
        if self.ansi is None or row >= len(self.ansi):
            return None
        raw = self.ansi[row]
        at = raw.find(BAR)
        if at < 0:
            return None
        colours = FOREGROUND.findall(raw[:at])
        return colours[-1] if colours else None

    def backgrounds(self, row: int) -> list[str]:
        """The background SGR in force at every visible column of ``row`` (ANSI only; [] without it)."""
        if self.ansi is None or row >= len(self.ansi):
            return []
        out: list[str] = []
        current = ""
        for piece in re.split(r"(\x1b\[[0-9;:]*m)", self.ansi[row]):
            if piece.startswith("\x1b["):
                if piece in ("\x1b[0m", "\x1b[m", "\x1b[49m"):
                    current = ""
                else:
                    found = BACKGROUND.search(piece)
                    if found:
                        current = found.group(0)
                continue
            out.extend(current for _ in piece)
        return out


def classify_capture(ansi: str, *, command: str | None = None, version: str | None = None) -> Observation:
    """Classify one ``capture-pane -p -e`` capture of opencode's pane (``version`` unused: one reader fits 1.15 to 1.18)."""
    lines = [line[:MAX_LINE] for line in strip_sgr(ansi)]
    screen = _Screen(lines, [raw[: MAX_LINE * 8] for raw in ansi.split("\n")])
    return _classify(screen, command)


def classify(text: str, *, command: str | None = None, version: str | None = None) -> Observation:
    """Classify the plain text of a screen (no colours: a little less certain about errors and selection)."""
    return _classify(_Screen([line.rstrip()[:MAX_LINE] for line in text.split("\n")], None), command)


def _classify(screen: _Screen, command: str | None) -> Observation:
    if command is not None and not is_opencode_command(command):
        if command in SHELLS:
            return Observation(AgentState.EXITED, evidence=(Evidence("pane-command-is-shell", -1, command),), confidence=0.9)
        return Observation(AgentState.UNKNOWN, evidence=(Evidence("pane-command-not-opencode", -1, command),), confidence=0.3)
    bottom = screen.last_nonblank()
    if bottom < 0:
        return _starting(command, Evidence("blank-screen", -1, ""))

    dialog = _find_dialog(screen, bottom)
    if dialog is not None:
        return _permission(screen, dialog, bottom)

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


def _logo_only(screen: _Screen, bottom: int) -> bool:
    """Only the block-letter logo (and the shell line that started it) is on screen."""
    return all(not line.strip() or set(line.strip()) <= set("█▀▄ ") or "opencode" in line for line in screen.lines[: bottom + 1])


# ---------------------------------------------------------------------------
# The input box: idle, working (retrying), input, error


def _find_box_edge(screen: _Screen, bottom: int) -> int | None:
    """The row of the box's bottom edge, with a ``┃`` row right above it, among the last rows."""
    for i in range(bottom, -1, -1):
        match = BOX_EDGE.match(screen.lines[i])
        if match and i > 0 and screen.bar_text(i - 1) is not None:
            return i
    return None


def _bar_block_top(screen: _Screen, last: int) -> int:
    """The first row of the run of ``┃`` rows that ends at ``last``, all with the bar in its column.

    (A toast drawn over the transcript has bars of its own, further right.)
    """
    column = screen.lines[last].find(BAR)
    top = last
    while top > 0 and screen.bar_text(top - 1) is not None and screen.lines[top - 1].find(BAR) == column:
        top -= 1
    return top


def _at_box(screen: _Screen, edge: int, bottom: int) -> Observation:
    lines = screen.lines
    box_top = _bar_block_top(screen, edge - 1)
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
            return Observation(
                AgentState.ERROR, evidence=(*evidence, Evidence("error-block", row, lines[row])), error=message, confidence=0.85
            )
    asked = _question(screen, end) if finished else None
    if asked is not None:
        row, question = asked
        prompt = Prompt(kind="input", title=question, fingerprint=_fingerprint("input", question))
        return Observation(AgentState.INPUT, prompt=prompt, evidence=(*evidence, Evidence("reply-asks", row, lines[row])), confidence=0.8)
    return Observation(AgentState.IDLE, evidence=(*evidence, Evidence("turn-ended", end, lines[end])), confidence=0.85)


def _error_block(screen: _Screen, end: int, box_top: int) -> tuple[int, str] | None:
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
    top = _bar_block_top(screen, last)
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


def _question(screen: _Screen, end: int) -> tuple[int, str] | None:
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
        return None
    sentences = re.split(r"(?<=[.!?:])\s+", text)
    question = sentences[-1].strip()
    row = next((k for k in reversed(rows) if question.split()[0] in screen.lines[k]), rows[-1])
    return row, question


# ---------------------------------------------------------------------------
# The approval dialog


@dataclass(frozen=True)
class _Dialog:
    title_row: int
    options_row: int | None


def _find_dialog(screen: _Screen, bottom: int) -> _Dialog | None:
    """The approval dialog at the bottom: a ``┃`` block starting "△ <title>", with no box edge under it."""
    block_end = bottom
    if screen.bar_text(block_end) is None:
        return None
    top = _bar_block_top(screen, block_end)
    for k in range(top, block_end + 1):
        if TRIANGLE.match(screen.bar_text(k) or ""):
            return _Dialog(k, _options_row(screen, k, block_end))
    return None


def _options_row(screen: _Screen, title_row: int, block_end: int) -> int | None:
    """The row of the dialog's options: its labels, then its hints ("⇆ select  enter confirm") on that row
    or, in a pane under 80 columns, on a row of their own under it."""
    for j in range(block_end, title_row, -1):
        text = screen.bar_text(j) or ""
        if _options_in(text):
            return j
        if text and HINT_TOKEN.match(text):  # a hints row of its own: the options are the row above, blanks aside
            above = next((i for i in range(j - 1, title_row, -1) if screen.bar_text(i)), None)
            if above is not None and _options_in(screen.bar_text(above) or "", hints_below=True):
                return above
    return None


def _options_in(text: str, *, hints_below: bool = False) -> list[str]:
    """The option labels of an options row ("Allow once   Allow always   Reject  ⇆ select …"), [] if it is not one.

    ``hints_below``: the dialog's hints are on the next row, so none follow the labels here.
    """
    tokens = [t for t in re.split(r"\s{2,}", text.strip()) if t]
    labels: list[str] = []
    hints = hints_below
    for token in tokens:
        if HINT_TOKEN.match(token):
            hints = True
            break
        labels.append(token)
    return labels if hints and 1 < len(labels) <= 6 else []


def _permission(screen: _Screen, dialog: _Dialog, bottom: int) -> Observation:
    lines = screen.lines
    title = _matched_title(screen.bar_text(dialog.title_row) or "")
    end = dialog.options_row if dialog.options_row is not None else bottom + 1
    body = [k for k in range(dialog.title_row + 1, end) if screen.bar_text(k)]
    tool, detail = "", ""
    header_row = body[0] if body else None
    if header_row is not None:
        header = screen.bar_text(header_row) or ""
        for pattern, name in HEADER_TOOLS:
            found = pattern.match(header)
            if found:
                tool, detail = name, found.group("detail").strip()
                break
        else:
            header_row = None
    rest = [k for k in body if k != header_row]
    command = next(((screen.bar_text(k) or "")[2:].strip() for k in rest if (screen.bar_text(k) or "").startswith("$ ")), "")
    patterns = [(screen.bar_text(k) or "")[2:].strip() for k in rest if (screen.bar_text(k) or "").startswith("- ")]
    if command:
        tool, detail = "bash", command
    elif patterns:  # the "always" stage lists what it will allow
        detail = " ".join(patterns)
    options = _options(screen, dialog.options_row, title)
    evidence = [Evidence("permission-dialog", dialog.title_row, lines[dialog.title_row])]
    if dialog.options_row is not None:
        evidence.append(Evidence("permission-options", dialog.options_row, lines[dialog.options_row]))
    deny = next((o.key for o in options if o.label.lower() == "reject"), "")
    prompt = Prompt(
        kind="permission",
        title=title,
        tool=tool,
        detail=detail,
        options=options,
        fingerprint=_fingerprint("permission", title, tool, detail, *[o.label for o in options]),
        deny_key=deny,
    )
    return Observation(AgentState.PERMISSION, prompt=prompt, evidence=tuple(evidence), confidence=0.9)


def _matched_title(text: str) -> str:
    found = TRIANGLE.match(text)
    return found.group("title").strip() if found else text


# The option Esc picks, by the dialog's stage (its title).
ESCAPE_OPTION = {"Permission required": "Reject", "Always allow": "Cancel"}


def _options(screen: _Screen, row: int | None, title: str) -> tuple[Option, ...]:
    """The options as drawn, each with the keys that pick it from the selection now on screen."""
    if row is None:
        return ()
    text = screen.lines[row]
    labels = _options_in(screen.bar_text(row) or "") or _options_in(screen.bar_text(row) or "", hints_below=True)
    starts: list[int] = []
    at = 0
    for label in labels:
        at = text.find(label, at)
        starts.append(at)
        at += len(label)
    backgrounds = screen.backgrounds(row)
    panel_at = text.find(BAR) + 1  # the dialog's own background, right of its bar
    panel = backgrounds[panel_at] if 0 < panel_at < len(backgrounds) else None
    marked = [n for n, s in enumerate(starts) if panel is not None and 0 <= s < len(backgrounds) and backgrounds[s] != panel]
    selected = marked[0] if len(marked) == 1 else None
    escape = ESCAPE_OPTION.get(title)
    options = []
    for n, label in enumerate(labels):
        if label == escape:
            key = "Escape"
        elif selected is None:
            key = ""  # the selection is not known (no colours): no key is safe
        else:
            key = " ".join(["Right"] * ((n - selected) % len(labels)) + ["Enter"])
        options.append(Option(key=key, label=label, selected=n == selected))
    return tuple(options)


# ---------------------------------------------------------------------------
# Panels over the box (provider set-up, pickers)


def _find_panel(screen: _Screen, bottom: int) -> Observation | None:
    lines = screen.lines
    overlaid = any(OVERLAID_EDGE.match(lines[k]) for k in range(max(0, bottom - 12), bottom + 1))
    for k in range(bottom + 1):
        found = PANEL_TITLE.match(lines[k])
        if found is None:
            continue
        title = found.group("title")
        if SETUP_PANEL.search(title):
            prompt = Prompt(kind="starting", title=title, fingerprint=_fingerprint("starting", title))
            return Observation(AgentState.STARTING, prompt=prompt, evidence=(Evidence("setup-panel", k, lines[k]),), confidence=0.85)
        if overlaid:
            return Observation(AgentState.UNKNOWN, evidence=(Evidence("panel-open", k, lines[k]),), confidence=0.4)
    return None


def _fingerprint(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]


__all__ = ["classify", "classify_capture", "is_opencode_command", "strip_sgr"]
