"""Reading Claude Code's screen: which state, which prompt, and why.

Pure functions over the text of a pane (plus, optionally, its ANSI capture,
for what only colour tells: which question tab is active, which lines of a
permission dialog are a grey description rather than the command).

It reads **structure before strings**, from the bottom up, because only the
bottom of the screen is live:

1. **The input box**, found by its shape: a prompt line (any symbol glyph:
   ``❯`` since 2.1, ``>`` in 2.0) right under a rule, a rule below it, and
   no more than a short footer under that.  With the box on screen Claude is
   at its prompt: working (a running-turn hint, or a retry notice: a request
   Claude is retrying is still its turn, marked ``retrying``), error (an error
   Claude gave up on, the last thing it printed), input (its last reply asks
   you something), or idle.
2. **A live numbered menu**: consecutive options ``1.``, ``2.``, … with the
   cursor on one of them (or the dialog's own "Esc to cancel" under them)
   and nothing but hints, descriptions and rules below; when Claude scrolled
   a dialog taller than the pane, the options on screen and a count of those
   out of view.
   It always needs you.  It is named by the words of its title lines
   (permission / question / plan / a start-up dialog) and otherwise reported
   as a generic menu (``question`` with ``prompt.kind == "menu"``), never as
   ``starting``.
3. Otherwise: a shell prompt at the bottom means Claude exited; a blank
   screen or Claude's banner alone means it is starting; anything else is
   ``unknown``, with the line the reader stopped at as evidence.

So an answer that *quotes* "Do you want to proceed? 1. Yes" and an old
prompt in the scrollback are never read as live: the input box below them
is found first.  The words come from a ``Rules`` table per version family
(``tables.py``); an unknown version is read with the structural defaults.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property

from ...model import AgentState, Blocked, Evidence, Observation, Option, Prompt
from ...usage.limits import limited
from ..asks import asked
from ..screen_text import SGR, SHELLS, fingerprint, strip_sgr
from .auto_mode import blocked_calls, footer_mode, gateway_dialog, notice_rows, pause_reason
from .tables import BASE, Rules, rules_for

RULE = re.compile(r"^\s*[╭╰]?─{10,}[╮╯]?\s*$")  # also the edges of a rounded box (2.0 dialogs)
DASHED_RULE = re.compile(r"^\s*╌{10,}\s*$")
TOP_EDGE = re.compile(r"^\s*▔{10,}\s*$")  # the full-screen renderer draws it above a dialog
# A prompt line: a symbol glyph at the left edge, then a (no-break) space or nothing.
PROMPT_LINE = re.compile(r"^(?P<glyph>[^\w\s─━│┃╭╮╰╯┌┐└┘├┤╌▔▐▛▜▝▘⎿●]) ?(?:[ \u00a0](?P<text>.*))?$")
# An option row: the cursor, or Claude's scroll arrow ("↓ 4. Fix them": more below it), in its margin.
# (2.1.160 squeezes "2.Yes, and don't ask again…" without a space in a narrow pane.)
OPTION = re.compile(r"^(?P<indent>\s{0,10})(?:(?P<cursor>[❯>›▸▶])\s*|(?P<scroll>[↑↓])\s*)?(?P<num>\d{1,2})\.(?:\s+|(?=[A-Za-z]))(?P<label>\S(?:.*\S)?)\s*$")
CHECKBOX = re.compile(r"^\[(?P<mark>[ ✔✓xX×])\]\s+")
# The spinner's row: a glyph, a gerund ("Beboppin'"), an ellipsis.
SPINNER = re.compile(r"^\S\s+\w[\w' -]*…")
BULLET = re.compile(r"^● ")
RESULT = re.compile(r"^\s*⎿\s+(?P<text>.*)$")
SHELL_PROMPT = re.compile(r"[\w~/)\]]\s?[$#%]\s*$|^[$#%>]\s*$")
TOOL_CALL = re.compile(r"^● (?P<name>[A-Z]\w*)\((?P<arg>.*?)\)?\s*$")
TAB_LINE = re.compile(r"[☐☒]\s+\S")
BACKGROUND = re.compile(r"\x1b\[(?:[0-9;]*;)?48;[0-9;:]+m")
URL = re.compile(r"https?://[^\s\"',)]+")
# The file a question names: everything from its first verb to the "?" (a name with a blank in it is not read from here).
FILE_IN_TITLE = re.compile(r"\b(?:make this edit to|edit to|create|write to|overwrite|edit|read)\s+(?P<path>.+?)\?\s*$", re.I)
ESC_HINT = re.compile(r"\besc to (?:exit|cancel)\b", re.I)
ATTEMPT = re.compile(r"attempt\s+(\d+)\s*/\s*(\d+)", re.I)
HINT_WORDS = re.compile(r"\b(esc|enter|tab|ctrl[+-]\w|shift[+-]\w|select|navigate|cancel|confirm|amend|edit|exit|press \w+ to)\b", re.I)
# A dialog's own hint under its options: it makes a numbered list a live menu
# even where no cursor is drawn ("Esc to cancel", "Enter to select").
DIALOG_HINT = re.compile(r"\b(?:esc to (?:cancel|exit)|enter to (?:select|confirm|submit)|to navigate)\b", re.I)
# Claude scrolls a dialog taller than the pane inside itself and says so above
# or below the options: "↑ 1 more line", "↓ 2 more lines", "↓ 3 more", "(more below)".
SCROLL_UP = re.compile(r"^\s*(?:↑\s*(?:\d+\s+)?more\b.*|↑|\(more above\))\s*$", re.I)
SCROLL_DOWN = re.compile(r"^\s*(?:↓\s*(?:\d+\s+)?more\b.*|↓|\(more below\))\s*$", re.I)
# Where an option's label ends and a preview panel beside it begins: a gap, then a box edge.
BESIDE = re.compile(r"\s{2,}[│┃┌┐└┘╭╮╰╯├┤]")
BOX_TOP = re.compile(r"^┌[─┬]*.*┐$")  # a square box's top edge, from its column
BOX_BOTTOM = re.compile(r"^(?P<indent>\s*)└[─┴]*┘$")  # its bottom edge: a whole row
# A grey or dim foreground: a permission dialog's description, an input box's placeholder.
DIM = re.compile(r"\x1b\[(?:2|38;5;(?:24[0-9]|25[0-5]|8)|90|38;2;(?:1[0-5]\d);(?:1[0-5]\d);(?:1[0-5]\d))m")

VERSION_NAME = re.compile(r"^\d+\.\d+\.\d+$")
MAX_LINE = 2000  # characters of a screen line the reader looks at
BANNER_VERSION = re.compile(r"Claude Code v(\d+\.\d+\.\d+)")
FOOTER_MAX = 6  # lines a footer may take under the input box (hints, a plugin notice, wraps)


def _matched(pattern: re.Pattern[str], line: str) -> re.Match[str]:
    """``pattern.match(line)`` for a line an earlier step already matched with it."""
    match = pattern.match(line)
    if match is None:
        raise ValueError(f"{pattern.pattern!r} no longer matches {line[:80]!r}")
    return match


def is_claude_command(command: str) -> bool:
    """Is ``#{pane_current_command}`` Claude Code (native, node, or a version-named binary)?"""
    name = command.rsplit("/", 1)[-1]
    return name in ("claude", "node") or bool(VERSION_NAME.match(name))


