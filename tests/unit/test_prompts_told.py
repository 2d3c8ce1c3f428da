"""Which prompts are new turns when the hook and the transcript both tell them (service/records/prompts_told.py).

A CI run sent the second prompt 1–3 s after the first: a window of time
alone took it for the first told again, and the second turn (its baseline,
its blocked marks) never began.
"""

from __future__ import annotations

from headspace_tui.service.records.prompts_told import SAME_PROMPT, PromptsTold
from headspace_tui.service.records.store import AgentStore
from tests.unit.test_auto_mode import _agent


def test_two_prompts_from_one_source_a_second_apart_are_two_turns():
    told = PromptsTold()
    assert told.new_turn("%1", 1000.0, "transcript")
    assert told.new_turn("%1", 1001.0, "transcript")
    assert not told.new_turn("%1", 1001.0, "transcript"), "the same line read again"
    assert not told.new_turn("%1", 1000.0, "transcript"), "a history read again"


def test_each_prompt_told_by_both_sources_is_one_turn_whichever_comes_first_or_late():
    told = PromptsTold()
    assert told.new_turn("%1", 1000.0, "hook")
    assert not told.new_turn("%1", 1000.05, "transcript")
    assert told.new_turn("%1", 1001.0, "hook"), "the next prompt, a second later"
    assert not told.new_turn("%1", 1001.04, "transcript")
    # The transcript first, then the hook:
    assert told.new_turn("%1", 1002.03, "transcript")
    assert not told.new_turn("%1", 1002.0, "hook")


def test_a_source_two_prompts_behind_matches_each_to_its_own():
    told = PromptsTold()
    assert told.new_turn("%1", 1000.0, "hook")
    assert told.new_turn("%1", 1001.5, "hook")
    assert not told.new_turn("%1", 1000.05, "transcript"), "the first prompt, matched to the hook's first (the nearest)"
    assert not told.new_turn("%1", 1001.55, "transcript"), "the second, matched to the hook's second"
    assert told.new_turn("%1", 1001.5 + SAME_PROMPT + 1, "transcript"), "a third that the hook has not told yet"
    assert not told.new_turn("%1", 1001.5 + SAME_PROMPT + 1.02, "hook")


def test_panes_are_apart_and_a_forgotten_pane_starts_over():
    told = PromptsTold()
    assert told.new_turn("%1", 1000.0, "hook")
    assert told.new_turn("%2", 1000.0, "hook")
    told.forget("%1")
    assert told.new_turn("%1", 1000.0, "hook")


def test_the_store_begins_the_second_turn_when_the_transcript_tells_it_a_second_after_the_first():
    store = AgentStore()
    agent = _agent(store)
    store.turn("%1", 20.0, prompt_at=1000.0, by="transcript")
    assert agent.turn_since == 20.0
    store.turn("%1", 21.0, prompt_at=1000.0, by="transcript")  # the same prompt, read at the next reading
    assert agent.turn_since == 20.0
    store.turn("%1", 22.5, prompt_at=1001.2, by="transcript")
    assert agent.turn_since == 22.5
