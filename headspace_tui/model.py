"""The vocabulary every part of headspace shares: states, prompts, observations.

Pure data, no I/O.  Detectors produce ``Observation`` values; the store keeps
one ``Agent`` per pane; the UI and the guarded actions read them.  Keeping
these small and frozen means an observation can be compared, cached, printed
as JSON and explained without knowing where it came from.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import Any

from .usage.model import Usage

# The family an agent is taken for when nothing says which (a record from before families, a rule naming none):
# headspace began with Claude Code. Named once, here, for every such default.
DEFAULT_FAMILY = "claude"


@dataclass(frozen=True)
class Tools:
    """One family's names for its tools, as the rules read them (each family's record carries its own: ``Family.tools``).

    Which tools run a shell line (their ``command`` is read word by word),
    which act on one file (their path is judged), and of those which only
    read it.  The rules are given each family's own names, never a union of
    all: a name one family gives a tool never makes another family's call a
    shell or file call, and a family with none (or a name no family has)
    has every call left to the person.
    """

    shell: frozenset[str] = frozenset()
    files: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()  # of ``files``: they only read the file they name

    @property
    def writes(self) -> frozenset[str]:
        """The file tools that write the file they name: only inside a rule's project."""
        return self.files - self.reads

    def __or__(self, other: Tools) -> Tools:
        return Tools(self.shell | other.shell, self.files | other.files, self.reads | other.reads)


NO_TOOLS = Tools()
Vocabulary = Mapping[str, Tools]  # each known family's tools by its name: the names a rule's ``agents`` may give


class AgentState(str, Enum):
    """What an agent is doing, as far as the user is concerned.

    ``input`` means the agent ended its turn asking the user something in
    plain text (no dialog): it waits for a typed answer.
    """

    STARTING = "starting"
    IDLE = "idle"
    WORKING = "working"
    PERMISSION = "permission"
    QUESTION = "question"
    PLAN = "plan"
    INPUT = "input"
    ERROR = "error"
    LIMITED = "limited"  # stopped by its rate limit (its error says so): it waits for the reset (usage/limits.py)
    EXITED = "exited"
    UNKNOWN = "unknown"

    @property
    def needs_you(self) -> bool:
        return self in NEEDS_YOU

    @property
    def is_menu(self) -> bool:
        """A numbered menu is on screen: digits are safe to type."""
        return self in (AgentState.PERMISSION, AgentState.QUESTION, AgentState.PLAN, AgentState.STARTING)


# How each state is drawn where colour may be missing: a glyph before its word (the table, the web page).
STATE_GLYPHS: dict[AgentState, str] = {
    AgentState.PERMISSION: "▲",
    AgentState.QUESTION: "?",
    AgentState.PLAN: "◆",
    AgentState.INPUT: "✎",
    AgentState.ERROR: "✖",
    AgentState.LIMITED: "◷",
    AgentState.WORKING: "●",
    AgentState.STARTING: "◌",
    AgentState.IDLE: "○",
    AgentState.EXITED: "■",
    AgentState.UNKNOWN: "·",
}

NEEDS_YOU = frozenset({AgentState.PERMISSION, AgentState.QUESTION, AgentState.PLAN, AgentState.INPUT, AgentState.ERROR, AgentState.LIMITED})

# Table order: agents that need you first, then working, idle, the rest, exited last.
STATE_RANK = {
    AgentState.PERMISSION: 0,
    AgentState.QUESTION: 0,
    AgentState.PLAN: 0,
    AgentState.INPUT: 0,
    AgentState.ERROR: 0,
    AgentState.LIMITED: 0,
    AgentState.WORKING: 1,
    AgentState.STARTING: 2,
    AgentState.IDLE: 3,
    AgentState.UNKNOWN: 4,
    AgentState.EXITED: 5,
}


