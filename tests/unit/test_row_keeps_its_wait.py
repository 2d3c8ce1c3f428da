"""A waiting row keeps what it waits for: an answer's outcome ("not sent") is added to it, never put in its place."""

from __future__ import annotations

from headspace_tui.app.widgets.agent_table import choice_end, fit, kept_end, waiting_for
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


def test_a_cut_answer_keeps_the_option_it_chose_so_approve_and_deny_differ():
    approved = "approved via keys: Bash: rm -rf build && make -j8 all → 1. Yes"
    denied = "approved via keys: Bash: rm -rf build && make -j8 all → 4. No"
    a, d = (fit(t, 30, keep_end=choice_end(t)).plain for t in (approved, denied))
    assert a.endswith("→ 1. Yes") and d.endswith("→ 4. No") and a != d, (a, d)
    assert len(a) == len(d) == 30
    assert choice_end("Bash: ls") == 0  # no answer in it: cut at the end as any text


def test_a_cut_waiting_row_keeps_its_outcome_in_sight():
    """A narrow popup cut "· not sent" off the end: the outcome was added, and nobody could see it."""
    agent = _agent(PUSH, "not sent")
    shown = waiting_for(agent).plain
    cut = fit(shown, 28, keep_end=kept_end(agent, shown, 28)).plain
    assert cut.startswith("Bash: git") and cut.endswith(" · not sent") and len(cut) == 28, cut
    going = _agent(PUSH, "sent; waiting for the pane to show it")  # too long to keep: the command keeps the column
    shown = waiting_for(going).plain
    assert fit(shown, 28, keep_end=kept_end(going, shown, 28)).plain.startswith("Bash: git push origin")
