"""Rows say the present: a working row shows the prompt it works on; the last answer and outcome show when idle."""

from __future__ import annotations

from headspace_tui.app.screens.why import since_text
from headspace_tui.app.widgets.agent_table import waiting_for
from headspace_tui.app.widgets.summary import summary_text
from headspace_tui.model import Agent, AgentState, Observation


def _agent(state: AgentState, **fields) -> Agent:
    return Agent(pane_id="%1", target="s:0.0", session="s", observation=Observation(state), **fields)


def test_a_working_row_shows_the_current_prompt_not_the_last_answer():
    agent = _agent(AgentState.WORKING, answered="by keys: plan → 1. Yes, and auto-accept", outcome="tests passed: 3 passed", command="now refactor\n  the parser  please")
    assert waiting_for(agent).plain == "▸ now refactor the parser please"


def test_an_idle_row_shows_the_last_answer_then_the_outcome():
    answered = _agent(AgentState.IDLE, answered="by keys: Bash → 1. Yes", command="create the file")
    assert waiting_for(answered).plain == "by keys: Bash → 1. Yes"
    done = _agent(AgentState.IDLE, answered="by keys: Bash → 1. Yes", outcome="tests passed: 3 passed", command="run the tests")
    assert waiting_for(done).plain == "tests passed: 3 passed"


def test_a_working_row_with_no_known_prompt_falls_back_on_its_answer():
    agent = _agent(AgentState.WORKING, answered="by keys: Bash → 1. Yes")
    assert waiting_for(agent).plain == "by keys: Bash → 1. Yes"


def test_retrying_still_outranks_the_prompt():
    agent = Agent(pane_id="%1", target="s:0.0", session="s", observation=Observation(AgentState.WORKING, retrying=True, error="retrying 2/10 · 529"), command="go")
    assert waiting_for(agent).plain == "retrying 2/10 · 529"


def test_the_header_shows_the_total_it_is_given_to_the_minute():
    rows = [_agent(AgentState.PERMISSION, since=0.0) for _ in range(3)]
    assert "waits today (sum): 10m" in summary_text(rows, None, 3 * 203).plain  # three rows at 3m23s (the sum: test_one_clock)


def test_why_says_when_the_state_began_and_who_says_so():
    agent = _agent(AgentState.PERMISSION, since=1000.0, since_source="status-file")
    text = since_text(agent, 1018.5).plain
    assert "(18s)" in text and "Claude's status file" in text
