"""Claude Code's own status files: ``$CLAUDE_CONFIG_DIR/sessions/<pid>.json``.

Each running interactive Claude writes one file, keyed by its pid, and
rewrites it when its status changes; the file is removed on exit.  That is a
cheap, screen-independent second opinion beside what the pane shows, and the
pid ties it to the process we find under a pane.

Facts measured on 2.1.330 (tests/e2e/test_live_loop.py, test_discovery.py):

* ``status`` is one of ``idle``, ``busy``, ``waiting``, ``shell``; it is
  missing for the first moments.  No ``<pid>.json`` exists at all while a
  startup dialog (trust this folder) is up.
* ``waitingFor`` accompanies ``waiting``: ``"permission prompt"`` for tool
  permissions *and* plan approval (ExitPlanMode), ``"input needed"`` for an
  AskUserQuestion dialog.  The binary also knows ``"sandbox request"``,
  ``"worker request"``, ``"goal proposal"`` and ``"dialog open"``.
* A turn that ends with a plain-text question reports ``idle``; an API error
  being retried reports ``busy``; a ``!`` shell command reports ``busy``.
* The folder also holds ``<pid>.<hash>.key`` files, and a file may be caught
  half-written: anything that is not a complete JSON object is skipped.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...model import AgentState, Evidence, Observation
from ...shared.safe_files import Unchanged, Unreadable, loads, note_once, read_regular
from ..sources import Source

SOURCE = Source.STATUS_FILE


def claude_config_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where Claude keeps its state: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    if configured:
        return Path(configured).expanduser()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".claude"


@dataclass(frozen=True)
class ClaudeStatus:
    """One Claude process as its status file describes it."""

    pid: int
    status: str = ""  # idle | busy | waiting | shell; "" while not yet written
    waiting_for: str = ""  # "permission prompt", "input needed", ...
    session_id: str = ""
    cwd: str = ""
    name: str = ""  # Claude's session name ("work-72", or one the user set)
    updated_at: float = 0.0  # epoch seconds the status last changed (statusUpdatedAt, else updatedAt); 0 unknown
    tmux: str = ""  # "session:@window.%pane" as Claude saw $TMUX_PANE at start
    kind: str = ""  # interactive | bg | daemon | daemon-worker

    @property
    def pane_id(self) -> str:
        """The ``%N`` part of ``tmux``, or ""."""
        _, _, pane = self.tmux.rpartition(".")
        return pane if pane.startswith("%") else ""


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _seconds(data: Mapping[str, Any], *keys: str) -> float:
    for key in keys:
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return value / 1000.0  # Claude writes epoch milliseconds
    return 0.0


def parse_status(data: Any, fallback_pid: int | None = None) -> ClaudeStatus | None:
    """A ``ClaudeStatus`` from one decoded file, or None if it is not one."""
    if not isinstance(data, dict):
        return None
    pid = data.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        pid = fallback_pid
    if pid is None:
        return None
    return ClaudeStatus(
        pid=pid,
        status=_text(data, "status"),
        waiting_for=_text(data, "waitingFor"),
        session_id=_text(data, "sessionId"),
        cwd=_text(data, "cwd"),
        name=_text(data, "name"),
        updated_at=_seconds(data, "statusUpdatedAt", "updatedAt"),
        tmux=_text(data, "tmux"),
        kind=_text(data, "kind"),
    )


STATUS_FILE_CAP = 64 << 10  # a status file is a few hundred bytes


def read_status_file(path: Path) -> ClaudeStatus | None:
    """The status in one file, or None: gone, half-written, or not a status.

    A file that is not a regular file (a fifo would block), too large, a
    link, nested too deep or not JSON is skipped with one log line (once);
    nothing in it can stop the caller.
    """
    try:
        data = loads(read_regular(path, STATUS_FILE_CAP), what=str(path))
    except FileNotFoundError:
        return None
    except Unreadable as exc:
        note_once(f"status file skipped: {exc}")
        return None
    stem = path.stem
    return parse_status(data, int(stem) if stem.isdigit() else None)


def read_statuses(folder: Path, cache: Unchanged[ClaudeStatus | None] | None = None) -> dict[int, ClaudeStatus]:
    """Every complete status file in ``folder`` by pid; a missing folder is simply empty.

    With ``cache``, a file unchanged since the last call is not read again.
    """
    statuses: dict[int, ClaudeStatus] = {}
    try:
        paths = sorted(Path(folder).glob("*.json"))
    except OSError:
        return statuses
    for path in paths:
        status = read_status_file(path) if cache is None else cache.get(path, functools.partial(read_status_file, path))
        if status is not None:
            statuses[status.pid] = status
    if cache is not None:
        cache.forget_except({str(p) for p in paths})
    return statuses


# waitingFor values Claude itself groups as a permission-style yes/no menu.
_PERMISSION_WAITS = ("permission", "sandbox request", "worker request", "goal proposal")


# The sources of ``status_observation``: Claude's status file, and ``claude agents --json`` reading the same files.
STATUS_SOURCES = (SOURCE, Source.CLAUDE_AGENTS)


def claimed_wait(observation: Observation) -> str:
    """What Claude's status file said it waits for ("permission prompt"), for an observation made by ``status_observation``; else ""."""
    if observation.source not in STATUS_SOURCES:
        return ""
    for evidence in observation.evidence:
        if evidence.rule == observation.source and "waitingFor=" in evidence.text:
            said = evidence.text.split("waitingFor=", 1)[1]
            return "" if said == "-" else said
    return ""


def status_observation(status: ClaudeStatus, *, source: str = SOURCE) -> Observation:
    """What a status file alone says about the agent (``source`` "claude-agents" when ``claude agents --json`` said it).

    Mapping, and why:

    * ``busy`` → WORKING.  ``shell`` → WORKING too: Claude's own agent list
      shows "working" for both (``shell``: a shell command of its own runs).
    * ``idle`` → IDLE.  A turn that ended with a typed question is also
      ``idle``; only the screen can tell INPUT apart.
    * ``waiting`` with a permission-style ``waitingFor`` → PERMISSION (plan
      approval reports ``"permission prompt"`` as well; the screen tells PLAN
      apart).  ``"input needed"`` → QUESTION.
    * ``waiting`` with any other or no ``waitingFor`` ("dialog open") →
      INPUT: the agent needs you, but we do not know it is a numbered menu,
      and INPUT is the one needs-you state that never invites typing a
      digit.  Confidence drops to 0.6 because the kind is a guess.
    * no ``status`` yet → STARTING; an unknown value → UNKNOWN.

    ``updated_at`` stays in the ``ClaudeStatus``; the observation carries
    only the state, with the raw values as evidence.
    """
    raw, waiting = status.status, status.waiting_for
    lowered = waiting.lower()
    confidence = 0.8
    if raw == "busy" or raw == "shell":
        state = AgentState.WORKING
    elif raw == "idle":
        state = AgentState.IDLE
    elif raw == "waiting":
        if any(word in lowered for word in _PERMISSION_WAITS):
            state = AgentState.PERMISSION
        elif "input needed" in lowered or "question" in lowered:
            state = AgentState.QUESTION
        else:
            state, confidence = AgentState.INPUT, 0.6
    elif raw == "":
        state = AgentState.STARTING
    else:
        state, confidence = AgentState.UNKNOWN, 0.3
    evidence = Evidence(rule=source, line=-1, text=f"status={raw or '-'} waitingFor={waiting or '-'}")
    return Observation(state, evidence=(evidence,), source=source, confidence=confidence)
