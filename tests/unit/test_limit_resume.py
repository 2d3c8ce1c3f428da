"""Going on when a rate limit resets (service/acting/limit_resume.py): one nudge per limit, only while it still holds, none without a reset time."""

from __future__ import annotations

import asyncio

from headspace_tui.events import AgentChanged, AgentRemoved
from headspace_tui.model import AgentState, Observation
from headspace_tui.service.acting.limit_resume import LimitResume
from headspace_tui.service.records.store import AgentStore
from tests.unit.test_auto_mode import _read

WORDS = "You've hit your 5-hour limit · resets 3pm"


def scenario(changes, *, settle: float = 0.3):
    """Feed ``changes(store, resume)`` and collect what the resumer asked to answer (the clock puts every reset in the past)."""
    store = AgentStore()
    sent: list[tuple[str, str]] = []

    async def run():
        resume = LimitResume(lambda pane: store.agents.get(pane), lambda agent, intent: sent.append((agent.pane_id, intent.text)) or "", "go on", lambda: 1e12)
        store.subscribe(resume.on_event)
        await changes(store, resume)
        await asyncio.sleep(settle)
        resume.close()
        return resume

    return sent, asyncio.run(run())


def test_a_limit_with_a_reset_gets_the_nudge_once():
    async def changes(store, resume):
        agent = _read(store, Observation(AgentState.LIMITED, error=WORDS), 10.0)
        assert agent.state is AgentState.LIMITED and agent.limited_until
        store.emit(AgentChanged(agent, agent.state, 11.0))  # told again: still one nudge
        await asyncio.sleep(0.1)
        store.emit(AgentChanged(agent, agent.state, 12.0))

    sent, resume = scenario(changes)
    assert sent == [("%1", "go on")] and "'go on' sent" in resume.said[0]


def test_no_reset_time_no_nudge_and_one_that_went_on_by_itself_gets_none():
    async def changes(store, resume):
        _read(store, Observation(AgentState.LIMITED, error="API Error: Request rejected (429) · rate limit error"), 10.0)

    assert scenario(changes)[0] == []

    async def went_on(store, resume):
        resume.clock = lambda: 0.0  # the reset still ahead (far: the timer would not fire in this test)
        agent = _read(store, Observation(AgentState.LIMITED, error=WORDS), 10.0)
        assert agent.pane_id in resume._timers
        _read(store, Observation(AgentState.WORKING), 11.0)  # the user sent something: it works again
        assert agent.pane_id not in resume._timers

    assert scenario(went_on)[0] == []


def test_a_removed_agent_is_let_go():
    async def changes(store, resume):
        resume.clock = lambda: 0.0
        agent = _read(store, Observation(AgentState.LIMITED, error=WORDS), 10.0)
        store.emit(AgentRemoved(agent.pane_id, agent.key))
        assert not resume._timers

    assert scenario(changes)[0] == []
