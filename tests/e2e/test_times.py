"""Times from Claude: a headspace started late shows how long a state has really lasted.

Real tmux, real Claude Code against the scripted API; the monitor starts
only after the agent has been working (or waiting) for a while, as after a
restart of headspace.  Claude's status file says when each status began
(``statusUpdatedAt``, the start of the clock its own spinner shows); the
row's time must count from there, not from when headspace first looked.
"""

from __future__ import annotations

import time

import pytest

from headspace_tui.model import AgentState
from tests.e2e.test_recovery import _monitor, _run, _until
from tests.e2e.test_resident_service import rows, run
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU

pytestmark = pytest.mark.e2e


def test_a_working_agent_keeps_claudes_clock_when_headspace_starts_late(claude_session, private_tmux):
    session = claude_session([api.text("Done thinking.", delay=25)])
    session.submit("think it over")
    submitted = time.time()
    time.sleep(8)  # headspace is not running yet
    monitor, _ = _monitor(private_tmux, session)

    async def scenario() -> None:
        await _until(lambda: session.pane_id in monitor.store.agents and monitor.store.agents[session.pane_id].state is AgentState.WORKING, "the working agent")
        agent = monitor.store.agents[session.pane_id]
        worked = time.time() - agent.since
        assert worked >= 7.0, f"shown as working for {worked:.1f}s; Claude has worked {time.time() - submitted:.1f}s"
        assert agent.since >= submitted - 1.0  # not older than the turn itself

    _run(monitor, scenario)
    # ``status`` with no service (its own look, as a user runs it) dates it the same way.
    (row,) = [r for r in rows(run("-L", private_tmux.name, "status", "--json")) if r["pane_id"] == session.pane_id]
    # The reply is held back 25 s: the turn still runs (an "if working" here let a wrong state pass unchecked).
    assert row["state"] == "working", row
    assert row["in_state_for"] >= 7.0, row


def test_a_waiting_permission_keeps_its_time_to_the_second(claude_session, private_tmux):
    session = claude_session([api.bash("touch late.txt", "Create a file"), api.text("Created.")])
    session.submit("create the file")
    session.wait_for(NUMBERED_MENU, what="the permission menu")
    drawn = time.time()
    time.sleep(6)  # headspace is not running yet
    monitor, _ = _monitor(private_tmux, session)

    async def scenario() -> None:
        await _until(lambda: session.pane_id in monitor.store.agents and monitor.store.agents[session.pane_id].state is AgentState.PERMISSION, "the waiting agent")
        agent = monitor.store.agents[session.pane_id]
        waited = time.time() - agent.since
        assert waited >= 5.5, f"shown as waiting for {waited:.1f}s; the dialog has been up {time.time() - drawn:.1f}s"
        assert agent.since <= drawn + 0.5

    _run(monitor, scenario)
