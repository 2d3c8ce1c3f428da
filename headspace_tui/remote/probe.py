"""The probe: headspace's own readers, run on a remote host, answering over one pipe.

A remote host needs nothing installed but tmux and Claude Code.  What
headspace reads there besides tmux (the process table, each Claude's config
dir and version, its status files, transcripts and the hook spool) is read
by the *same* modules that read them here: their source is sent through the
SSH connection at start (``bundle.py``) and run by the host's ``python3``
(3.9 or later).  Nothing is written to the remote's disk, and the defensive
reading (regular files only, sizes capped, nesting limited) is the same code.

This module runs there.  It imports only the standard library and the
bundled readers, and speaks JSON lines on stdin/stdout:

* a request ``{"id": N, "op": ..., ...}`` gets ``{"id": N, "ok": result}``
  or ``{"id": N, "error": "one line"}``;
* what changes by itself is pushed, never polled for from headspace's side:
  ``{"push": "statuses", "folder": F, "statuses": [...]}`` when a watched
  status folder's contents change, ``{"push": "gone", "pids": [...]}`` when
  a watched Claude exits, ``{"push": "hooks", "events": [[name, record], ...]}``
  for new hook events, ``{"push": "notice", "text": ...}`` for a refused spool.
  The remote side looks at them when the kernel says something changed
  (inotify and pidfds, ``probe_watch.py``), or twice a second where it
  cannot (a directory listing and a stat per status file; nothing is sent
  while nothing changes).
* the host's tmux travels here too (probe_tmux.py): one-shot ``tmux``
  commands, and each session's control client as a numbered stream
  (``ctl_*`` requests, ``ctl`` pushes); a request without an ``id`` is
  never answered.

It ends when its stdin closes (headspace quit or the link dropped), and by
itself when no request came for ``IDLE_EXIT`` seconds: headspace says
``hello`` every 10 s while it watches (``host.KEEP_ALIVE``), so a probe
nobody asks is one whose headspace is gone without its stdin closing (a
half-open connection sshd has not noticed); it must not stay there for good.

The answer hooks' socket there and ``hooks install --host`` have modules of
their own (``probe_answers.py``, ``probe_hooks.py``), which get the
``answer_*`` and ``hooks_*`` requests; they are what the probe writes to the
remote's disk: that socket beside the spool, and what the user asked
``hooks install --host`` to write.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..detect.claude.process import PROBE_OP, claude_process, process_env
from ..detect.claude.status_files import ClaudeStatus, read_statuses
from ..detect.claude.transcript import TranscriptTail
from ..detect.session_usage import SessionUsage
from ..detect.usage_kinds import KINDS
from ..hooks.spool import SpoolRefused, check_spool, read_spool, spool_dir
from ..shared.proctree import process_exists, read_process_table
from ..shared.safe_files import Unchanged
from . import probe_hooks
from .probe_answers import OPS as ANSWER_OPS
from .probe_answers import AnswerRelay
from .probe_changes import OPS as TREE_OPS
from .probe_changes import WorkTrees
from .probe_tmux import LATER, TmuxMux
from .probe_tmux import OPS as TMUX_OPS
from .probe_watch import Waker

IDLE_EXIT = 180.0  # seconds without a request after which the probe ends itself
SPOOL_KEEP = 600.0  # hook events older than this are pruned from the remote spool, as locally


class Probe:
    def __init__(self, out, waker: Waker | None = None) -> None:
        self._out = out
        self.waker = waker or Waker()  # when to look again (probe_watch.py)
        self._write = threading.Lock()
        self._lock = threading.Lock()  # the watched sets, shared with the watcher thread
        self._status_folders: dict[str, tuple[Unchanged[ClaudeStatus | None], list | None]] = {}
        self._pids: set[int] = set()
        self._spool: Path | None = None
        self._spool_last: str | None = None
        self._tails: dict[str, TranscriptTail] = {}
        self._usage = SessionUsage(KINDS)  # the agents' own session records here (not Claude's: its transcript is the tail)
        self.answers = AnswerRelay(self.send)
        self.tmux = TmuxMux(self.send)  # the host's tmux over this one channel (probe_tmux.py)
        self.trees = WorkTrees(self.send)  # snapshots and diffs of the agents' work trees here (probe_changes.py)

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":")) + "\n"
        with self._write:
            self._out.write(line)
            self._out.flush()

    # -- requests ---------------------------------------------------------------
    def handle(self, request: dict[str, Any]) -> Any:
        op = request.get("op")
        if op in probe_hooks.OPS:
            return probe_hooks.handle(op, request)
        if op in ANSWER_OPS:
            return self.answers.handle(op, request)
        if op in TMUX_OPS:
            return self.tmux.handle(request)
        if op in TREE_OPS:
            return self.trees.handle(op, request)
        if op == "table":
            table = read_process_table()
            return [[p.pid, p.ppid, p.comm, list(p.argv), p.started] for p in table.processes.values()]
        if op == PROBE_OP:
            table = read_process_table()
            pids = [int(pid) for pid in request["pids"]]
            with self._lock:
                self._pids.update(pids)
            self.waker.poke()
            found = [claude_process(pid, table) for pid in pids]
            return [[p.pid, p.version, str(p.config_dir) if p.config_dir else None, p.binary] for p in found]
        if op == "alive":
            return [pid for pid in request["pids"] if process_exists(int(pid))]
        if op == "statuses":
            return [dataclasses.asdict(s) for s in read_statuses(Path(request["folder"])).values()]
        if op == "watch_statuses":
            with self._lock:
                self._status_folders.setdefault(str(request["folder"]), (Unchanged(), None))
            self.waker.poke()
            return True
        if op == "watch_spool":
            # Where the hooks write there: the rule of the hook program, with that Claude's own environment.
            env = process_env(int(request["pid"]), ("XDG_RUNTIME_DIR",)) if request.get("pid") else {}
            folder = Path(request.get("folder") or spool_dir(env))
            with self._lock:
                self._spool, self._spool_last = folder, request.get("since")
            self.waker.poke()
            return str(folder)
        if op == "tail":
            path = str(request["path"])
            tail = self._tails.get(path)
            if tail is None:
                tail = self._tails[path] = TranscriptTail(path)
            first = not tail.opened
            return {"first": first, "turns": [dataclasses.asdict(turn) for turn in tail.read_new()]}
        if op == "exists":
            return Path(request["path"]).exists()
        if op == "usage":
            return self._usage.read(str(request["family"]), int(request["pid"])).to_row()
        if op == "hello":
            return {"python": sys.version.split()[0], "watch": self.waker.reason or "inotify", "looks": self.waker.waits}
        raise ValueError(f"unknown op {op!r}")

    # -- what changes by itself ---------------------------------------------------
    def watch(self) -> None:
        while True:
            try:
                self._look()
            except Exception as exc:  # noqa: BLE001 -- one bad look must not end the probe; it is said
                self.send({"push": "notice", "text": f"remote reader: {type(exc).__name__}: {exc}"})
            with self._lock:
                spool = [str(self._spool)] if self._spool is not None else []
                self.waker.want([*self._status_folders, *spool], self._pids)
            self.waker.wait()

    def _look(self) -> None:
        with self._lock:
            folders = list(self._status_folders.items())
            pids = set(self._pids)
            spool = self._spool
        for folder, (cache, last) in folders:
            found = read_statuses(Path(folder), cache)
            rows = sorted((dataclasses.asdict(s) for s in found.values()), key=lambda s: s["pid"])
            if rows != last:
                with self._lock:
                    self._status_folders[folder] = (cache, rows)
                self.send({"push": "statuses", "folder": folder, "statuses": rows})
        gone = [pid for pid in pids if not process_exists(pid)]
        if gone:
            with self._lock:
                self._pids.difference_update(gone)
            self.send({"push": "gone", "pids": gone})
        if spool is not None:
            self._look_at_spool(spool)

    def _look_at_spool(self, folder: Path) -> None:
        if not folder.is_dir():
            return  # hooks never ran on this host (yet)
        try:
            check_spool(folder)
        except SpoolRefused as exc:
            with self._lock:
                self._spool = None  # said once; hooks stay off for this host
            self.send({"push": "notice", "text": str(exc)})
            return
        events = read_spool(folder, self._spool_last, delete_older_than=SPOOL_KEEP)
        if events:
            self._spool_last = max(self._spool_last or "", *(e.name for e in events))
            self.send({"push": "hooks", "events": [[e.name, e.raw] for e in events]})


def serve(stdin=None, stdout=None, idle_exit: float = IDLE_EXIT) -> None:
    """Answer requests until stdin closes (headspace quit, or the link dropped) or none comes for ``idle_exit`` s."""
    stdin = stdin or sys.stdin
    probe = Probe(stdout or sys.stdout)
    threading.Thread(target=probe.watch, daemon=True).start()
    last = [time.monotonic()]

    def watchdog() -> None:
        while (left := last[0] + idle_exit - time.monotonic()) > 0:
            time.sleep(left)  # one wake per request-free stretch, not one every few seconds
        probe.tmux.close_all()  # no tmux client of ours outlives the probe
        os._exit(0)  # stdin's reader cannot be interrupted otherwise

    threading.Thread(target=watchdog, daemon=True).start()
    for line in stdin:
        last[0] = time.monotonic()
        probe.answers.heard()
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if not isinstance(request, dict):
            continue
        try:
            answer = probe.handle(request)
            if "id" in request and answer is not LATER:  # no id: a stream's input or ack, never answered
                probe.send({"id": request.get("id"), "ok": answer})
        except Exception as exc:  # noqa: BLE001 -- any failure is the answer, in one line
            probe.send({"id": request.get("id"), "error": f"{type(exc).__name__}: {exc}"})
    probe.answers.close()  # stdin ended: the link is gone, and so is every hook's wait (Claude's dialog answers)
    probe.tmux.close_all()  # ...and every tmux control client it started there
    probe.trees.close()  # ...and every snapshot still asked for
