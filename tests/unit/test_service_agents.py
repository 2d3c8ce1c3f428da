"""A front end that joins late starts from ``Service.agents()`` and ``hosts()``: the agents now, in the table's order.

Real service, detectors off, real recorded Claude screens read by the real reader.
"""

from __future__ import annotations

from headspace_tui.detect.claude import classify_capture
from headspace_tui.model import AgentState
from headspace_tui.tmux.server import PaneRecord
from tests.harness.record import DEFAULT_OUT
from tests.unit.test_service_snoozes import NOW, service


def show(hs, n: int, screen: str, age: float) -> None:
    ansi = (DEFAULT_OUT / "alt" / "120x40" / screen).with_suffix(".ansi").read_text()
    record = PaneRecord(f"%{n}", f"${n}", f"s{n}", 0, 0, f"s{n}:0.0", 1000 + n, "claude", f"/src/{n}", 120, 40, True, False, "", False, None)
    hs.replay(record, ansi, classify_capture(ansi, command="claude"), NOW - age, family="claude")


def test_agents_now_in_the_tables_order_and_each_host():
    hs = service()
    assert hs.agents() == [] and hs.hosts() == [("local", "starting")]
    show(hs, 1, "working_streaming", 30)
    show(hs, 2, "permission_bash", 10)
    show(hs, 3, "question_two_options", 90)
    late = hs.agents()  # no event was heard by this front end
    assert [a.pane_id for a in late] == ["%3", "%2", "%1"]  # needing you first, the longest-waiting first
    assert [a.state for a in late] == [AgentState.QUESTION, AgentState.PERMISSION, AgentState.WORKING]