def screen_version(text: str) -> str | None:
    """The version in Claude's banner ("Claude Code v2.1.330"), if it is still on screen."""
    match = BANNER_VERSION.search(text)
    return match.group(1) if match else None


@dataclass
class _Screen:
    lines: list[str]
    ansi: list[str] | None
    rules: Rules
    captured: list[str] = field(default_factory=list)  # the rows as captured: box sides still on

    @classmethod
    def read(cls, rows: Iterable[str], ansi: list[str] | None, rules: Rules) -> _Screen:
        """The screen of captured rows: each capped at a pane's width (anything longer is not Claude's
        layout, and capping bounds the work of every rule) and read without a rounded box's sides."""
        captured = [row[:MAX_LINE].rstrip() for row in rows]
        return cls([_unbox(line) if "│" in line else line for line in captured], ansi, rules, captured)

    @cached_property
    def boxed(self) -> frozenset[int]:
        """The rows of a preview box drawn whole (see _preview_box_rows): found only when a menu is looked for."""
        return _preview_box_rows(self.captured)

    def last_nonblank(self) -> int:
        for i in range(len(self.lines) - 1, -1, -1):
            if self.lines[i].strip():
                return i
        return -1

    def is_dim(self, row: int) -> bool:
        """The row's text is drawn in a grey or dim colour (only the ANSI capture tells)."""
        if self.ansi is None or row >= len(self.ansi):
            return False
        raw = self.ansi[row]
        first = re.search(r"\S", SGR.sub("", raw))
        if first is None:
            return False
        # The style in force at the first visible character.
        visible, style = 0, ""
        for piece in re.split(r"(\x1b\[[0-9;:]*m)", raw):
            if piece.startswith("\x1b["):
                style = "" if piece in ("\x1b[0m", "\x1b[39m", "\x1b[m") else style + piece
                continue
            for _char in piece:
                if visible == first.start():
                    return DIM.search(style) is not None
                visible += 1
        return False


def _unbox(line: str) -> str:
    """A row of a rounded box ("│ … │") without its borders (2.0's dialogs are boxed)."""
    stripped = line.rstrip()
    if stripped[:1] == "│" and stripped[-1:] == "│" and len(stripped) > 2 and "│" not in stripped[1:-1]:
        return " " + stripped[1:-1].rstrip()
    return stripped


def classify(
    text: str,
    *,
    ansi: str | None = None,
    command: str | None = None,
    version: str | None = None,
    rules: Rules | None = None,
) -> Observation:
    """Classify one screen.

    ``text`` is the plain capture; ``ansi`` the same capture with escapes
    (optional: it sharpens details); ``command`` is
    ``#{pane_current_command}`` when known; ``version`` the Claude Code
    version when known (else the banner's, else the newest table), and
    ``rules`` overrides the table (the generalisation test passes ``BASE``).
    """
    ansi_lines = ansi.split("\n") if ansi is not None else None
    if rules is None:
        rules = rules_for(version or screen_version(text))
    screen = _Screen.read(text.split("\n"), ansi_lines, rules)
    lines = screen.lines
    bottom = screen.last_nonblank()

    if command is not None and not is_claude_command(command):
        if command in SHELLS:
            return Observation(AgentState.EXITED, evidence=(Evidence("pane-command-is-shell", -1, command),), confidence=0.9)
        return Observation(AgentState.UNKNOWN, evidence=(Evidence("pane-command-not-claude", -1, command),), confidence=0.3)

    if bottom < 0:
        return _starting(command, Evidence("blank-screen", -1, ""))

    box = _find_input_box(screen, bottom)
    if box is not None:
        return _at_input_box(screen, *box)

    menu = _find_menu(screen, bottom) or _unnumbered_menu(screen, bottom)
    if menu is not None:
        return _read_menu(screen, bottom, menu)

    gateway = gateway_dialog(lines, bottom)
    if gateway is not None:
        # Auto mode's check cannot run (a gateway drops it): Claude waits for Enter (stay) or Esc.
        row, prompt = gateway
        return Observation(AgentState.PERMISSION, prompt=prompt, evidence=(Evidence("auto-mode-check-dialog", row, lines[row]),), confidence=0.9, mode="auto")

    startup = _read_startup_dialog(screen, bottom)
    if startup is not None:
        return startup

    if command is None and SHELL_PROMPT.search(lines[bottom]) and not lines[bottom].startswith(("❯", " ")):
        return Observation(AgentState.EXITED, evidence=(Evidence("shell-prompt-at-bottom", bottom, lines[bottom]),), confidence=0.6)
    if _nothing_drawn_yet(screen, bottom):
        banner = any(rules.banner.search(line) for line in lines)
        return _starting(command, Evidence("claude-not-drawn-yet", bottom, lines[bottom]), banner=banner)
    return Observation(
        AgentState.UNKNOWN,
        evidence=(Evidence("unrecognised-screen", bottom, lines[bottom]),),
        confidence=0.1,
    )


def classify_capture(ansi: str, *, command: str | None = None, version: str | None = None, rules: Rules | None = None) -> Observation:
    """Classify a ``capture-pane -p -e`` capture (the format of ``headspace classify``)."""
    return classify("\n".join(strip_sgr(ansi)), ansi=ansi, command=command, version=version, rules=rules)


def _starting(command: str | None, evidence: Evidence, *, banner: bool = False) -> Observation:
    """Claude runs but has drawn nothing of its own UI yet (or only its banner).

    Without the pane's command a blank screen says nothing (unknown); Claude's
    banner alone says Claude is starting.
    """
    if command is not None and is_claude_command(command) or command is None and banner:
        extra = (Evidence("claude-running-no-ui", -1, command),) if command else ()
        return Observation(AgentState.STARTING, evidence=(evidence, *extra), confidence=0.5)
    return Observation(AgentState.UNKNOWN, evidence=(evidence,), confidence=0.1)


