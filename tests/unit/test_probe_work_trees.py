"""A probe whose link closed drops the snapshots still asked for: only the git running then is let finish.

Left queued, they ran on after headspace was gone (the fleet benchmark: 30
agents' first snapshots of one large folder kept a probe whose link had
closed running git for 40 s more).  The snapshot itself is a stand-in here
that waits for the test, so what runs after the close is counted, not timed.
"""

from __future__ import annotations

import threading

from headspace_tui.remote import probe_changes


def test_closing_drops_the_snapshots_still_queued(monkeypatch):
    started = threading.Event()
    release = threading.Event()
    ran: list[str] = []

    class Tree:
        tree = "0" * 40

    def snapshot(folder: str):
        ran.append(folder)
        started.set()
        assert release.wait(10), "never released"
        return Tree()

    monkeypatch.setattr(probe_changes, "snapshot", snapshot)
    monkeypatch.setattr(probe_changes, "prune", lambda: None)
    answers: list[dict] = []
    trees = probe_changes.WorkTrees(answers.append)
    for n in range(5):
        trees.handle("work_snapshot", {"id": n, "folder": f"/agents/{n}"})
    assert started.wait(10), "the first snapshot never began"
    trees.close()  # the link is gone
    release.set()
    for worker in list(trees._pool._threads):
        worker.join(10)
    assert ran == ["/agents/0"], f"snapshots run after the close: {ran}"
    assert answers == [{"id": 0, "ok": "0" * 40}]
