"""Snapshots and diffs of work trees on a remote host, for the probe (changes/snapshot.py run there).

Requests (answered by a worker thread, in order, so a slow ``git add`` in a
large tree never holds up the probe's request loop, its tmux streams or
its hooks):

* ``{"id", "op": "work_snapshot", "folder": F}`` → the tree id;
* ``{"id", "op": "work_diff", "folder": F, "old": T1, "new": T2}`` → the
  diff as ``Diff.to_dict()``, parsed and capped here: the link carries a
  bounded answer, never a whole ``git diff``.

A folder that is not a git work tree answers ``{"error": "not a git
repository"}`` (``NotARepository``'s words, for people).  Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..changes.snapshot import NotARepository, diff_of, prune, snapshot
from .probe_tmux import LATER

OPS = frozenset({"work_snapshot", "work_diff"})


class WorkTrees:
    def __init__(self, send: Callable[[dict], None]) -> None:
        self._send = send
        self._pool = ThreadPoolExecutor(1)  # one git at a time on this host: snapshots are rare, and each reads the disk
        self._pool.submit(prune)  # the stores no snapshot was written to for a week, here too

    def handle(self, op: str, request: dict) -> Any:
        self._pool.submit(self._run, request.get("id"), op, request)
        return LATER

    def _run(self, ident: Any, op: str, request: dict) -> None:
        try:
            folder = str(request["folder"])
            if op == "work_snapshot":
                answer: dict = {"id": ident, "ok": snapshot(folder).tree}
            else:
                answer = {"id": ident, "ok": diff_of(folder, str(request["old"]), str(request["new"])).to_dict()}
        except NotARepository as exc:
            answer = {"id": ident, "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 -- any failure is the answer, in one line
            answer = {"id": ident, "error": f"{type(exc).__name__}: {exc}"}
        try:
            self._send(answer)
        except (OSError, ValueError):
            pass  # headspace went: nobody to tell

    def close(self) -> None:
        """Drop every request still queued (nobody is left to answer): only the git running now is let finish.

        Left queued, they ran on after headspace was gone: 30 agents' first
        snapshots of one large folder kept a probe whose link had closed
        running git for 40 s more.
        """
        self._pool.shutdown(wait=False, cancel_futures=True)