def _nothing_drawn_yet(screen: _Screen, bottom: int) -> bool:
    """Only the shell's command line and Claude's banner are on screen."""
    for i in range(bottom + 1):
        line = screen.lines[i].strip()
        if not line or "claude" in line.lower() and i <= 1 or screen.rules.banner.search(line):
            continue
        if line[0] in "╭╰│▐▝▘" or set(line) <= set("─╭╮╰╯│ "):
            continue  # the banner's box and mascot
        return False
    return True


# ---------------------------------------------------------------------------
# The input box: idle, working, input, error


def _find_input_box(screen: _Screen, bottom: int) -> tuple[int, int, int] | None:
    """(top rule, prompt line, bottom rule) of the input box, if it is the last thing drawn.

    Only a short footer (hints, a notice, their wraps) may follow it; a shell
    prompt at the very bottom means Claude has exited and left its last frame.
    """
    lines = screen.lines
    for i in range(bottom, 0, -1):
        if bottom - i > 24:
            return None
        match = PROMPT_LINE.match(lines[i])
        if match is None or not RULE.match(lines[i - 1]) or OPTION.match(lines[i]):
            continue
        for j in range(i + 1, min(bottom + 1, i + 14)):
            if OPTION.match(lines[j]):
                break  # a dialog between rules (a question's tab line above its options), not the box
            if RULE.match(lines[j]):
                footer = [k for k in range(j + 1, bottom + 1) if lines[k].strip()]
                if len(footer) > FOOTER_MAX or any(OPTION.match(lines[k]) for k in footer):
                    break
                if footer and SHELL_PROMPT.search(lines[bottom]) and not HINT_WORDS.search(lines[bottom]):
                    return None
                return i - 1, i, j
    return None


def _last_prompt_echo(screen: _Screen, top: int, glyph: str) -> int:
    """The row of the user's last prompt in the transcript (the input box's glyph at the left edge), or -1."""
    for i in range(top - 1, -1, -1):
        line = screen.lines[i]
        if line.startswith(glyph) and line[len(glyph) : len(glyph) + 1] in (" ", "\u00a0") and line[len(glyph) + 1 :].strip():
            return i
    return -1


def _at_input_box(screen: _Screen, top: int, prompt_line: int, rule_below: int) -> Observation:
    lines, rules = screen.lines, screen.rules
    footer_rows = range(rule_below + 1, len(lines))
    footer = " ".join(lines[k].strip() for k in footer_rows)
    glyph = _matched(PROMPT_LINE, lines[prompt_line]).group("glyph")
    evidence = [Evidence("input-box", prompt_line, lines[prompt_line])]
    if rules.prompt_glyphs and glyph not in rules.prompt_glyphs:
        # Found by its shape; the version's table knows another glyph: say so in "why".
        evidence.append(Evidence("unfamiliar-glyph", prompt_line, f"{glyph!r}; the {rules.family} rules know {' '.join(rules.prompt_glyphs)}"))
    echo = _last_prompt_echo(screen, top, glyph)
    region = range(echo + 1, top)  # what Claude printed since the user's last prompt
    state = _box_state(screen, top, prompt_line, rule_below, footer, evidence, echo, region)
    seen = _turn_facts(screen, region, footer, footer_rows)
    return replace(state, **seen) if seen else state


def _turn_facts(screen: _Screen, region: range, footer: str, footer_rows: range = range(0)) -> dict:
    """The permission mode the footer names and the calls auto mode blocked this turn, for the observation (only those shown)."""
    facts: dict = {}
    mode = footer_mode(footer)
    if mode:
        facts["mode"] = mode
    blocked = blocked_calls(screen.captured, region, screen.rules.tool_for_call, footer_rows)
    if blocked:
        facts["blocked"] = blocked
    return facts


def _dialog_facts(screen: _Screen, menu: _Menu, prompt: Prompt) -> dict:
    """Auto mode around a permission dialog, which hides the footer: its pause asking about a call its check blocked (that
    call, with the pause's reason), and the blocks drawn above the dialog since the user's last prompt.  Either says
    the mode is auto."""
    lines = screen.lines
    top = max(menu.top, 0)
    echo = max((_last_prompt_echo(screen, top, glyph) for glyph in screen.rules.prompt_glyphs or ("❯", ">")), default=-1)
    blocked = list(blocked_calls(screen.captured, range(echo + 1, top), screen.rules.tool_for_call))
    question = next((k for k in range(menu.rows[0] - 1, top, -1) if lines[k].strip()), top)
    reason = pause_reason(lines, list(range(top + 1, question)))
    if reason is not None and prompt.detail:
        # The call it asks about is one its check blocked (drawn above as the latest call, with no reason of its own there).
        blocked = [b for b in blocked if b.reason or not (prompt.detail.startswith(b.detail.rstrip("…")) and b.detail)]
        blocked.append(Blocked(tool=prompt.tool, detail=prompt.detail, reason=reason))
    if reason is None and not blocked:
        return {}
    return {"mode": "auto", "blocked": tuple(blocked)}


def _box_state(screen: _Screen, top: int, prompt_line: int, rule_below: int, footer: str, evidence: list[Evidence], echo: int, region: range) -> Observation:
    lines, rules = screen.lines, screen.rules

    retry = next((i for i in reversed(region) if rules.retry.search(lines[i])), None)
    if retry is not None:
        # Claude is still trying: its turn runs ("esc to interrupt"), nothing
        # waits for you yet.  ``error`` says what failed, for the row's mark.
        return Observation(
            AgentState.WORKING,
            evidence=(*evidence, Evidence("retry-notice", retry, lines[retry])),
            error=_retry_message(screen, retry, region.start),
            retrying=True,
            confidence=0.9,
        )
    working_row = next((i for i in reversed(region) if rules.working.search(lines[i])), None)
    if working_row is not None or rules.working.search(footer):
        spinner = next((i for i in reversed(region) if SPINNER.match(lines[i]) and not lines[i].startswith("●")), None)
        where = working_row if working_row is not None else rule_below + 1
        extra = [Evidence("spinner", spinner, lines[spinner])] if spinner is not None else []
        return Observation(
            AgentState.WORKING,
            evidence=(*evidence, Evidence("running-turn-hint", where, lines[where] if working_row is not None else footer), *extra),
            confidence=0.9,
        )
    spinner = next((i for i in range(top - 1, max(region.start, top - 4) - 1, -1) if SPINNER.match(lines[i]) and not lines[i].startswith("●")), None)
    if spinner is not None:
        return Observation(AgentState.WORKING, evidence=(*evidence, Evidence("spinner", spinner, lines[spinner])), confidence=0.7)

    error = _given_up_error(screen, region)
    if error is not None:
        row, message = error
        if limited(message):  # its rate limit stopped it ("Request rejected (429)", "You've hit your 5-hour limit · resets 3pm")
            return Observation(AgentState.LIMITED, evidence=(*evidence, Evidence("rate-limited", row, lines[row])), error=message, confidence=0.85)
        return Observation(AgentState.ERROR, evidence=(*evidence, Evidence("error-given-up", row, lines[row])), error=message, confidence=0.85)
    interrupted = next((i for i in region if (m := RESULT.match(lines[i])) and rules.interrupted.search(m.group("text"))), None)
    if interrupted is not None:
        return Observation(AgentState.IDLE, evidence=(*evidence, Evidence("interrupted-by-user", interrupted, lines[interrupted])), confidence=0.85)
    block = _last_reply(lines, top, echo)
    found = asked(block[1]) if block is not None else None
    if block is not None and found is not None:
        # A question typed in the reply: at its end, or before the choices, code
        # or short remark it offers (detect/asks.py says which questions count).
        row = block[0] + found.row
        rule = "reply-ends-with-question" if found.how == "ends-with-question" else f"reply-asks-{found.how}"
        prompt = Prompt(kind="input", title=found.paragraph, fingerprint=fingerprint("input", found.paragraph))
        return Observation(AgentState.INPUT, prompt=prompt, evidence=(*evidence, Evidence(rule, row, lines[row])), confidence=0.7)
    return Observation(AgentState.IDLE, evidence=tuple(evidence), confidence=0.8)


