"""A tool call Claude handed to headspace through the answer hook, and whether a row shows it.

The answer hook (``program.py answer N``) sends Claude's PermissionRequest
payload: the tool and its exact input.  headspace answers through the hook
only when the agent's screen shows *that* call's dialog, the one the user
looked at: same pane and Claude process, same tool, and the command, file or
question on screen is the one in the request.  Anything less (the dialog not
drawn yet, a detail the screen does not show, two different requests that
would both fit) is no match, and the guarded keystrokes answer instead.

Measured against the real Claude Code 2.1.330 (tests/e2e/test_answer_channel.py):

* Claude draws its dialog while a synchronous PermissionRequest hook runs
  (hook started +0.34 s after Enter, dialog on screen +0.77 s) and the dialog
  takes keys meanwhile: whichever answers first wins.
* The hook answering ``allow`` closes the dialog and runs the tool (0.2 s from
  decision to tool result at the API); the transcript line says "Allowed by
  PermissionRequest hook".  ``deny`` with a message: the tool result is an
  error carrying the message, and Claude's turn goes on; with ``interrupt``
  the turn stops at "Interrupted · What should Claude do instead?", as
  after "No" in the dialog.
* Answered in the pane first: the hook is not stopped; its later decision is
  ignored (the tool ran, nothing else changed).
* Past the hook's ``timeout`` Claude sends SIGTERM and leaves its dialog up,
  still answerable.
* AskUserQuestion comes as a PermissionRequest with the questions, labels
  and ``multiSelect``; ``allow`` with ``updatedInput.answers`` {question:
  label} answers it ("Your questions have been answered: ...").  A
  multi-select question takes its labels joined by ", " ("Auth, Search",
  what Claude's own dialog sends, on 2.1.250, 2.1.330 and 2.1.332 alike); a
  list of labels is accepted too, but joined by the version (2.1.330: ", ",
  2.1.250: ","), so the string it is.  Questions left out of ``answers``
  are sent unanswered, so a dialog of several questions is never answered
  here (measured, issue 37).
* ExitPlanMode comes with ``plan`` and ``planFilePath``; ``deny`` works but
  ``allow`` is ignored (the plan dialog stays): plans are not answered here.
* A blocking *PreToolUse* hook holds the dialog back until it returns, so the
  channel uses PermissionRequest only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..detect.approval import approval
from ..model import DEFAULT_FAMILY, AgentState, Observation, Prompt
from .spool import tool_detail

QUESTION_TOOL = "AskUserQuestion"
# Tools whose hook answer 2.1.330 does not honour (allow is ignored): never through the channel.
NOT_ANSWERABLE = frozenset({"ExitPlanMode"})
FILE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "Read", "NotebookEdit"})


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _held_family(name: object) -> str:
    """The family a record names: only a hook that runs away from its pane names one (hooks/program.py); "" for none, or not a plain word.

    Whether that family's hook is one headspace holds for its rules
    (``Family.held_hook``) is the answer desk's to say: this module is also
    the remote probe's, which carries no family registry.
    """
    return name if isinstance(name, str) and name.isascii() and name.isidentifier() and len(name) <= 32 else ""


def _squeeze(text: str) -> str:
    """Whitespace folded: the screen wraps a long command and joins its rows with spaces."""
    return " ".join(text.split())


@dataclass(frozen=True)
class PendingCall:
    """One PermissionRequest waiting in the answer channel."""

    id: int
    pane_id: str  # $TMUX_PANE of the Claude that asked
    pid: int  # Claude's pid (the hook's parent, or the shell's parent)
    session_id: str
    tool_name: str
    tool_input: dict[str, Any] = field(hash=False, compare=False)
    cwd: str = ""
    arrived: float = 0.0  # time.time() when headspace got it
    # The family of a hook headspace holds for its rules (``Family.held_hook``): Codex's runs away from its pane, with
    # no pane or pid of its own (``pane_id`` "" until the desk finds the agent by ``transcript``, its conversation's
    # record); Qwen Code's and Copilot CLI's run in the agent's pane and name it and the agent's process.
    family: str = DEFAULT_FAMILY
    transcript: str = ""
    # When the hook stops waiting for an answer (time.time(): its start and its wait, as it says them; 0.0 unknown).
    # Claude's dialog stays after it, answered by keys: the card counts down to the hook's end, not the request's.
    until: float = 0.0

    @classmethod
    def from_payload(cls, call_id: int, record: Any, arrived: float) -> PendingCall | None:
        """The call in a hook's record, or None when it is not a PermissionRequest headspace can answer."""
        if not isinstance(record, dict) or record.get("hook_event_name") != "PermissionRequest":
            return None
        tool_input = record.get("tool_input")
        pid = record.get("pid")
        held = _held_family(record.get("family"))
        family = held or DEFAULT_FAMILY
        call = cls(
            id=call_id,
            pane_id=_text(record, "tmux_pane"),
            pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else 0,
            session_id=_text(record, "session_id"),
            tool_name=_text(record, "tool_name"),
            tool_input=dict(tool_input) if isinstance(tool_input, dict) else {},
            cwd=_text(record, "cwd"),
            arrived=arrived,
            family=family,
            transcript=_text(record, "transcript_path"),
            until=_until(record),
        )
        if held:
            # Its pane is its own (a hook run in the agent's pane, with the agent's pid), or found by its conversation's
            # record (one run away from it); a call with neither is nobody's.
            in_pane = call.pane_id.startswith("%") and call.pid > 0
            return call if call.tool_name and (in_pane or (call.transcript and not call.pane_id)) else None
        if not call.pane_id.startswith("%") or not call.tool_name or call.tool_name in NOT_ANSWERABLE:
            return None
        return call

    @property
    def detail(self) -> str:
        """The command, file or URL the call acts on."""
        return tool_detail(self.tool_input)

    @property
    def exact_input(self) -> str:
        """The tool input as JSON, keys sorted: what "identical" means, and what the audit keeps."""
        return json.dumps(self.tool_input, sort_keys=True, ensure_ascii=False)

    def describe(self) -> str:
        if self.tool_name == QUESTION_TOOL:
            return f"{QUESTION_TOOL}: {' / '.join(q for q, _ in self.questions())}"
        return f"{self.tool_name}: {self.detail}" if self.detail else self.tool_name

    def questions(self) -> list[tuple[str, list[str]]]:
        """(question, option labels) for each question an AskUserQuestion call asks."""
        found = []
        for item in self.tool_input.get("questions") or ():
            if isinstance(item, dict):
                labels = [o.get("label") for o in item.get("options") or () if isinstance(o, dict)]
                found.append((_text(item, "question"), [label for label in labels if isinstance(label, str)]))
        return found

    @property
    def one_multi_select(self) -> bool:
        """One question whose answer is several labels: answered through the hook once its boxes are chosen."""
        items = self.tool_input.get("questions")
        return isinstance(items, list) and len(items) == 1 and isinstance(items[0], dict) and items[0].get("multiSelect") is True

    @property
    def single_choice(self) -> bool:
        """One question, one answer: the only kind answered by label through the hook."""
        items = self.tool_input.get("questions")
        return isinstance(items, list) and len(items) == 1 and isinstance(items[0], dict) and not items[0].get("multiSelect")


