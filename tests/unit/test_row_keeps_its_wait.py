"""A waiting row keeps what it waits for: an answer's outcome ("not sent") is added to it, never put in its place."""

from __future__ import annotations

from headspace_tui.app.widgets.agent_table import waiting_for
from headspace_tui.model import Agent, AgentState, Observation, Prompt

PUSH = Observation(AgentState.PERMISSION, Prompt(kind="permission", tool="Bash", detail="git push origin main", fingerprint="f"))


def _agent(observation: Observation, delivery: str) -> Agent:
    return Agent(pane_id="%1", target="s:0.0", session="s", observation=observation, delivery=delivery)


def test_a_refused_answer_is_said_beside_the_command_the_row_waits_for():
    shown = waiting_for(_agent(PUSH, "not sent")).plain
    assert shown == "Bash: git push origin main · not sent"


def test_an_answer_on_its_way_is_said_beside_it_too():
    assert waiting_for(_agent(PUSH, "sent; waiting for the pane to show it")).plain == "Bash: git push origin main · sent; waiting for the pane to show it"


def test_a_row_that_waits_for_nothing_shows_the_outcome_alone():
    working = Observation(AgentState.WORKING)
    assert waiting_for(_agent(working, "not delivered: the prompt changed")).plain == "not delivered: the prompt changed"
    assert waiting_for(_agent(PUSH, "")).plain == "Bash: git push origin main"