def _retry_message(screen: _Screen, row: int, start: int) -> str:
    """The row's retrying mark: the attempt and what failed ("retrying 5/10 · 529 overloaded").

    What failed is what the notice or the lines above it say.
    """
    line = screen.lines[row].strip()
    attempt = ATTEMPT.search(line)
    head = re.split(r"\s+·\s+(?=retrying|will retry|next try)|\s*\bRetrying\b", line, maxsplit=1, flags=re.I)[0]
    head = re.sub(r"^[^\w(]+\s*", "", head).strip(" ·")
    if not head:
        # The error sits in the result block above the notice ("⎿  429 {…}", "Request timed out.").
        rows: list[str] = []
        for i in range(row - 1, start - 1, -1):
            text = screen.lines[i].strip()
            if not text or SPINNER.match(text) or BULLET.match(text):
                break
            rows.insert(0, re.sub(r"^⎿\s*", "", text))
            if screen.lines[i].lstrip().startswith("⎿"):
                break
        head = " ".join(rows)
    head = head or "API request failed"
    return f"retrying {attempt.group(1)}/{attempt.group(2)} · {head}" if attempt else f"retrying · {head}"


def _given_up_error(screen: _Screen, region: range) -> tuple[int, str] | None:
    """An error block that is the last thing Claude printed since the user's prompt."""
    lines = screen.lines
    found = None
    for i in region:
        stripped = lines[i].strip()
        head = re.sub(r"^[●⎿]\s*", "", stripped)
        # A block head: "●" at the left edge (a right-aligned "● high · /effort" is not one), or "⎿".
        if (BULLET.match(lines[i]) or stripped[:1] == "⎿") and screen.rules.given_up.match(head):
            rows = [head]
            for k in range(i + 1, region.stop):
                nxt = lines[k]
                if not nxt.strip() or not nxt.startswith(" ") or nxt.strip()[:1] in ("⎿", "●"):
                    break
                rows.append(nxt.strip())
            found = (i, " ".join(rows))
        elif found is not None and BULLET.match(lines[i]) and not TOOL_CALL.match(lines[i]):
            found = None  # Claude answered after the error: it recovered
    return found


def _last_reply(lines: list[str], top: int, echo: int) -> tuple[int, list[str]] | None:
    """The last ``●`` text block above the input box, if it is Claude's final reply: (its row, its lines).

    A reply is a ``●`` line plus the indented lines under it, returned
    without the reply's indent and with its blank lines (paragraph breaks),
    so a list or a code block in it keeps its shape.  Tool calls
    (``● Bash(...)``) and blocks before the user's last prompt do not count.
    """
    start = None
    for i in range(top - 1, echo, -1):
        if BULLET.match(lines[i]):
            start = i
            break
    if start is None or TOOL_CALL.match(lines[start]):
        return None
    rows = [lines[start][2:]]
    for line in lines[start + 1 : top]:
        if line and not line.startswith(" ") or line.strip().startswith("⎿"):
            break
        rows.append(line[2:] if line.startswith("  ") else line.strip())
    return start, rows


# ---------------------------------------------------------------------------
# A live numbered menu: permission, question, plan, start-up, or a generic one


@dataclass(frozen=True)
class _Menu:
    options: tuple[Option, ...]
    rows: tuple[int, ...]  # the row of each option's number
    top: int  # the dialog's top edge (a rule); -1 when that is above the pane (Claude scrolled it away)
    hidden_above: int = 0  # options Claude scrolled out of view above the first one shown
    more_below: bool = False  # Claude says the dialog goes on below what is shown
    hidden_between: int = 0  # options out of view under a "↓" row, above options Claude keeps pinned ("Chat about this")


def _find_menu(screen: _Screen, bottom: int) -> _Menu | None:
    """The numbered menu at the bottom: options in order, the cursor on one, only hints below.

    The options run 1..n, or k..n when Claude scrolled a dialog taller than
    the pane: under its own "↑ more" marker, or cut by the top of the pane
    itself (the first k-1 are out of view).  Options it scrolled away under a
    "↓ 4. …" row, above the ones it keeps pinned at the bottom ("6. Chat about
    this"), are counted too.  A menu drawn without a cursor counts when the
    dialog's own hint ("Esc to cancel", "Enter to select") is under it: a
    numbered list in Claude's text has neither.
    """
    lines = screen.lines
    last = _last_option(screen, bottom)
    if last is None:
        return None
    hinted = any(DIALOG_HINT.search(lines[k]) for k in range(last + 1, bottom + 1))
    # Walk up from the last option to option 1, each number one less than the one below.
    rows = [last]
    expected = int(_matched(OPTION, lines[last]).group("num")) - 1
    scrolled = False
    between = 0
    i = last - 1
    while expected >= 1 and i >= 0 and last - i < 60:
        match = OPTION.match(lines[i])
        if match and int(match.group("num")) == expected:
            rows.insert(0, i)
            expected -= 1
        elif match and match.group("scroll") == "↓" and int(match.group("num")) < expected:
            between += expected - int(match.group("num"))  # scrolled away under this row
            rows.insert(0, i)
            expected = int(match.group("num")) - 1
        elif SCROLL_UP.match(lines[i]):
            scrolled = True  # the options above are out of view
            break
        elif match or DASHED_RULE.match(lines[i]) or TOP_EDGE.match(lines[i]):
            return None  # another numbered list, or the dialog's edge, before option 1
        i -= 1
    # 2.1.330 draws its "↑ 9 more lines" under the options, above its hint;
    # 2.1.250 draws no marker: the dialog just runs off the top of the pane.
    scrolled = scrolled or any(SCROLL_UP.match(lines[k]) for k in range(last + 1, bottom + 1)) or (i < 0 and hinted)
    if expected != 0 and not scrolled:
        return None
    matches = [_matched(OPTION, lines[r]) for r in rows]
    if not any(m.group("cursor") for m in matches) and not hinted:
        return None  # a numbered list in text, not a menu
    if not _only_hints_below(screen, last, bottom):
        return None
    options = _options(screen, rows, join=False)
    # The dialog's top edge; -1 when it is above the pane (row 0 is then the dialog's own).
    top = next((k for k in range(rows[0], -1, -1) if RULE.match(lines[k]) or TOP_EDGE.match(lines[k])), -1)
    more_below = between > 0 or any(SCROLL_DOWN.match(lines[k]) for k in range(last + 1, bottom + 1))
    return _Menu(tuple(options), tuple(rows), top, hidden_above=expected, more_below=more_below, hidden_between=between)


