"""One rule for when a wait asks anew (detect/waits.py): the clock and the notifications agree on it.

For every state that waits on the user and every pair of prompts (read with
or without details, the same or another), the clock restarts exactly when
the notifier rings again.  Both are the real objects, fed one wait and then
the next report of the same state.
"""

from __future__ import annotations

import itertools

import pytest

from headspace_tui.detect.clock import Clock
from headspace_tui.model import Agent, AgentState, Observation, Prompt
from headspace_tui.notifications.decide import SETTLE, Notifier

WAITS = [state for state in AgentState if state.needs_you]
PRINTS = ("", "a", "b")  # unread, one prompt, another prompt
START = 1000.0


def _agent(state: AgentState, fingerprint: str) -> Agent:
    prompt = Prompt(kind=state.value, title="t", fingerprint=fingerprint) if state is not AgentState.ERROR else None
    return Agent(pane_id="%1", target="api:0.1", session="api", observation=Observation(state, prompt=prompt), key="k1")


def _clock_restarts(state: AgentState, first: str, then: str) -> bool:
    clock = Clock()
    began = clock.update(state, {}, now=100.0, prompt=first).at
    return clock.update(state, {}, now=110.0, prompt=then).at != began


def _notifier_rings(state: AgentState, first: str, then: str) -> bool:
    notifier = Notifier(WAITS, started=START)
    now = START + SETTLE + 1
    notifier.observe(_agent(AgentState.WORKING, ""), now)
    assert notifier.observe(_agent(state, first), now + 1) is not None  # the first wait is news
    return notifier.observe(_agent(state, then), now + 2) is not None


@pytest.mark.parametrize(("state", "first", "then"), list(itertools.product(WAITS, PRINTS, PRINTS)))
def test_the_clock_restarts_exactly_when_the_notifier_rings_again(state, first, then):
    assert _clock_restarts(state, first, then) == _notifier_rings(state, first, then)


def test_only_another_permission_or_plan_is_a_new_request():
    """The agreement above is not two callers that never restart: both do, for these and no others."""
    anew = {(state, first, then) for state, first, then in itertools.product(WAITS, PRINTS, PRINTS) if _clock_restarts(state, first, then)}
    assert anew == {(state, first, then) for state in (AgentState.PERMISSION, AgentState.PLAN) for first, then in (("a", "b"), ("b", "a"))}
