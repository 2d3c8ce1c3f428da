"""Typing a free-text answer into a question: which option, which keys, and when each step counts as landed.

Decided on real recorded screens of every recorded version (pure, no tmux);
the live path is tests/ui/test_typing_live.py.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from headspace_tui.answering.keys import ActionError, Intent, KeyStroke, field_holds, field_open, plan_keys, same_question
from headspace_tui.answering.policy import key_allowed, unfit
from headspace_tui.detect.claude import classify_capture
from headspace_tui.detect.families import CLAUDE
from headspace_tui.model import Agent, AgentState, Observation, Option
from tests.harness.record import DEFAULT_OUT

PANES = DEFAULT_OUT.parent


def screen(name: str, size: str = "120x40", version: str = "claude-2.1.330"):
    return classify_capture((PANES / version / "alt" / size / f"{name}.ansi").read_text(), command="claude")


@pytest.mark.parametrize("version", ["claude-2.1.160", "claude-2.1.250", "claude-2.1.330"])
@pytest.mark.parametrize("name,key", [("question_two_options", "3"), ("question_four_options", "5"), ("question_several_first", "3")])
def test_text_at_a_question_picks_type_something_by_its_label_then_types_then_enters(name, key, version):
    obs = screen(name, version=version)
    assert obs.prompt.free_text == key
    assert obs.prompt.options[int(key) - 1].label == "Type something."
    assert plan_keys(obs, Intent("text", text="MariaDB, please"), family=CLAUDE) == [
        KeyStroke((key,)),
        KeyStroke(("MariaDB, please",), literal=True),
        KeyStroke(("Enter",)),
    ]


@pytest.mark.parametrize("name,why", [("question_multi_select", "multi-select"), ("question_with_previews", "no empty 'Type something.'")])
def test_a_question_without_a_single_free_text_field_is_refused(name, why):
    obs = screen(name)
    assert obs.prompt.free_text == ""
    with pytest.raises(ActionError, match=why):
        plan_keys(obs, Intent("text", text="something else"), family=CLAUDE)


def test_a_field_that_already_holds_text_is_not_found_by_position():
    """Someone typed in the pane's field: the option no longer says "Type something.", so nothing is typed over it."""
    obs = screen("question_two_options")
    typed = replace(obs.prompt, options=tuple(replace(o, label="half an answer") if o.key == "3" else o for o in obs.prompt.options), free_text="")
    with pytest.raises(ActionError, match="no empty 'Type something.'"):
        plan_keys(replace(obs, prompt=typed), Intent("text", text="MariaDB"), family=CLAUDE)


@pytest.mark.parametrize("name", ["permission_bash", "plan_exit_plan_mode", "working_spinner"])
def test_text_still_never_goes_to_a_permission_a_plan_or_a_working_agent(name):
    with pytest.raises(ActionError):
        plan_keys(screen(name, size="80x24"), Intent("text", text="yes"), family=CLAUDE)


def test_nudge_still_only_goes_to_the_input_box():
    assert unfit(Intent("nudge").kind, AgentState.QUESTION)
    assert not unfit(Intent("text").kind, AgentState.QUESTION)


def _with(obs, key: str, *, label: str | None = None, selected: bool | None = None, **prompt_changes):
    options = tuple(replace(o, label=label if label is not None and o.key == key else o.label, selected=(o.key == key) if selected else o.selected and selected is None) for o in obs.prompt.options)
    return replace(obs, prompt=replace(obs.prompt, options=options, **prompt_changes))


def test_each_step_is_judged_on_the_same_question():
    seen = screen("question_several_first")
    assert same_question(seen, seen)
    opened = _with(seen, "3", selected=True)
    assert field_open(seen, opened) and not field_open(seen, seen)
    holding = _with(seen, "3", label="2 replicas of Postgres, with a streaming standby in another zone and", selected=True)
    long_text = "2 replicas of Postgres, with a streaming standby in another zone and nightly base backups"
    assert field_holds(seen, holding, long_text)  # a long answer wraps: its first line is what the option shows
    assert not field_holds(seen, holding, "MariaDB")
    assert not field_holds(seen, opened, long_text)  # still the placeholder
    # Another question (the next of several), another option set, or no question: not the one seen.
    assert not same_question(seen, replace(seen, prompt=replace(seen.prompt, question_index=2)))
    assert not same_question(seen, _with(seen, "1", label="MySQL"))
    assert not same_question(seen, screen("idle_fresh"))
    assert not same_question(seen, Observation(AgentState.WORKING))


def test_reply_and_input_mode_are_offered_where_they_can_act():
    question = Agent("%1", "s:0.0", "s", observation=screen("question_two_options"))
    exited = Agent("%2", "s:0.1", "s", observation=replace(screen("idle_fresh"), state=AgentState.EXITED))
    placeholder = Agent("@box", "box", "box")
    assert key_allowed("reply", question) and key_allowed("input_mode", question)
    assert not key_allowed("input_mode", exited)
    assert not key_allowed("input_mode", placeholder)
    assert not key_allowed("input_mode", None)
    assert Option("3", "Type something.") in screen("question_two_options").prompt.options