UNNUMBERED = re.compile(r"^\s*(?P<cursor>❯)?\s*(?P<label>(?:Yes|No)\b.*)$")


def _unnumbered_menu(screen: _Screen, bottom: int) -> _Menu | None:
    """A Yes/No menu drawn without numbers, the cursor on one, the dialog's hint under it.

    Claude 2.1.330 asks so when auto mode's check cannot run ("Auto mode
    can't check actions in this session, so this one needs your approval":
    ``❯ No`` first, then ``Yes``).  No digit picks an option there; its
    options have no key, and an answer moves the cursor (answering/keys.py).
    """
    lines = screen.lines
    hint = next((k for k in range(bottom, max(bottom - 3, -1), -1) if DIALOG_HINT.search(lines[k])), None)
    if hint is None:
        return None
    rows: list[int] = []
    for k in range(hint - 1, max(hint - 8, -1), -1):
        if not lines[k].strip():
            if rows:
                break
            continue
        if UNNUMBERED.match(lines[k]) is None:
            break
        rows.insert(0, k)
    matches = [_matched(UNNUMBERED, lines[k]) for k in rows]
    if len(rows) < 2 or sum(bool(m.group("cursor")) for m in matches) != 1:
        return None
    options = tuple(Option(key="", label=m.group("label").strip(), selected=bool(m.group("cursor"))) for m in matches)
    top = next((k for k in range(rows[0], -1, -1) if RULE.match(lines[k]) or TOP_EDGE.match(lines[k])), -1)
    return _Menu(options, tuple(rows), top)


def _last_option(screen: _Screen, bottom: int) -> int | None:
    """The row of the lowest option: within 12 rows of the bottom, not counting a preview box's rows."""
    looked = 0
    for i in range(bottom, -1, -1):
        if i in screen.boxed:
            continue
        if OPTION.match(screen.lines[i]):
            return i
        looked += 1
        if looked == 12:
            return None
    return None


def _preview_box_rows(lines: list[str]) -> frozenset[int]:
    """Rows that hold nothing but a whole square box: a question's option preview, beside or below its options.

    A preview may be far taller than the options it belongs to (a layout
    sketch, a code sample: the box runs on below the last option), and in a
    narrow pane Claude draws it under them.  Its rows are the preview's, not
    the dialog's text, so the search for the menu looks past them.  Only a
    closed box counts: a top edge, a left side in one column (a narrow pane
    may wrap the right side of a row onto a row of its own), a bottom edge,
    with nothing left of it on the rows that are skipped.  Square corners only:
    2.0 draws its whole dialog in a rounded box, which is the dialog itself.
    ``lines`` are the rows as captured, sides not yet taken off.
    """
    rows: set[int] = set()
    i = len(lines) - 1
    while i >= 0:
        end = BOX_BOTTOM.match(lines[i]) if "└" in lines[i] else None
        if end is None:
            i -= 1
            continue
        column = end.end("indent")
        top = None
        for k in range(i - 1, max(-1, i - 80), -1):
            line = lines[k]
            if BOX_TOP.match(line[column:]):  # an option may sit left of the top edge
                top = k
                break
            above = lines[k - 1] if k else ""
            wrapped_cut = above[column : column + 1] == "├" and not above.endswith("┤")  # the cut's words wrapped onto this row
            if (len(line) <= column or line[column] not in "│├┤") and not wrapped_cut:  # a side, a cut ("├─ ✂ ─ 24 lines hidden")
                break
        if top is None:
            i -= 1
            continue
        rows.update(r for r in range(top, i + 1) if not lines[r][:column].strip())
        i = top - 1
    return frozenset(rows)


def _only_hints_below(screen: _Screen, last: int, bottom: int) -> bool:
    """Under the last option: blanks, indented descriptions and wraps, rules, hints, a file path (a preview box's rows aside)."""
    tail = [i for i in range(last + 1, bottom + 1) if screen.lines[i].strip() and i not in screen.boxed]
    if len(tail) > 8:
        return False
    for i in tail:
        line = screen.lines[i]
        stripped = line.strip()
        if RULE.match(line) or DASHED_RULE.match(line) or line.startswith("   ") or SCROLL_DOWN.match(line) or SCROLL_UP.match(line):
            continue
        if HINT_WORDS.search(stripped) or stripped.startswith(("~/", "/", "…")) or stripped.endswith(".md"):
            continue
        if line.startswith(" ") and len(stripped) < 60 and not PROMPT_LINE.match(stripped):
            continue  # a short indented line: a wrapped hint or path
        return False
    return True


