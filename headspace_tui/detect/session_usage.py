"""An agent's tokens as its own CLI counts them, read from the session file it writes (Codex, Gemini, opencode).

Claude's counts ride on the transcript headspace already follows
(service/records/usage_tally.py).  The other families each keep a session record
of their own, found here from the agent's process: its folder (cwd), its
environment (where the CLI keeps its files) and when it started.  A CLI
writes one record per conversation, named by nothing the process shows,
so a record is matched to a process by folder and time:

* a record begun before the agent started is not its own;
* Gemini begins its record as it starts (measured: 1.5-2.2 s after), so
  of two Gemini agents in one folder a record begun at T is the one that
  started last before T;
* Codex and opencode begin theirs at the first prompt, which says nothing
  of whose it is: an agent alone in its folder owns them, and two in one
  folder are not told apart (no numbers, rather than another's).

Runs where the agent runs: in the service for local agents, in the probe
on an SSH host (which sends the numbers, never the files), so it uses
the standard library and probe-safe modules only.  Called when an agent's
state changes, never on a timer: a file that did not change is not read
again.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from ..shared.json_lines import JsonLinesTail
from ..shared.proctree import ProcessInfo, read_process_table
from ..usage.model import Tokens, Usage

CLOCK_SLACK = 1.0  # seconds: a conversation's time and its process's start, each as its own clock rounds it
START_WINDOW = 10.0  # seconds after its start within which a CLI that begins its record as it starts has begun it
# Seconds between two searches for the agent's record (a newer conversation, another agent in its folder).  Reads
# come only when the agent's state changes, so this bounds a busy agent's cost; a search is a few directory
# listings, one process table and the first line of each record written since the agent started.
FIND_EVERY = 2.0


@dataclass(frozen=True)
class AgentProcess:
    """What locates an agent's session record: its process, folder, environment and start (epoch seconds)."""

    pid: int
    cwd: str
    started: float
    env: dict = field(default_factory=dict)
    # When each other agent of the same family in the same folder started: who owns a conversation begun at T.
    siblings: tuple = ()
    # Since when another agent shared its folder, as far as this agent was seen (None: never): a record begun after
    # that stays anyone's, even once the other agent has gone.
    crowded: float | None = None

    def owns(self, begun: float, *, at_start: bool) -> bool:
        """Was a conversation begun at ``begun`` in this folder this agent's?

        ``at_start``: the CLI begins its record as it starts, so the record
        is the agent's that started last before it; otherwise only an agent
        alone in its folder can own one.
        """
        if begun < self.started - CLOCK_SLACK:
            return False
        if not at_start or begun - self.started > START_WINDOW:
            # Begun at a prompt (or, by a CLI that begins one as it starts, long after: a /clear): any other agent in
            # the folder could have begun it.
            return not self.siblings and (self.crowded is None or begun < self.crowded)
        return not any(self.started < other <= begun + CLOCK_SLACK for other in self.siblings)

    def home(self, name: str, default: str) -> str:
        """The folder the agent's environment names in ``name``, else ``default`` under its HOME (``env_folder``)."""
        return env_folder(self.env, name, default)


def env_folder(env: Mapping[str, str], name: str, default: str) -> str:
    """The folder ``env`` names in ``name`` (``CODEX_HOME``), else ``default`` (``.codex``) under its HOME."""
    return env.get(name) or os.path.join(env.get("HOME") or os.path.expanduser("~"), default)


class Follower:
    """One family's session record for one agent, followed on change (a subclass per family)."""

    path = ""

    def read(self) -> Usage | None:
        """The session's usage so far (None: nothing counted yet)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Call:
    """One model call as a record line says it: its prompt (the cached part included), output, cache reads and writes."""

    prompt: int
    output: int
    cached: int = 0
    cache_write: int = 0
    model: str = ""
    window: int = 0  # the model's window, where the line says it (Copilot's ``maxPromptTokens``)


class CallsFollower(Follower):
    """A record of one line per model call (Copilot CLI's usage records, Qwen Code's replies), summed as it is read on.

    A subclass says which lines are calls (``call_of``); a call that counts
    nothing (a garbled or cut line) is neither summed nor the context.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._tail = JsonLinesTail(path)
        self._tokens = Tokens()
        self._last: Call | None = None
        self._window = 0

    def call_of(self, line: object) -> Call | None:
        raise NotImplementedError

    def read(self) -> Usage | None:
        for line in self._tail.read_objects():
            call = self.call_of(line)
            if call is None or not (call.prompt or call.output):
                continue
            self._tokens += Tokens(max(0, call.prompt - call.cached), call.output, call.cached, call.cache_write)
            self._window = call.window or self._window
            self._last = Call(call.prompt, call.output, model=call.model or (self._last.model if self._last else ""))
        if self._last is None:
            return None
        return Usage(self._last.model, self._tokens, self._last.prompt, self._window, window_source="agent" if self._window else "")