@dataclass(frozen=True)
class Option:
    """One numbered choice of a menu, as drawn: ``key`` is what selects it."""

    key: str
    label: str
    selected: bool = False  # the ❯ cursor is on it
    # A multi-select question's checkbox: True "[✔]", False "[ ]"; None where the option has none.
    ticked: bool | None = None


@dataclass(frozen=True)
class Evidence:
    """Which rule matched which line: the reason a state was chosen."""

    rule: str
    line: int  # 0-based screen row, -1 when not from the screen
    text: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line >= 0 else "no line"
        return f"{self.rule} @ {where}: {self.text.strip()[:80]}"


@dataclass(frozen=True)
class Prompt:
    """What the agent is waiting for, in enough detail to answer it safely.

    ``fingerprint`` identifies this exact prompt on screen: an action re-reads
    the pane right before sending and refuses when it changed.
    """

    kind: str  # permission | question | plan | starting | input | menu (a numbered menu nobody named)
    title: str = ""  # "Do you want to proceed?" or the question text
    tool: str = ""  # Bash, Write, Edit, WebFetch, ExitPlanMode ...
    detail: str = ""  # the command, file or URL
    options: tuple[Option, ...] = ()
    multi_select: bool = False
    question_index: int = 0  # 1-based, when several questions are asked at once
    question_count: int = 0
    fingerprint: str = ""
    # The key that refuses, when no option says "No" (2.0's permission dialogs:
    # "Type here to tell Claude what to do differently", and "Esc to exit").
    deny_key: str = ""
    # A dialog taller than the pane, scrolled by Claude itself: how many options
    # are out of view (above the first one in ``options``, or between two of
    # them, under a "↓" row), and whether it says there is more below.  ``options`` holds only what is on screen (with
    # their real numbers), so a key is never sent for an option nobody saw.
    hidden_options: int = 0
    more_below: bool = False
    # A question's own free-text option ("Type something."), empty and ready: its key.
    # "" when the question has none, is multi-select, or the field already holds text.
    free_text: str = ""
    # Claude's "Review your answers" page, the last tab of a question dialog: its
    # options submit or cancel every answer, listed in ``answers`` (question, answer).
    review: bool = False
    answers: tuple[tuple[str, str], ...] = ()
    # The dialog shows its call whole: ``detail`` was read from the dialog's own box (or, for a file, its one
    # path), not from a line above it nor guessed from a title.  Rules answer by keys only such a dialog.
    whole: bool = False

    @property
    def ticked(self) -> tuple[str, ...]:
        """The keys of a multi-select question's ticked options, in screen order."""
        return tuple(o.key for o in self.options if o.ticked)

    @property
    def last_page(self) -> bool:
        """The question on screen is the dialog's last: the next page is Claude's review."""
        return (self.question_index or 1) >= (self.question_count or 1)

    def follows(self, before: Prompt) -> bool:
        """Is this the page after ``before`` in the same question dialog: its next question, or (after its last) Claude's review?

        The dialog goes on there: an answer that led here is not the end of
        it, and an inbox stays on the agent.
        """
        if self.kind != "question" or before.kind != "question" or before.review or not self.options:
            return False
        if self.review:
            return before.last_page and (before.question_count or 1) == (self.question_count or 1)
        return self.question_count == before.question_count and self.question_index == before.question_index + 1

    def option_for(self, label_prefix: str) -> Option | None:
        """The first option whose label starts with ``label_prefix`` (case-insensitive)."""
        wanted = label_prefix.lower()
        for option in self.options:
            if option.label.lower().startswith(wanted):
                return option
        return None

    # Which option approves (``y``) is a rule of its own, never to widen permissions: detect/approval.py.
    @property
    def no(self) -> Option | None:
        """The "No" (or "Deny", opencode's "Reject") choice, found by its label (never by its position)."""
        for option in self.options:
            label = option.label.lower()
            if label in ("no", "deny", "reject") or label.startswith(("no,", "no ", "no (", "deny ", "deny,", "reject ")):
                return option
        return None