def why_not(call: PendingCall, observation: Observation, agent_pid: int = 0) -> str:
    """Why ``call`` is not the prompt ``observation`` shows ("" when it is)."""
    if agent_pid and call.pid and call.pid != agent_pid:
        return "another Claude process asked"
    prompt = observation.prompt
    if prompt is None or not prompt.options or not all(o.key for o in prompt.options):
        # A question known from a hook has its labels but no keys: Claude has not drawn it yet.
        return "its dialog is not on screen"
    if call.tool_name == QUESTION_TOOL:
        if observation.state is not AgentState.QUESTION or prompt.kind != "question":
            return "the screen shows no question"
        return _question_mismatch(call, prompt)
    if observation.state is not AgentState.PERMISSION or prompt.kind != "permission":
        return "the screen shows no permission dialog"
    if prompt.tool != call.tool_name and call.tool_name not in SHOWN_AS.get(prompt.tool, ()):
        return f"the screen asks about {prompt.tool or 'another tool'}, the hook about {call.tool_name}"
    if prompt.tool in SHOWN_AS:
        if not _same_search(call, prompt.detail):
            return "the search on screen is not the one in the request"
    elif not _same_detail(call, prompt.detail):
        return "the command on screen is not the one in the request"
    return ""


# A tool the screen can name only as Claude draws it, and the tools it may be
# (detect/claude/screen.py: a search outside the work dir is "Search(pattern: …)" for Glob and Grep alike).
SHOWN_AS: dict[str, frozenset[str]] = {"Search": frozenset({"Glob", "Grep"})}


