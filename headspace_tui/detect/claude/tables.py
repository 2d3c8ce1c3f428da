"""What differs between Claude Code versions, as data: one small table per version family.

The screen reader (``screen.py``) finds things by their *shape*: an input box
is a prompt line between two rules near the bottom, a live menu is a run of
numbered options with a cursor and nothing but hints below it.  It *names*
and *reads* them with the words in a ``Rules`` table: which header means
which tool, which footer hint means a turn is running, how a retry notice or
a given-up error is worded.

``BASE`` holds the structural defaults, matched by meaning (case-insensitive,
wherever the status rows put them): it is what an unknown, newer Claude Code
gets, and on its own it must stay right on at least 95% of every recorded
version's screens (``tests/unit/test_generalisation.py`` measures it).  A
version family's table adds what that family draws exactly.

Adding a version: record it (``python -m tests.harness.record --version X``),
run the corpus tests, and only if they fail add a table here with ``since=X``
for what it draws differently (docs/testing.md: "A new Claude Code version").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE)


@dataclass(frozen=True)
class Rules:
    """The words of one version family; the shapes are in ``screen.py``."""

    family: str
    since: str  # the first version this table describes ("0" for BASE)
    # Glyphs the input box's prompt line starts with.  Structure accepts any
    # symbol there; these are the ones this family is known to draw.
    prompt_glyphs: tuple[str, ...] = ()
    # A permission dialog's header (the first line under its top rule) -> tool.
    permission_headers: tuple[tuple[str, str], ...] = (
        ("bash command", "Bash"),
        ("create file", "Write"),
        ("edit file", "Edit"),
        ("edit notebook", "NotebookEdit"),
        ("notebook edit", "NotebookEdit"),
        ("read file", "Read"),
        ("web search", "WebSearch"),
        ("fetch", "WebFetch"),
    )
    # A permission's question, when its header is out of view -> tool.
    permission_questions: tuple[tuple[str, str], ...] = (
        (r"\bmake this edit to\b", "Edit"),
        (r"\bcreate \S+\?", "Write"),
        (r"\bfetch this content\b", "WebFetch"),
    )
    # A line of the dialog's body that names the tool and what it is for.
    permission_bodies: tuple[tuple[str, str], ...] = ((r"\bClaude wants to search the web for:\s*(?P<detail>\S.*)", "WebSearch"),)
    # An MCP tool's line: "ops — Deploy Tool: (MCP)" (2.1.250+), "ops - deploy(target: "x") (MCP)" (2.1.160).
    mcp_line: re.Pattern[str] = field(default_factory=lambda: re.compile(r"^\s*(?P<server>[\w.-]+) [—-] (?P<name>[^(:]+?)(?::\s*|\((?P<args>.*)\)\s*)\(MCP\)\s*$"))
    # The transcript's tool-call line ("● Update(README.md)") -> tool.
    tool_call_names: tuple[tuple[str, str], ...] = (("Update", "Edit"), ("Fetch", "WebFetch"), ("Create", "Write"))
    # A turn is running: a hint in the footer or in the spinner's row.
    # (2.1.250+: a turn that handed its work to a background agent waits for it: "✻ Waiting for 1 background agent to finish".)
    working: re.Pattern[str] = field(default_factory=lambda: _rx(r"\besc to interrupt\b", r"\bctrl\+c to interrupt\b", r"\bwaiting for \d+ background agents? to finish\b"))
    # Claude says it will try again: "retrying in 3s · attempt 3/10", "Retrying
    # in 17 seconds… (attempt 6/10)", "retrying… · attempt 5/10", "will retry in
    # 4m 11s", and auto mode's "Auto mode check unavailable · next try in 4s ·
    # attempt 5/10".  Never "Will retry on next startup" (a plugin notice).
    retry: re.Pattern[str] = field(default_factory=lambda: _rx(r"\bretrying\b[^\n]*?\battempt\s+\d+\s*/\s*\d+", r"\bretrying in \d", r"\bwill retry in \d", r"\bnext try in \d"))
    # The head of a block that reports an error Claude has given up on.
    given_up: re.Pattern[str] = field(
        default_factory=lambda: _rx(
            r"API Error\b",
            r"Please run /login\b",
            r"Invalid API key\b",
            r"Credit balance is too low\b",
            r"[\w-]+ limit reached\b",
            r"Request timed out\b",
            r"OAuth token (?:has )?(?:expired|revoked)\b",
            # 2.1.331: auto mode's check gave no verdict ten times: "Auto mode is unavailable — … so Claude stopped."
            r"Auto mode is unavailable\b",
        )
    )
    # The user stopped the turn with Esc: "⎿  Interrupted · What should Claude do instead?"
    interrupted: re.Pattern[str] = field(default_factory=lambda: _rx(r"^Interrupted\b"))
    # Known start-up dialogs (the only screens that are ``starting`` once Claude drew anything).
    startup: tuple[tuple[str, re.Pattern[str]], ...] = field(
        default_factory=lambda: (
            ("trust-dialog", _rx(r"\btrust (?:this folder|the files in this folder)\b")),
            ("api-key-dialog", _rx(r"\buse this API key\b")),
        )
    )
    # Claude's own banner: drawn before anything else.
    banner: re.Pattern[str] = field(default_factory=lambda: _rx(r"\bClaude Code v\d+\.\d+", r"Welcome to Claude Code"))
    # Naming a live menu by the words of its title lines.
    plan_title: re.Pattern[str] = field(default_factory=lambda: _rx(r"\bplan\b", r"\bready to code\b"))
    # A plan-exit menu's own options, whatever its title says.
    plan_options: re.Pattern[str] = field(
        default_factory=lambda: _rx(
            r"^yes,? (?:and )?(?:clear context|auto-accept edits|use auto mode|manually approve edits)\b",
            r"^(?:no, )?keep planning\b",
            r"\btell claude what to change\b",
        )
    )
    # The plan file named under a plan-exit menu ("ctrl-g to edit in … · .claude/plans/x.md").
    plan_hint: re.Pattern[str] = field(default_factory=lambda: _rx(r"\.claude/plans/\S+\.md\b"))
    # "Do you want to proceed?", "Allow …?", and Claude in Chrome's "Claude in Chrome wants to navigate on …".
    permission_title: re.Pattern[str] = field(default_factory=lambda: _rx(r"\bdo you want\b", r"\ballow\b", r"\bproceed\b", r"\bapprove\b", r"\bwants to\b"))
    question_options: re.Pattern[str] = field(default_factory=lambda: _rx(r"^type something\b", r"^chat about this\b", r"^other\b"))
    # A single-choice question's own free-text field, while it is empty: the option drawn
    # "Type something." (every version recorded, 2.0.31 to 2.1.330).  Once text is typed
    # into it the option shows that text instead; a multi-select question draws
    # "[ ] Type something", a checkbox the digit only ticks.
    question_free_text: re.Pattern[str] = field(default_factory=lambda: _rx(r"^type something\.$"))
    # The last tab of a question dialog (→ from the last question): Claude lists every
    # answer and offers "1. Submit answers / 2. Cancel" (2.0.31 to 2.1.330).
    question_review: re.Pattern[str] = field(default_factory=lambda: _rx(r"^review your answers\b"))

    def tool_for_header(self, header: str) -> str:
        lowered = header.strip().lower()
        for prefix, tool in self.permission_headers:
            if lowered == prefix or lowered.startswith(prefix + " "):
                return tool
        return ""

    def tool_for_title(self, title: str) -> str:
        return next((tool for pattern, tool in self.permission_questions if re.search(pattern, title, re.I)), "")

    def tool_for_call(self, name: str) -> str:
        return dict(self.tool_call_names).get(name, name)


# Structure and meaning only: what an unknown version is read with.
BASE = Rules(family="structural", since="0")

# Each family: what it draws exactly, on top of BASE.  Measured on the
# recorded corpus of that version (snapshots/panes/claude-<version>/).
TABLES: tuple[Rules, ...] = (
    # 2.0.x: ">" input box in a boxed welcome; permission dialogs offer
    # "Type here to tell Claude what to do differently" instead of "No";
    # retries as "Retrying in 17 seconds… (attempt 6/10)" under the prompt.
    replace(BASE, family="2.0", since="2.0.0", prompt_glyphs=(">",)),
    # 2.1.30: "❯" input box, still the boxed welcome; retry notices as in 2.0.
    replace(BASE, family="2.1.30", since="2.1.0", prompt_glyphs=("❯",)),
    # 2.1.160: the full-screen renderer exists (opt-in); "Retrying in 3s ·
    # attempt 3/10" under the prompt; given-up errors as "Please run /login ·
    # API Error: 401 …".
    replace(BASE, family="2.1.160", since="2.1.150", prompt_glyphs=("❯",)),
    # 2.1.330: alternate screen by default; retries in the spinner row
    # ("✻ 429 rate limit error · retrying in 3s · attempt 3/10"); a Bash
    # command shown in a dashed box; given-up errors leave a grey hint in the
    # input box ("Resend your message to try again").
    replace(BASE, family="2.1.330", since="2.1.300", prompt_glyphs=("❯",)),
)


def version_key(version: str) -> tuple[int, ...]:
    """(2, 1, 330) for "2.1.330"; unparsable parts are dropped.

    A version comes from a screen or a file: a part is at most nine digits
    (a banner reading "v1111…" with thousands of digits is not a version,
    and Python refuses to convert such a number).
    """
    return tuple(int(part) for part in re.findall(r"\d{1,9}", version[:64])[:3])


@lru_cache(maxsize=128)
def rules_for(version: str | None, *, exclude: str | None = None) -> Rules:
    """The table of the family ``version`` belongs to: the newest whose ``since`` is not above it.

    An unknown version (None) gets the newest table: it is what a new
    install runs.  ``exclude`` leaves one family out, to measure how a
    version would be read if its table did not exist.
    """
    tables = [t for t in TABLES if t.family != exclude]
    if not tables:
        return BASE
    if not version:
        return max(tables, key=lambda t: version_key(t.since))
    key = version_key(version)
    older = [t for t in tables if version_key(t.since) <= key]
    if older:
        return max(older, key=lambda t: version_key(t.since))
    return min(tables, key=lambda t: version_key(t.since))  # older than every table: the nearest


def family_of(version: str) -> str:
    return rules_for(version).family