# The permission modes an agent can run in, as headspace names them (every family):
# manual asks before each call that needs it; auto lets a classifier decide (Claude's
# default since 2.1.283); accept-edits runs file edits unasked; plan only plans;
# bypass asks nothing.  "" when nothing has said which.  Read from screens, hooks and command lines:
# detect/claude/auto_mode.py, detect/modes.py.
# dont-ask refuses what no rule allows, without asking; build is opencode's default agent (it asks as its config says).
MODES = ("manual", "auto", "accept-edits", "plan", "bypass", "dont-ask", "build")
# Claude's own names for them (the hook's ``permission_mode``, ``--permission-mode``).
CLAUDE_MODES = {"default": "manual", "auto": "auto", "acceptEdits": "accept-edits", "plan": "plan", "bypassPermissions": "bypass", "dontAsk": "dont-ask"}


@dataclass(frozen=True)
class Blocked:
    """A call the agent wanted to make and its permission mode's check refused (Claude's auto mode): the user never saw it asked.

    ``source`` says who told: Claude's ``PermissionDenied`` hook or its
    transcript (the exact call, with its id ``call``), or the note Claude draws
    on screen (its command as drawn, maybe cut; no id).
    """

    tool: str
    detail: str  # the command, file or URL
    reason: str = ""  # the classifier's words: "Sends local secrets to an outside host"
    at: float = 0.0
    source: str = "screen"  # screen | hook | transcript
    call: str = ""  # the agent's id for the call (Claude's tool_use_id; "" from the screen)

    def to_json(self) -> dict:
        return {"tool": self.tool or None, "detail": self.detail, "reason": self.reason or None, "at": self.at or None, "source": self.source, "call": self.call or None}

    @classmethod
    def from_json(cls, data: object) -> Blocked:
        """A block as ``to_json`` (or the event log) wrote it; a field of the wrong type reads as empty."""
        d = data if isinstance(data, dict) else {}
        text = {k: d[k] if isinstance(d.get(k), str) else "" for k in ("tool", "detail", "reason", "source", "call")}
        at = d.get("at") if isinstance(d.get("at"), (int, float)) and not isinstance(d.get("at"), bool) else 0.0
        return cls(text["tool"], text["detail"], text["reason"], float(at or 0.0), text["source"] or "screen", text["call"])

    def agrees(self, other: Blocked) -> bool:
        """Both name the same reason, one of them maybe cut at a pane's edge ("Sends data out to …"); never two empty ones."""
        a, b = self.reason.rstrip("…").rstrip(), other.reason.rstrip("…").rstrip()
        return bool(a and b) and (a.startswith(b) or b.startswith(a))

    def words(self, limit: int = 0) -> str:
        """``blocked: curl -X POST https://… — Sends data out``: the call (cut to ``limit`` when given) and the check's reason."""
        call = f"{self.tool}: {self.detail}" if self.tool and self.detail and self.tool != "Bash" else self.detail or self.tool or "a call"
        if limit and len(call) > limit:
            call = call[: limit - 1] + "…"
        return f"blocked: {call} — {self.reason}" if self.reason else f"blocked: {call}"