def _same_search(call: PendingCall, shown: str) -> bool:
    """Does the dialog's ``pattern: "…", path: "…"`` show this call's own pattern and path (every argument it drew)?"""
    pattern, path = call.tool_input.get("pattern"), call.tool_input.get("path")
    if not isinstance(pattern, str) or not pattern or f"pattern: {json.dumps(pattern, ensure_ascii=False)}" not in shown:
        return False
    return not isinstance(path, str) or not path or f"path: {json.dumps(path, ensure_ascii=False)}" in shown


def _same_detail(call: PendingCall, shown: str) -> bool:
    return same_detail(call.tool_name, call.detail, shown)


def same_detail(tool: str, wanted: str, shown: str) -> bool:
    """Does a dialog showing ``shown`` ask about a ``tool`` call acting on ``wanted`` (its command, file or URL)?"""
    if not shown or not wanted:
        return False
    if tool in FILE_TOOLS:
        # The dialog may name the file relative to the work dir ("foo.py"), the request absolutely.
        shown = shown.strip()
        return wanted == shown or (not shown.startswith("/") and wanted.endswith("/" + shown.removeprefix("./")))
    return _squeeze(wanted) == _squeeze(shown)


def _question_mismatch(call: PendingCall, prompt: Prompt) -> str:
    asked = call.questions()
    if prompt.review:
        # The dialog's last tab, listing what was answered: still this call's dialog.
        listed = {_squeeze(q) for q, _ in prompt.answers}
        if (prompt.question_count or 1) != len(asked) or not listed <= {_squeeze(q) for q, _ in asked}:
            return "the screen reviews another set of questions"
        return ""
    index = (prompt.question_index or 1) - 1
    if not 0 <= index < len(asked) or (prompt.question_count or 1) != len(asked):
        return "the screen shows another set of questions"
    question, labels = asked[index]
    if _squeeze(prompt.title) != _squeeze(question):
        return "the question on screen is not the one in the request"
    if [o.label for o in prompt.options[: len(labels)]] != labels:  # Claude adds "Type something." and the like after them
        return "the options on screen are not the ones Claude asked"
    return ""


def label_for_key(call: PendingCall, prompt: Prompt, key: str) -> str | None:
    """The label the option ``key`` picks, when it is one of the labels Claude asked (not "Type something")."""
    option = next((o for o in prompt.options if o.key == key), None)
    if option is None:
        return None
    index = (prompt.question_index or 1) - 1
    asked = call.questions()
    labels = asked[index][1] if 0 <= index < len(asked) else []
    return option.label if option.label in labels else None


def allow(message: str = "") -> dict[str, Any]:
    decision: dict[str, Any] = {"behavior": "allow"}
    if message:
        decision["message"] = message
    return decision