def _options(screen: _Screen, rows: tuple[int, ...] | list[int], *, join: bool) -> list[Option]:
    """The options at ``rows``; with ``join``, a label's continuation lines are joined to it.

    Permission dialogs wrap long labels ("Yes, and don't ask again for …")
    onto lines that line up with the label; questions and plans put a
    description there instead, which is not part of the label.
    """
    lines = screen.lines
    options: list[Option] = []
    for n, row in enumerate(rows):
        match = _matched(OPTION, lines[row])
        label = BESIDE.split(match.group("label"), maxsplit=1)[0]  # not the preview panel beside it
        checkbox = CHECKBOX.match(label)
        if checkbox:
            label = label[checkbox.end() :]
        ticked = None if checkbox is None else checkbox.group("mark") != " "
        label_col = match.start("label")
        stop = rows[n + 1] if n + 1 < len(rows) else min(len(lines), row + 6)
        for k in range(row + 1, stop if join else row + 1):
            cont = BESIDE.split(lines[k], maxsplit=1)[0]
            if not cont.strip() or RULE.match(cont):
                break
            indent = len(cont) - len(cont.lstrip())
            if indent != label_col or screen.is_dim(k) or checkbox:
                break
            label = f"{label} {cont.strip()}"
        options.append(Option(key=match.group("num"), label=label.strip(), selected=bool(match.group("cursor")), ticked=ticked))
    return options


def _title_rows(screen: _Screen, menu: _Menu) -> list[int]:
    """The rows that name a dialog: its first line(s) under the top edge, and the lines just above option 1."""
    lines = screen.lines
    first = [k for k in range(menu.top + 1, menu.rows[0]) if lines[k].strip() and not RULE.match(lines[k])][:2]
    above: list[int] = []
    for k in range(menu.rows[0] - 1, menu.top, -1):
        if not lines[k].strip() or SCROLL_UP.match(lines[k]):
            if above:
                break
            continue
        if DASHED_RULE.match(lines[k]) or RULE.match(lines[k]):
            break
        above.insert(0, k)
        if len(above) == 3:
            break
    return sorted(set(first) | set(above))


def _read_menu(screen: _Screen, bottom: int, menu: _Menu) -> Observation:
    """The menu, named; with what Claude scrolled out of view, when it did; and auto mode's word around a permission."""
    observation = _name_menu(screen, bottom, menu)
    if observation.state is AgentState.PERMISSION and observation.prompt is not None:
        observation = replace(observation, **_dialog_facts(screen, menu, observation.prompt))
    if observation.prompt is None or not (menu.hidden_above or menu.more_below):
        return observation
    said = f"{menu.hidden_above} option(s) above out of view" + (f", {menu.hidden_between} below" if menu.hidden_between else "")
    scrolled = Evidence("menu-scrolled", menu.rows[0], said + (", more below" if menu.more_below else ""))
    prompt = replace(observation.prompt, hidden_options=menu.hidden_above + menu.hidden_between, more_below=menu.more_below)
    return replace(observation, prompt=prompt, evidence=(*observation.evidence, scrolled))


def _name_menu(screen: _Screen, bottom: int, menu: _Menu) -> Observation:
    lines, rules = screen.lines, screen.rules
    titles = _title_rows(screen, menu)
    title_text = " ".join(lines[k].strip() for k in titles)
    dialog = " ".join(lines[k].strip() for k in range(max(menu.top, 0), bottom + 1))
    evidence = Evidence("numbered-menu", menu.rows[0], lines[menu.rows[0]])

    for rule, pattern in rules.startup:
        if pattern.search(dialog):
            row = next((k for k in range(max(menu.top, 0), bottom + 1) if pattern.search(lines[k])), menu.rows[0])
            title = "Do you trust the files in this folder?" if rule == "trust-dialog" else lines[row].strip()
            prompt = Prompt(kind="starting", title=title, options=menu.options, fingerprint=fingerprint("starting", rule, *_labels(menu)))
            return Observation(AgentState.STARTING, prompt=prompt, evidence=(Evidence(rule, row, lines[row]), evidence), confidence=0.9)

    question_title = next((k for k in titles if lines[k].strip().endswith("?")), titles[-1] if titles else menu.rows[0])
    tabs = next((k for k in range(max(menu.top, 0), menu.rows[0]) if TAB_LINE.search(lines[k])), None)
    if tabs is not None or any(rules.question_options.match(o.label) for o in menu.options):
        return _question(screen, menu, tabs, evidence)
    # A plan by its title, by its options ("Yes, clear context and auto-accept
    # edits", "Tell Claude what to change") or by the plan file under them: its
    # title may be only "Would you like to proceed?", which a permission asks too.
    if rules.plan_title.search(title_text) or any(rules.plan_options.search(o.label) for o in menu.options) or any(rules.plan_hint.search(lines[k]) for k in range(menu.rows[-1] + 1, bottom + 1)):
        prompt = Prompt(
            kind="plan",
            title=_joined_question(screen, titles) or "Would you like to proceed?",
            tool="ExitPlanMode",
            options=menu.options,
            fingerprint=fingerprint("plan", *_labels(menu)),
        )
        plan_row = titles[0] if titles else menu.rows[0]
        return Observation(AgentState.PLAN, prompt=prompt, evidence=(Evidence("plan-title", plan_row, lines[plan_row]), evidence), confidence=0.9)
    if rules.permission_title.search(title_text):
        return _permission(screen, menu, titles, evidence)
    # A menu nobody named: it still waits for you.
    title = lines[question_title].strip()
    prompt = Prompt(kind="menu", title=title, options=menu.options, fingerprint=fingerprint("menu", title, *_labels(menu)))
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=(Evidence("unnamed-menu", question_title, lines[question_title]), evidence), confidence=0.6)


def _labels(menu: _Menu) -> list[str]:
    return [o.label for o in menu.options]


def _joined_question(screen: _Screen, titles: list[int]) -> str:
    """The question the dialog asks: the title lines ending in "?", soft wraps joined."""
    rows = [screen.lines[k].strip() for k in titles]
    for end in range(len(rows) - 1, -1, -1):
        if rows[end].endswith("?"):
            start = end
            while start > 0 and not rows[start - 1].endswith(("?", ".", ":")) and titles[start] - titles[start - 1] == 1:
                start -= 1
            return " ".join(rows[start : end + 1])
    return ""


