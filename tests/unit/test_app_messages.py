"""The app's messages wrap the service's events, and a burst about one pane is handled once."""

from __future__ import annotations

from headspace_tui import events
from headspace_tui.app.messages import AgentChanged, AgentRemoved, PaneCaptured, ProblemChanged
from headspace_tui.model import Agent, AgentState, Observation


def _agent(pane_id: str) -> Agent:
    return Agent(pane_id=pane_id, target="s:0.0", session="s", cwd="/w", name="", pid=1, agent_pid=2, observation=Observation(AgentState.IDLE), since=0.0)


def test_a_newer_message_about_the_same_agent_replaces_an_older_one_and_no_other():
    one, other = _agent("%1"), _agent("%2")
    older = AgentChanged(events.AgentChanged(one, None, 1.0))
    assert older.agent is one and older.event.at == 1.0
    assert older.can_replace(AgentChanged(events.AgentChanged(one, AgentState.IDLE, 2.0)))
    assert not older.can_replace(AgentChanged(events.AgentChanged(other, None, 2.0)))
    assert not older.can_replace(AgentRemoved(events.AgentRemoved("%1", "k")))  # a removal is never swallowed


def test_captures_coalesce_per_pane_and_only_the_newest_problem_counts():
    assert PaneCaptured(events.PaneCaptured("%1")).can_replace(PaneCaptured(events.PaneCaptured("%1")))
    assert not PaneCaptured(events.PaneCaptured("%1")).can_replace(PaneCaptured(events.PaneCaptured("%2")))
    assert ProblemChanged(events.ProblemChanged("gone")).can_replace(ProblemChanged(events.ProblemChanged(None)))
    removed = AgentRemoved(events.AgentRemoved("%3", "key-3"))
    assert (removed.pane_id, removed.key) == ("%3", "key-3")
    assert not removed.can_replace(AgentRemoved(events.AgentRemoved("%3", "key-3")))
