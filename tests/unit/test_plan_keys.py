"""Which keys an action sends, decided on real recorded screens (pure, no tmux)."""

from __future__ import annotations

import pytest

from headspace_tui.answering.keys import ActionError, Intent, KeyStroke, plan_keys, same_prompt
from headspace_tui.detect.claude import classify_capture
from headspace_tui.detect.families import CLAUDE
from tests.harness.record import DEFAULT_OUT


def screen(name: str, size: str = "80x24", renderer: str = "alt"):
    path = DEFAULT_OUT / renderer / size / f"{name}.ansi"
    return classify_capture(path.read_text(), command="claude")


@pytest.mark.parametrize("renderer", ["alt", "inline"])
@pytest.mark.parametrize(
    "name,deny_key",
    [("permission_bash", "4"), ("permission_write", "3"), ("permission_edit", "3"), ("permission_webfetch", "3")],
)
def test_approve_is_the_first_yes_and_deny_is_found_by_label(name, deny_key, renderer):
    obs = screen(name, renderer=renderer)
    assert plan_keys(obs, Intent("approve"), family=CLAUDE) == [KeyStroke(("1",))]
    assert plan_keys(obs, Intent("deny"), family=CLAUDE) == [KeyStroke((deny_key,))]


def test_option_two_of_a_question():
    assert plan_keys(screen("question_two_options"), Intent("option", option="2"), family=CLAUDE) == [KeyStroke(("2",))]


def test_an_option_that_is_not_there_is_refused():
    with pytest.raises(ActionError, match="no option 9"):
        plan_keys(screen("question_two_options"), Intent("option", option="9"), family=CLAUDE)


def test_plan_has_no_no_choice():
    with pytest.raises(ActionError, match="no 'No' choice"):
        plan_keys(screen("plan_exit_plan_mode"), Intent("deny"), family=CLAUDE)


@pytest.mark.parametrize("name", ["idle_fresh", "idle_finished", "input_plain_question", "working_streaming", "trap_quoted_dialog"])
def test_digits_are_never_planned_without_a_live_menu(name):
    for intent in (Intent("approve"), Intent("deny"), Intent("option", option="1")):
        with pytest.raises(ActionError, match="no numbered menu"):
            plan_keys(screen(name), intent, family=CLAUDE)


def test_text_goes_literally_then_enter_separately():
    assert plan_keys(screen("input_plain_question"), Intent("text", text="leave them"), family=CLAUDE) == [
        KeyStroke(("leave them",), literal=True),
        KeyStroke(("Enter",)),
    ]


@pytest.mark.parametrize("name", ["permission_bash", "question_two_options", "working_spinner", "plan_exit_plan_mode"])
def test_text_is_refused_away_from_the_input_box(name):
    with pytest.raises(ActionError, match="not at Claude's input box"):
        plan_keys(screen(name), Intent("nudge", text="continue"), family=CLAUDE)


def test_empty_text_is_refused():
    with pytest.raises(ActionError, match="empty"):
        plan_keys(screen("idle_fresh"), Intent("text", text="  \n "), family=CLAUDE)


def test_a_different_prompt_has_a_different_fingerprint():
    bash, write = screen("permission_bash"), screen("permission_write")
    assert not same_prompt(bash, write)
    assert same_prompt(bash, screen("permission_bash"))
    # The same prompt at another size reads as the same prompt.
    assert screen("question_four_options").prompt.fingerprint == screen("question_four_options", "200x50").prompt.fingerprint


@pytest.mark.parametrize("name", ["permission_bash", "permission_write", "permission_edit"])
def test_deny_is_escape_where_the_dialog_has_no_no_but_says_esc_leaves_it(name):
    # 2.0.x offers "3. Type here to tell Claude what to do differently" instead of
    # "No", and "Esc to exit".  Measured on 2.0.60: Esc there rejects the tool
    # ("Interrupted · What should Claude do instead?", the tool_result is a rejection).
    from tests.harness.record import corpus_dir

    path = corpus_dir("2.0.60") / "inline" / "120x40" / f"{name}.ansi"
    obs = classify_capture(path.read_text(), command="claude", version="2.0.60")
    assert obs.prompt.no is None and obs.prompt.deny_key == "Escape"
    assert plan_keys(obs, Intent("deny"), family=CLAUDE) == [KeyStroke(("Escape",))]
    assert plan_keys(obs, Intent("approve"), family=CLAUDE) == [KeyStroke(("1",))]