def _permission(screen: _Screen, menu: _Menu, titles: list[int], evidence: Evidence) -> Observation:
    lines, rules = screen.lines, screen.rules
    question_row = next((k for k in reversed(titles) if lines[k].strip().endswith("?")), titles[-1])
    title = _joined_question(screen, titles) or lines[question_row].strip()
    header_row = next((k for k in range(menu.top + 1, menu.rows[0]) if lines[k].strip()), None)
    header = lines[header_row].strip() if header_row is not None else ""
    header_tool = rules.tool_for_header(header)
    tool = header_tool
    call = _tool_call_above(lines, menu.top)
    if not tool and call is not None:
        tool = rules.tool_for_call(call[0])
    if not tool:  # the header scrolled out of view: the question may still name it ("make this edit to README.md?")
        tool = rules.tool_for_title(title)
    body = [k for k in range((header_row if header_row is not None else menu.top) + 1, question_row)]
    body = [k for k in body if k not in notice_rows(lines, body)]  # auto mode's pause says why it asks, not what
    named = _tool_in_body(screen, body) if not header_tool else None
    whole = False
    if named is not None:  # a generic "Tool use" header: the body names it (MCP tools, WebSearch)
        tool, detail = named
    else:
        if not tool:  # no header seen: every row above the question may be the dialog's
            body = list(range(max(menu.top + 1, 0), question_row))
            body = [k for k in body if k not in notice_rows(lines, body)]
        detail, whole = _permission_detail(screen, tool, header, title, body, menu.top)
    if not detail and call is not None:
        detail, whole = call[1], False  # shown to the person for what it is; never a call read whole
    tool, detail = _named_by_what_it_shows(tool, detail)
    found = [Evidence("permission-question", question_row, lines[question_row]), evidence]
    if header_row is not None and tool and header_tool:
        found.insert(0, Evidence("permission-header", header_row, lines[header_row]))
    options = tuple(_options(screen, menu.rows, join=True)) if menu.options[0].key else menu.options  # unnumbered: as found
    refuses = _escape_refuses(screen, menu) and not any(o.label.lower() == "no" or o.label.lower().startswith(("no,", "no ")) for o in options)
    prompt = Prompt(
        kind="permission",
        title=title,
        tool=tool,
        detail=detail,
        options=options,
        fingerprint=fingerprint("permission", tool, detail, title, *[o.label for o in options]),
        deny_key="Escape" if refuses else "",
        whole=whole and bool(detail) and bool(header_tool),
    )
    return Observation(AgentState.PERMISSION, prompt=prompt, evidence=tuple(found), confidence=0.9)


SEARCH_CALL = re.compile(r"^Search\((?P<args>.*)\)$")


def _named_by_what_it_shows(tool: str, detail: str) -> tuple[str, str]:
    """The tool a dialog names only by what it shows, not by its header or its question.

    * A search outside the work dir (measured on 2.0.31 and 2.1.30): the
      header says "Read file", the body ``Search(pattern: "*.conf", path:
      "/usr/share/doc")``.  Claude draws Glob and Grep both so, so the tool is
      ``Search`` (either), its arguments the detail; the hook's request names
      which, and matches it by those arguments (``hooks/calls.py``).
    * An edit to a notebook whose header scrolled away: "Do you want to make
      this edit to analysis.ipynb?" is asked for NotebookEdit as for Edit;
      Claude's Edit refuses ``.ipynb`` files, so the file says which.
    """
    search = SEARCH_CALL.match(detail.strip()) if tool in ("Read", "") else None
    if search:
        return "Search", search.group("args").strip()
    if tool == "Edit" and detail.strip().lower().endswith(".ipynb"):
        return "NotebookEdit", detail
    return tool, detail


def _tool_in_body(screen: _Screen, body: list[int]) -> tuple[str, str] | None:
    """(tool, detail) when a row of the dialog's body names the tool: an MCP tool's line, a web search's.

    An MCP tool is shown as its server and Claude's name for it
    ("ops — Deploy Tool (MCP)"); its arguments, on that line or the first
    row under it, are the detail.
    """
    lines, rules = screen.lines, screen.rules
    for n, k in enumerate(body):
        text = _unborder(lines[k])
        for pattern, tool in rules.permission_bodies:
            found = re.search(pattern, text, re.I)
            if found:
                return tool, found.group("detail").strip()
        mcp = rules.mcp_line.match(text)
        if mcp:
            args = mcp.group("args")
            if args is None:
                after = (_unborder(lines[j]) for j in body[n + 1 :] if not DASHED_RULE.match(lines[j]))
                args = next((row for row in after if row), "")
            return f"{mcp.group('server')} — {mcp.group('name').strip()} (MCP)", args
    return None


def _escape_refuses(screen: _Screen, menu: _Menu) -> bool:
    """The dialog's own hint says Esc leaves it ("Esc to exit", "Esc to cancel")."""
    bottom = screen.last_nonblank()
    return any(ESC_HINT.search(screen.lines[k]) for k in range(menu.rows[-1] + 1, bottom + 1))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _tool_call_above(lines: list[str], top: int) -> tuple[str, str] | None:
    """(name, argument) of the transcript's tool-call line just above a dialog."""
    for k in range(top - 1, max(-1, top - 14), -1):
        call = TOOL_CALL.match(lines[k])
        if call:
            return call.group("name"), call.group("arg").rstrip("…)")
    return None


def _unborder(line: str) -> str:
    """A row of a boxed block without its "│ " border, stripped."""
    return re.sub(r"^\s*│\s?", "", line).strip()


def _edges(screen: _Screen, body: list[int], top: int) -> list[int]:
    """The body's dashed rules that are the dialog's own edges, not text that looks like one.

    Claude draws its edges from the dialog's left edge to the pane's right
    one, as its top rule (measured on 2.0.31 - 2.1.332: every dashed edge
    has the top rule's indent and length); a one-line description of
    box-drawing dashes is text, indented past the edge.  With the top rule
    out of view, any dashed rule counts (as before).
    """
    lines = screen.lines
    edge = lines[top] if 0 <= top < len(lines) and RULE.match(lines[top]) else ""
    found = [k for k in body if DASHED_RULE.match(lines[k])]
    if not edge:
        return found
    return [k for k in found if _indent(lines[k]) == _indent(edge) and len(lines[k].strip()) == len(edge.strip())]


def _joined(screen: _Screen, rows: list[int], width: int) -> str:
    """A box's rows as one text: a row filled to the pane's edge ran on into the next (a word cut there, no blank between)."""
    out = ""
    for n, k in enumerate(rows):
        text = _unborder(screen.lines[k])
        if not text:
            continue
        filled = n > 0 and width > 0 and len(screen.captured[rows[n - 1]].rstrip()) >= width
        out = f"{out}{text}" if filled else f"{out} {text}" if out else text
    return out


def _boxed(screen: _Screen, body: list[int], top: int) -> str | None:
    """What a dialog boxes in its body, joined as it was wrapped, or None when it boxes nothing.

    2.1.300+ puts it between two dashed edges (a wrapped one behind "│ "),
    2.1.250 behind a "│ " border alone.
    """
    lines = screen.lines
    dashed = _edges(screen, body, top)
    rows = list(range(dashed[0] + 1, dashed[1])) if len(dashed) >= 2 else [k for k in body if lines[k].lstrip().startswith("│")]
    width = len(screen.captured[top].rstrip()) if 0 <= top < len(screen.captured) and RULE.match(lines[top]) else 0
    found = _joined(screen, rows, width)
    return found if len(dashed) >= 2 or found else None


