"""opencode's approval dialog: its title, the tool and what it asks for, its options and the keys that pick them.

The dialog replaces the input box at the bottom of the screen: a ``┃``
block whose first row is "△ Permission required" ("△ Always allow" in the
stage after "Allow always"), a header naming the tool by its icon ("#
Shell command", "→ Edit notes.md", "% WebFetch …"), what it asks for ("$
touch marker.txt", a diff, "- touch *"), and one row of options followed by
its hints ("⇆ select  enter confirm"; on a row of their own under 80
columns).  The selected option is drawn on a background of its own.

opencode has no key per option: ←/→ (h/l) move the selection, Enter picks
it, Esc picks the dialog's escape option (Reject; Cancel in the "always"
stage).  So an option's ``key`` is what picks it *from the selection now on
screen*: "Enter" for the selected one, "Escape" for the escape option, and
otherwise tmux key names joined by spaces ("Right Enter"), which the guarded
send refuses to type: only one key is ever sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...model import AgentState, Evidence, Observation, Option, Prompt
from ..screen_text import fingerprint
from .rows import BAR, Rows, block_top

TRIANGLE = re.compile(r"^△\s+(?P<title>\S.*)$")
HINT_TOKEN = re.compile(r"^(?:ctrl\+|⇆|enter\b|esc\b|tab\b|↑|↓)")
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


@dataclass(frozen=True)
class Dialog:
    """Where the dialog is: its "△" title row, and its options row (None: none drawn, e.g. a reason being typed)."""

    title_row: int
    options_row: int | None


def find_dialog(screen: Rows, bottom: int) -> Dialog | None:
    """The approval dialog at the bottom: a ``┃`` block starting "△ <title>", with no box edge under it."""
    block_end = bottom
    if screen.bar_text(block_end) is None:
        return None
    top = block_top(screen, block_end)
    for k in range(top, block_end + 1):
        if TRIANGLE.match(screen.bar_text(k) or ""):
            return Dialog(k, _options_row(screen, k, block_end))
    return None


def _options_row(screen: Rows, title_row: int, block_end: int) -> int | None:
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


def read_dialog(screen: Rows, dialog: Dialog, bottom: int) -> Observation:
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
        fingerprint=fingerprint("permission", title, tool, detail, *[o.label for o in options]),
        deny_key=deny,
    )
    return Observation(AgentState.PERMISSION, prompt=prompt, evidence=tuple(evidence), confidence=0.9)


def _matched_title(text: str) -> str:
    found = TRIANGLE.match(text)
    return found.group("title").strip() if found else text


# The option Esc picks, by the dialog's stage (its title).
ESCAPE_OPTION = {"Permission required": "Reject", "Always allow": "Cancel"}


def _options(screen: Rows, row: int | None, title: str) -> tuple[Option, ...]:
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