@dataclass(frozen=True)
class Kind:
    """A family's session records: which processes are its agents, which environment names its folders, how to find one.

    Each family's is declared in its own folder, beside its follower (``USAGE``), and carried by its record
    (``Family.usage``); the probe, which carries no registry, lists them in ``usage_kinds.py``.
    """

    family: str  # the family's name, as its record and the rows give it
    recognise: Callable[[ProcessInfo], bool]
    env: tuple
    find: Callable[[AgentProcess], Follower | None]


def parse_time(text: object) -> float | None:
    """An ISO time ("2026-11-29T15:25:51.567Z") in epoch seconds, or None."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def count(value: object) -> int:
    """A token count from a CLI's record: a positive whole number, else 0 (a missing, null or edited field counts nothing)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def boot_time(proc: str = "/proc") -> float:
    with open(os.path.join(proc, "stat"), "rb") as f:
        for line in f:
            if line.startswith(b"btime "):
                return float(line.split()[1])
    raise OSError("no btime in /proc/stat")


def start_of(info: ProcessInfo, boot: float) -> float:
    """A process's start in epoch seconds (its ``started`` is clock ticks since boot on Linux, epoch seconds elsewhere)."""
    if not info.started:
        return 0.0
    value = float(info.started)
    return value if "." in info.started else boot + value / os.sysconf("SC_CLK_TCK")


def environ(pid: int, names: tuple, proc: str = "/proc") -> dict:
    """The named variables of a process's environment ({} if unreadable)."""
    try:
        with open(os.path.join(proc, str(pid), "environ"), "rb") as f:
            raw = f.read(1 << 20)
    except OSError:
        return {}
    found = {}
    for entry in raw.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        key = name.decode("utf-8", "replace")
        if sep and key in names:
            found[key] = value.decode("utf-8", "replace")
    return found


def cwd_of(pid: int, proc: str = "/proc") -> str:
    try:
        return os.readlink(os.path.join(proc, str(pid), "cwd"))
    except OSError:
        return ""


class SessionUsage:
    """Per agent process: its follower, found once and looked for again (a newer conversation) at most every FIND_EVERY seconds."""

    def __init__(self, kinds: dict, *, proc: str = "/proc", clock: Callable[[], float] = time.monotonic) -> None:
        self.kinds = kinds
        self.proc = proc
        self.clock = clock
        self._followers: dict = {}  # pid → (its start, follower or None, when last looked for)
        self._crowded: dict = {}  # pid → since when another agent of its family shared its folder (epoch seconds)

    def read(self, family: str, pid: int) -> Usage:
        """The agent's counts so far; an empty ``Usage`` when none are found (yet) or its record is not told apart from another's."""
        kind = self.kinds.get(family)
        if kind is None or pid <= 0:
            return Usage()
        held = self._followers.get(pid)
        if held is None or self.clock() - held[2] >= FIND_EVERY:
            held = self._search(kind, pid)
        usage = held[1].read() if held[1] is not None else None
        return usage if usage is not None else Usage()

    def record_path(self, family: str, pid: int) -> str | None:
        """The session record the agent owns now, searched for at once (a hook's call names its record): None when none is told apart."""
        kind = self.kinds.get(family)
        if kind is None or pid <= 0:
            return None
        follower = self._search(kind, pid)[1]
        return follower.path if follower is not None else None

    def _search(self, kind: Kind, pid: int) -> tuple:
        """Look for the agent's record now; the follower kept (its start, the follower or None, when looked) is what reads follow."""
        held = self._followers.get(pid)
        agent = self._agent(kind, pid)
        try:
            found = kind.find(agent) if agent is not None else None
        except (OSError, ValueError, LookupError, sqlite3.Error):
            found = held[1] if held is not None else None  # the search failed (a busy database): keep what was found
        if found is not None and agent is not None and held is not None and held[1] is not None and held[0] == agent.started and found.path == held[1].path:
            found = held[1]  # the same record: keep what was read of it
        held = (agent.started if agent is not None else 0.0, found, self.clock())
        self._followers[pid] = held
        return held

    def forget(self, alive: set) -> None:
        """Let go of agents that are gone."""
        for pid in [p for p in self._followers if p not in alive]:
            del self._followers[pid]
        for pid in [p for p in self._crowded if p not in alive]:
            del self._crowded[pid]

    def _agent(self, kind: Kind, pid: int) -> AgentProcess | None:
        try:
            boot = boot_time(self.proc)
        except (OSError, ValueError):
            return None
        table = read_process_table(self.proc)
        self.forget(set(table.processes))  # agents that ended: their followers go
        info = table.get(pid)
        cwd = cwd_of(pid, self.proc)
        if info is None or not cwd:
            return None
        siblings = tuple(start_of(other, boot) for other in table.processes.values() if other.pid != pid and kind.recognise(other) and cwd_of(other.pid, self.proc) == cwd)
        started = start_of(info, boot)
        if siblings:
            crowded = max(started, min(siblings))  # another agent was there from its start, or from ours
            self._crowded[pid] = min(self._crowded.get(pid, crowded), crowded)
        return AgentProcess(pid, cwd, started, environ(pid, (*kind.env, "HOME"), self.proc), siblings, self._crowded.get(pid))