def _permission_detail(screen: _Screen, tool: str, header: str, title: str, body: list[int], top: int) -> tuple[str, bool]:
    """What the permission is for (the command, the file or the URL, as the dialog shows it), and whether it is shown whole."""
    lines = screen.lines
    boxed = _boxed(screen, body, top)
    if not tool:
        # The header scrolled out of view: what the dialog boxes is still the
        # thing asked about (a command, its input).
        return boxed or "", False
    if tool == "Bash":
        if boxed is not None:
            return boxed.strip(), bool(boxed.strip())
        # Before 2.1.250: the command indented past the header, its description under it in grey.
        indent = _indent(lines[body[0] - 1]) if body else 0  # the header's (body[0] - 1 is the header row)
        rows = [k for k in body if lines[k].strip() and not screen.is_dim(k) and not DASHED_RULE.match(lines[k]) and _indent(lines[k]) > indent]
        text = " ".join(lines[k].strip() for k in rows).strip()
        return text, bool(text)
    if tool in ("Write", "Edit", "Read", "NotebookEdit"):
        first = next((lines[k].strip() for k in body if lines[k].strip() and not DASHED_RULE.match(lines[k]) and not RULE.match(lines[k])), "")
        in_title = FILE_IN_TITLE.search(title)
        if in_title and not any(c.isspace() for c in in_title.group("path")):
            path = in_title.group("path")
            return path, first in ("", path) or first.endswith("/" + path)
        rest = header.split(None, 2)[2:] if len(header.split()) > 2 else []
        if rest:
            return rest[0], False
        return first, False  # a name with blanks, or one the title does not give: shown, never read whole
    if tool == "WebFetch":
        for k in body:
            url = URL.search(lines[k])
            if url:
                return url.group(0), True
    return "", False


def _question(screen: _Screen, menu: _Menu, tab_row: int | None, evidence: Evidence) -> Observation:
    lines = screen.lines
    text_start = (tab_row + 1) if tab_row is not None else max(menu.top + 1, menu.rows[0] - 3)
    heading = next((k for k in range(text_start, menu.rows[0]) if lines[k].strip()), None)
    if tab_row is not None and heading is not None and screen.rules.question_review.match(lines[heading].strip()):
        return _review(screen, menu, tab_row, heading, evidence)
    if tab_row is None and menu.hidden_above:
        text_start = menu.rows[0]  # Claude scrolled the question out of view with the first options: say nothing rather than a description
    question = " ".join(lines[k].strip() for k in range(text_start, menu.rows[0]) if lines[k].strip() and not RULE.match(lines[k]) and not SCROLL_UP.match(lines[k]))
    multi = bool(CHECKBOX.match(_matched(OPTION, lines[menu.rows[0]]).group("label")))
    free = "" if multi else next((o.key for o in menu.options if screen.rules.question_free_text.match(o.label)), "")
    index, count = _question_tabs(screen, tab_row)
    found = [evidence]
    if tab_row is not None:
        found.insert(0, Evidence("question-tabs", tab_row, lines[tab_row]))
    prompt = Prompt(
        kind="question",
        title=question,
        tool="AskUserQuestion",
        options=menu.options,
        multi_select=multi,
        free_text=free,
        question_index=index,
        question_count=count,
        fingerprint=fingerprint("question", question, str(index), *_labels(menu)),
    )
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=tuple(found), confidence=0.9)


def _review(screen: _Screen, menu: _Menu, tab_row: int, heading: int, evidence: Evidence) -> Observation:
    """Claude's "Review your answers" page: every question with its answer ("● question" / "→ answer"), then Submit / Cancel.

    It is the question dialog's last tab: its options act on every answer at
    once, so it is a page of its own (``review``), never question N of N.
    """
    lines = screen.lines
    answers: list[list[str]] = []
    part = ""  # which half of the last pair the next wrapped row continues
    for k in range(heading + 1, menu.rows[0]):
        row = lines[k].strip()
        if not row:
            part = ""
        elif row.startswith("●"):
            answers.append([row[1:].strip(), ""])
            part = "question"
        elif row.startswith("→") and answers:
            answers[-1][1] = row[1:].strip()
            part = "answer"
        elif part and answers:  # a soft wrap of the line above
            index = 0 if part == "question" else 1
            answers[-1][index] = f"{answers[-1][index]} {row}"
    _, count = _question_tabs(screen, tab_row)
    prompt = Prompt(
        kind="question",
        title=lines[heading].strip(),
        tool="AskUserQuestion",
        options=menu.options,
        question_count=count,
        review=True,
        answers=tuple((q, a) for q, a in answers),
        fingerprint=fingerprint("review", *[f"{q}\x1e{a}" for q, a in answers], *_labels(menu)),
    )
    found = (Evidence("question-tabs", tab_row, lines[tab_row]), Evidence("question-review", heading, lines[heading]), evidence)
    return Observation(AgentState.QUESTION, prompt=prompt, evidence=found, confidence=0.9)


def _question_tabs(screen: _Screen, tab_row: int | None) -> tuple[int, int]:
    """(1-based index of the question showing, number of questions) from the tab line.

    The active tab is the one drawn on a background colour, which only the
    ANSI capture shows; without it, the first unanswered (☐) tab is assumed.
    """
    if tab_row is None:
        return 1, 1
    marks = re.findall(r"[☐☒]", screen.lines[tab_row])
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


# ---------------------------------------------------------------------------
# Start-up dialogs without numbers (2.1.300+ draws "❯ Yes / No" unnumbered)


def _read_startup_dialog(screen: _Screen, bottom: int) -> Observation | None:
    lines = screen.lines
    for rule, pattern in screen.rules.startup:
        row = next((i for i in range(bottom, max(-1, bottom - 24), -1) if pattern.search(lines[i])), None)
        if row is None:
            continue
        labels = []
        for i in range(max(0, row - 3), bottom + 1):
            label = lines[i].strip().removeprefix("❯").strip()
            if label.startswith(("Yes", "No")):
                labels.append(Option(key="", label=label, selected=lines[i].strip().startswith("❯")))
        if not labels:
            continue
        prompt = Prompt(
            kind="starting",
            title=lines[row].strip() if rule == "api-key-dialog" else "Do you trust the files in this folder?",
            options=tuple(labels),
            fingerprint=fingerprint("starting", rule, *[o.label for o in labels]),
        )
        return Observation(AgentState.STARTING, prompt=prompt, evidence=(Evidence(rule, row, lines[row]),), confidence=0.9)
    return None


__all__ = ["BASE", "classify", "classify_capture", "is_claude_command", "screen_version", "strip_sgr"]