# Observation ids: from this process's start time in microseconds, so a copy kept across a service's restart names no new reading.
_OBSERVATION_IDS = itertools.count(time.time_ns() // 1000)


def _observation_id() -> int:
    return next(_OBSERVATION_IDS)


@dataclass(frozen=True)
class Observation:
    """One reading of one agent from one source."""

    state: AgentState
    prompt: Prompt | None = None
    evidence: tuple[Evidence, ...] = ()
    source: str = "screen"  # screen | status-file | process | hook | transcript
    confidence: float = 0.5
    error: str = ""  # the error message, for state error
    retrying: bool = False
    exit_status: int | None = None
    # Which appearance of ``prompt`` this is ("<fingerprint>~<appearance>", "" with no prompt):
    # given by the store (service/records/appearances.py), carried by every answer, so an answer
    # drawn for one request never lands on the next one with the same words.
    request: str = ""
    mode: str = ""  # the permission mode the screen shows (MODES; "" when it shows none)
    # Calls the permission mode's check refused, as drawn since the user's last prompt (Claude's auto mode).
    blocked: tuple[Blocked, ...] = ()
    # Which reading this is: new for each observation made, and again each time a store keeps one (``stamped``).
    # A copy (api/codec.py's, a front end's) keeps it, so the answerer's guard ("waiting to see what the last
    # key did") knows the reading an answer went to by its id, in every process, never by the object's identity.
    # Not part of equality: two readings alike are equal, and still two readings.
    id: int = field(default_factory=_observation_id, compare=False)

    @property
    def tool(self) -> str:
        return self.prompt.tool if self.prompt else ""

    @property
    def detail(self) -> str:
        """The command, file or URL the prompt asks about ("" when none is shown)."""
        return self.prompt.detail if self.prompt else ""

    @property
    def question(self) -> str:
        if self.prompt and self.prompt.kind in ("question", "input"):
            return self.prompt.title
        return ""

    @property
    def option_labels(self) -> list[str]:
        return [o.label for o in self.prompt.options] if self.prompt else []

    def stamped(self) -> Observation:
        """This reading as a store keeps it: the same, with an id of its own (a ``replace`` copies the id)."""
        return replace(self, id=_observation_id())

    def to_json(self) -> dict:
        """The stable JSON shape used by ``headspace classify --json`` and ``status --json``."""
        return {
            "state": self.state.value,
            "tool": self.tool or None,
            "detail": self.detail or None,
            "options": self.option_labels,
            "question": self.question or None,
            "multi_select": bool(self.prompt and self.prompt.multi_select),
            "ticked": list(self.prompt.ticked) if self.prompt else [],
            "review": bool(self.prompt and self.prompt.review),
            "error": self.error or None,
            "retrying": self.retrying,
            "exit_status": self.exit_status,
            "mode": self.mode or None,
            "blocked": [b.to_json() for b in self.blocked],
            "source": self.source,
            "evidence": [asdict(e) for e in self.evidence],
        }


# A pane's written address, as a front end may send it: ``%3``, or ``%3@box`` (a host's name as the config makes it).
# The one pattern every route checks a pane against (the facade's, the command line's, the web page's).
PANE_ADDRESS = re.compile(r"%\d{1,9}(@[A-Za-z0-9._-]{1,64})?")


LOCAL_HOST = "local"  # the host of a pane on this machine's tmux (a remote one is named by its config)


@dataclass(frozen=True)
class PaneAddress:
    """Which pane, on which machine: tmux's ``%N`` and the host it lives on.

    Written ``%3`` for the local server, ``%3@box`` for host ``box``, and
    ``@box`` (no pane) for the row that stands for a host never reached.
    Rows, keys and the fleet's routing use the written form; tmux only ever
    sees ``pane`` (``tmux_id``), so no two hosts' ``%3`` are one.
    """

    pane: str  # "%N", or "" for a host's placeholder
    host: str = "local"

    @classmethod
    def parse(cls, text: str) -> PaneAddress:
        pane, at, host = text.partition("@")
        return cls(pane, host if at else "local")

    def __str__(self) -> str:
        return self.pane if self.host == "local" else f"{self.pane}@{self.host}"

    @property
    def placeholder(self) -> bool:
        return not self.pane


class Channel(str, Enum):
    """How an answer reached an agent, or can: Claude's answer hook, keys typed by headspace, the person at the pane.

    ``(str, Enum)``, not 3.11's ``StrEnum``: this module also runs in the
    probe on remote hosts, which need only Python 3.9 (remote/bundle.py).
    """

    NONE = ""  # no answer, or keys only (the row's "channel" when no hook holds the dialog)
    HOOK = "hook"
    KEYS = "keys"
    PANE = "pane"

    def __str__(self) -> str:
        return self.value


@dataclass
class Agent:
    """One tmux pane that runs (or ran) a coding agent (Claude Code, Codex, ...), as the table shows it."""

    pane_id: str  # %N: the only address actions use
    target: str  # session:window.pane, for people
    session: str
    cwd: str = ""
    name: str = ""  # Claude's session name, when known
    pid: int = 0  # the pane's shell or process
    agent_pid: int = 0  # the agent's process, whatever its family
    family: str = DEFAULT_FAMILY  # which kind of agent: detect/families.py's names (claude, codex, gemini, opencode)
    observation: Observation = field(default_factory=lambda: Observation(AgentState.UNKNOWN))
    since: float = 0.0  # when the current state began (time.time()): the one claim every time on screen reads (detect/clock.py)
    since_source: str = "sight"  # who says so: status-file, claude-agents, hook, transcript, journal, sight
    prompt_since: float = 0.0  # when the prompt now on screen was first seen
    delivery: str = ""  # "", "sent", "not delivered: ..."
    # How the last prompt was answered ("approved via hook: Bash: make"), and
    # "hook" while the dialog on screen can be answered through the answer hook.
    answered: str = ""
    channel: Channel = Channel.NONE
    hook_until: float = 0.0  # while ``channel`` is the hook: when that hook stops waiting (time.time(); 0.0 unknown), keys answer after
    command: str = ""  # the user's current (or last) command, from the transcript
    outcome: str = ""  # the last outcome: "tests passed: 42 passed", "committed: abc1234 ..."
    agent_version: str = ""  # the agent's version, from its install (any family); "" when unknown
    key: str = ""  # who this agent is for history: host, server, pane and process (pane_watch.agent_key)
    host: str = "local"  # which machine: "local", or a remote host's name from the config / --host
    # Why this row cannot be read now ("" while it can: its host answers), and
    # since when: a dropped SSH link leaves the last reading on screen, dimmed.
    offline: str = ""
    offline_since: float = 0.0
    # The permission mode it runs in (MODES; "" unknown), from its hooks or its screen's footer,
    # kept while a dialog hides the footer.
    mode: str = ""
    # Calls its permission mode's check refused, oldest first (the last few), and when its
    # current turn began: the row marks those of this turn.
    blocks: tuple[Blocked, ...] = ()
    turn_since: float = 0.0
    change: str = ""  # what its work tree changed this turn, "+12 −3 · 2 files" ("" for nothing, or not known): service/watching/work_changes.py
    # The change the file edit on screen would make, from the exact call Claude's hook holds (``Diff.to_dict()``
    # of changes/proposed.py, made where the agent runs: answering/desk.py); None when no hook holds a file edit.
    # Plain data, so every front end (the preview, ``e``, the phone's card) and the wire take it as it is.
    proposed: dict[str, Any] | None = None
    # Its tokens, context and estimated cost, from its own files (service/records/usage_tally.py); None: nothing read yet.
    usage: Usage | None = None
    # When the rate limit that stopped it resets (epoch seconds), as its words said when it was first read
    # LIMITED; 0.0 when they named no time, or it is not limited.
    limited_until: float = 0.0

    @property
    def limit_reset(self) -> float | None:
        """When the rate limit that stopped it resets (0.0: no time named); None when it is not ``limited``."""
        return self.limited_until if self.state is AgentState.LIMITED else None

    @property
    def blocked_this_turn(self) -> tuple[Blocked, ...]:
        """The calls its mode's check blocked since its user's last prompt (all it knows of, when no prompt was seen)."""
        return tuple(b for b in self.blocks if b.at >= self.turn_since)

    @property
    def placeholder(self) -> bool:
        """A row that stands for a host we never reached, not for an agent."""
        return self.pane_id.startswith("@")

    @property
    def state(self) -> AgentState:
        return self.observation.state


def sort_key(agent: Agent) -> tuple:
    """Agents that need you first, longest-waiting first; then working, idle, exited."""
    rank = STATE_RANK[agent.state]
    return (rank, agent.since if rank == 0 else 0.0, agent.target)