def deny(message: str, *, interrupt: bool = True) -> dict[str, Any]:
    """Refuse, and stop the turn as "No" in the dialog does ("Interrupted · What should Claude do instead?").

    ``interrupt=False`` for Codex's hook, which fails an answer carrying it closed.
    """
    return {"behavior": "deny", "message": message, **({"interrupt": True} if interrupt else {})}


def choose(call: PendingCall, label: str) -> dict[str, Any]:
    """Allow an AskUserQuestion call with ``label`` as the answer to its one question (a multi-select's: labels joined by ", ")."""
    ((question, _),) = call.questions()
    return {"behavior": "allow", "updatedInput": {**call.tool_input, "answers": {question: label}}}


def _several(call: PendingCall, prompt: Prompt, kind: str, option: str) -> HookAnswer | None:
    """A one-question multi-select call answered with several labels: its ticks on ``submit``, or the options "1,3" names.

    A single digit only toggles a box (keys do that); options that are not
    among Claude's labels ("Type something") leave it to keys.
    """
    if kind == "submit":
        keys = set(prompt.ticked)
    elif kind == "option" and "," in option:
        keys = {part.strip() for part in option.split(",") if part.strip()}
    else:
        return None
    labels = [label_for_key(call, prompt, o.key) for o in prompt.options if o.key in keys]
    if not keys or len(labels) != len(keys) or any(label is None for label in labels):
        return None
    ((question, _),) = call.questions()
    answer = ", ".join(label for label in labels if label is not None)
    return HookAnswer(choose(call, answer), f"{question} → {answer}")


DENY_MESSAGE = "The user denied this tool call in headspace."


@dataclass(frozen=True)
class HookAnswer:
    """What to hand the hook, and what it answers in words (for the user and the audit)."""

    decision: dict[str, Any]
    what: str


def hook_answer(call: PendingCall, observation: Observation, kind: str, option: str = "") -> HookAnswer | None:
    """The decision that carries out ``kind`` on ``call``, or None when only keys can (then keys answer).

    approve / deny: allow / deny (with interrupt, as "No" does).  A digit: on
    a one-question AskUserQuestion, the label that digit shows, when it is one
    of the labels Claude asked (not "Type something."); on a permission, the
    digit of its plain "Yes" (``detect/approval.py``) or "No".  A one-question
    multi-select: on ``submit`` its ticked labels, or the labels of the options
    "1,3" names, joined as Claude joins them.  Everything else ("Yes, and
    always allow ...", several questions, toggling one box) goes by keys.
    """
    prompt = observation.prompt
    if call.tool_name == QUESTION_TOOL:
        if call.one_multi_select and prompt is not None and prompt.multi_select:
            return _several(call, prompt, kind, option)
        if kind != "option" or not call.single_choice or prompt is None:
            return None
        label = label_for_key(call, prompt, option)
        if label is None:
            return None
        ((question, _),) = call.questions()
        return HookAnswer(choose(call, label), f"{question} → {label}")
    if kind == "option" and prompt is not None:
        chosen = next((o for o in prompt.options if o.key == option), None) if option else None  # "" names no option
        approve = approval(prompt)
        if chosen is not None and approve is not None and chosen == approve.option and not approve.widens:
            kind = "approve"  # the digit of the option y would take: an allow approves just this call
        elif chosen is not None and chosen == prompt.no:
            kind = "deny"
    if kind == "approve":
        return HookAnswer(allow(), f"{call.describe()} → approved")
    if kind == "deny":
        return HookAnswer(deny(DENY_MESSAGE), f"{call.describe()} → denied")
    return None


def _until(record: dict[str, Any]) -> float:
    """When the answer hook that sent ``record`` stops waiting: its start (``ts``) plus its ``wait``; 0.0 when it did not say."""
    ts, wait = record.get("ts"), record.get("wait")
    if not all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in (ts, wait)):
        return 0.0
    assert isinstance(ts, (int, float)) and isinstance(wait, (int, float))
    return float(ts) + float(wait) if 0 < wait <= 86400 and ts > 0 else 0.0
