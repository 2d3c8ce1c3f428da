"""Which panes to watch, and who their agents are, from hand-built tmux listings and process tables."""

from __future__ import annotations

from headspace_tui.service.watching.discovery import plan
from headspace_tui.shared.proctree import ProcessInfo, ProcessTable
from headspace_tui.tmux.server import PaneRecord


def pane(pane_id: str, pid: int, session: str = "$0") -> PaneRecord:
    return PaneRecord(
        pane_id=pane_id,
        session_id=session,
        session_name="s",
        window_index=0,
        pane_index=0,
        target="s:0.0",
        pid=pid,
        current_command="bash",
        cwd="/",
        width=80,
        height=24,
        alternate_on=False,
        in_mode=False,
        title="",
        dead=False,
        dead_status=None,
    )


def table(*claudes: tuple[int, int, str]) -> ProcessTable:
    """Shells 100, 200, 300 (one per pane), and Claude processes (pid, parent shell, start time)."""
    shells = [ProcessInfo(pid, 1, "bash", ("bash",), "10") for pid in (100, 200, 300)]
    return ProcessTable.of([*shells, *(ProcessInfo(pid, ppid, "claude", ("claude",), start) for pid, ppid, start in claudes)])


PANES = [pane("%0", 100), pane("%1", 200, "$1"), pane("%2", 300, "$1")]


def run(processes: ProcessTable, watched: dict[str, str] | None = None, known: set[int] | None = None, include_all: bool = False):
    return plan(PANES, processes, watched or {}, known or set(), host="local", server="L:work", include_all=include_all)


def test_panes_running_claude_are_watched_with_an_identity_of_their_own():
    found = run(table((500, 100, "77"), (600, 300, "78")))
    assert [(s.record.pane_id, s.agent_pid, s.key) for s in found.watch] == [
        ("%0", 500, "local|L:work|%0|500@77"),
        ("%2", 600, "local|L:work|%2|600@78"),
    ]
    assert found.new_claudes == [500, 600] and found.sessions == {"$0", "$1"} and not found.replaced


def test_the_same_claude_keeps_its_identity_and_is_not_new():
    first = run(table((500, 100, "77")))
    again = run(table((500, 100, "77")), {s.record.pane_id: s.key for s in first.watch}, {500})
    assert [s.key for s in again.watch] == [s.key for s in first.watch] and not again.new_claudes and not again.replaced


def test_another_claude_in_the_same_pane_is_another_agent():
    """A new Claude reusing the pid of an old one still differs by its start time."""
    old = {"%0": "local|L:work|%0|500@77"}
    found = run(table((500, 100, "95")), old, {500})
    assert found.replaced == {"%0"} and found.watch[0].key == "local|L:work|%0|500@95"


def test_a_pane_whose_claude_exited_stays_watched_as_the_same_agent():
    found = run(table(), {"%0": "local|L:work|%0|500@77"}, {500})
    assert [(s.record.pane_id, s.agent_pid, s.key) for s in found.watch] == [("%0", None, "local|L:work|%0|500@77")]


def test_plain_shells_are_watched_only_with_all():
    assert run(table()).watch == []
    assert [s.record.pane_id for s in run(table(), include_all=True).watch] == ["%0", "%1", "%2"]


def test_the_same_pane_id_on_another_server_is_another_agent():
    mine = run(table((500, 100, "77"))).watch[0].key
    other = plan(PANES, table((500, 100, "77")), {}, set(), host="local", server="L:default").watch[0].key
    assert mine != other
