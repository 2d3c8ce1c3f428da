"""The process table, and the walk that finds an agent's process under a tmux pane.

``#{pane_current_command}`` names only the pane's foreground process, and a
pane's pid is usually a shell with the agent as its child (or grandchild,
under a wrapper).  So we read the whole process table once per scan and answer
every pane from that snapshot with a pure tree walk (``find_first``), which
tests can drive with hand-built tables.  Which process is whose agent is each
family's own knowledge (``Family.recognise``, e.g. ``detect/claude/process.py``).

Where there is a /proc (Linux) the table is one pass over it, two small
files per process: 2.5 ms for 66 processes here, where psutil's
``process_iter`` takes 6.7 ms.  Elsewhere (macOS, BSD) psutil reads it (a remote host without `/proc` needs psutil for its `python3`).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    ppid: int
    comm: str  # the kernel's name: the executable's basename, at most 15 characters
    argv: tuple[str, ...] = ()  # empty for kernel threads and zombies
    started: str = ""  # when it started, in the platform's own unit: with the pid, names this process for good

    @property
    def argv0_name(self) -> str:
        return os.path.basename(self.argv[0]) if self.argv else ""


@dataclass
class ProcessTable:
    """A snapshot of processes by pid, with a parent→children index."""

    processes: dict[int, ProcessInfo] = field(default_factory=dict)
    _children: dict[int, list[int]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for info in self.processes.values():
            self._children.setdefault(info.ppid, []).append(info.pid)
        for pids in self._children.values():
            pids.sort()

    @classmethod
    def of(cls, processes: Iterable[ProcessInfo]) -> ProcessTable:
        return cls({p.pid: p for p in processes})

    def __contains__(self, pid: object) -> bool:
        return pid in self.processes

    def __len__(self) -> int:
        return len(self.processes)

    def get(self, pid: int) -> ProcessInfo | None:
        return self.processes.get(pid)

    def children_of(self, pid: int) -> list[int]:
        return list(self._children.get(pid, ()))


def _parse_stat(text: str) -> tuple[str, int, str] | None:
    """(comm, ppid, start time in clock ticks) from /proc/<pid>/stat; comm may itself contain spaces and parentheses."""
    open_, close = text.find("("), text.rfind(")")
    if open_ < 0 or close < open_:
        return None
    rest = text[close + 2 :].split()
    if len(rest) < 2:
        return None
    try:
        return text[open_ + 1 : close], int(rest[1]), rest[19] if len(rest) > 19 else ""
    except ValueError:
        return None


def read_process_table(proc: str = "/proc", *, portable: bool | None = None) -> ProcessTable:
    """Every process visible in ``proc`` (or, with ``portable`` or without a /proc, through psutil).

    Processes that exit mid-read or deny access are left out (their stat)
    or kept without argv (their cmdline).
    """
    if portable or (portable is None and proc == "/proc" and not os.path.isdir("/proc/self")):
        return _psutil_table()
    processes: dict[int, ProcessInfo] = {}
    try:
        names = os.listdir(proc)
    except OSError:
        return ProcessTable()
    for name in names:
        if not name.isdigit():
            continue
        base = os.path.join(proc, name)
        try:
            with open(os.path.join(base, "stat"), "rb") as f:
                parsed = _parse_stat(f.read().decode("utf-8", "replace"))
        except OSError:  # gone already, or not ours to read
            continue
        if parsed is None:
            continue
        comm, ppid, started = parsed
        try:
            with open(os.path.join(base, "cmdline"), "rb") as f:
                raw = f.read()
            argv = tuple(part.decode("utf-8", "replace") for part in raw.rstrip(b"\0").split(b"\0")) if raw else ()
        except OSError:
            argv = ()
        pid = int(name)
        processes[pid] = ProcessInfo(pid, ppid, comm, argv, started)
    return ProcessTable(processes)


def _psutil_table() -> ProcessTable:
    import psutil

    processes: dict[int, ProcessInfo] = {}
    for process in psutil.process_iter(["pid", "ppid", "name", "cmdline", "create_time"]):
        info = process.info
        if info.get("ppid") is None:
            continue  # gone while listed
        argv = tuple(info.get("cmdline") or ())
        started = info.get("create_time")
        processes[info["pid"]] = ProcessInfo(info["pid"], info["ppid"], info.get("name") or "", argv, f"{started:.2f}" if started else "")
    return ProcessTable(processes)


_HAVE_PROC = os.path.isdir("/proc/self")


def process_exists(pid: int) -> bool:
    """Is ``pid`` still running (a zombie counts as gone)?

    Asked at every read of an agent's pane, so on Linux it is one small
    read of /proc (psutil's ``Process`` costs several); elsewhere psutil.
    """
    if _HAVE_PROC:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            return False
        return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return psutil.pid_exists(pid)


def children(pid: int, table: ProcessTable) -> list[int]:
    """The direct children of ``pid`` in ``table``, lowest pid first."""
    return table.children_of(pid)


def find_first(root_pid: int, table: ProcessTable, pick: Callable[[ProcessInfo], T | None]) -> tuple[int, T] | None:
    """The first process in the tree under ``root_pid`` (itself included) that ``pick`` names
    something for, and what it named; breadth-first, so the process nearest the pane wins;
    None if there is none."""
    seen: set[int] = set()
    queue: deque[int] = deque([root_pid])
    while queue:
        pid = queue.popleft()
        if pid in seen:
            continue
        seen.add(pid)
        info = table.get(pid)
        picked = pick(info) if info is not None else None
        if picked is not None:
            return pid, picked
        queue.extend(table.children_of(pid))
    return None


def descends(pid: int, ancestor: int, *, proc: str = "/proc", depth: int = 6) -> bool:
    """Is ``pid`` the process ``ancestor`` or under it, at most ``depth`` parents up (read from /proc; False when it cannot be read)?

    A hook an agent runs is its child, or its worker's (Qwen Code's CLI under
    its launcher, Copilot CLI's native binary under its loader), with a
    ``sh -c`` between.
    """
    if ancestor <= 0:
        return False
    for _ in range(depth + 1):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        try:
            with open(f"{proc}/{pid}/stat", encoding="utf-8", errors="replace") as handle:
                parsed = _parse_stat(handle.read())
        except OSError:
            return False
        if parsed is None:
            return False
        pid = parsed[1]
    return False
