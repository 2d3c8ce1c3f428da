"""Multi-select questions on the real screens of the corpus: what is ticked, which keys answer, what the hook is handed (issue 37).

The screens were recorded from Claude Code 2.1.330 and 2.1.250
(``question_multi_select``, ``question_multi_ticked``,
``question_several_multi_ticked``, ``question_multi_review``,
``question_several_review``), narrow and wide, in both renderers.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import pytest

from headspace_tui.answering import multi
from headspace_tui.answering.keys import ActionError, plan_keys
from headspace_tui.answering.policy import Intent, IntentKind, key_allowed
from headspace_tui.api.rows import describe
from headspace_tui.app.widgets.agent_table import waiting_for
from headspace_tui.app.widgets.preview import prompt_bar_text
from headspace_tui.cli.send import option_keys
from headspace_tui.detect.claude import classify_capture
from headspace_tui.detect.families import CLAUDE
from headspace_tui.hooks.calls import PendingCall, hook_answer, why_not
from headspace_tui.model import Agent, AgentState, Observation
from headspace_tui.service.records.store import same_observation
from headspace_tui.shared.config import DEFAULT_KEYS
from tests.harness.record import PANES
from tests.harness.scenarios import QUESTION_DB, QUESTION_FEATURES

VERSIONS = ("2.1.250", "2.1.330")
WHERE = [(v, r, size) for v in VERSIONS for r in ("alt", "inline") for size in ("80x24", "200x50")]
IDS = [f"{v}-{r}-{size}" for v, r, size in WHERE]
FEATURES = QUESTION_FEATURES["question"]


def screen(version: str, renderer: str, size: str, name: str) -> Observation:
    return classify_capture((PANES / f"claude-{version}" / renderer / size / f"{name}.ansi").read_text(), version=version)


def call(*questions: dict) -> PendingCall:
    record = {"hook_event_name": "PermissionRequest", "tmux_pane": "%1", "tool_name": "AskUserQuestion", "tool_input": {"questions": list(questions)}}
    found = PendingCall.from_payload(1, record, 0.0)
    assert found is not None
    return found


def kinds(steps: list[multi.Step]) -> list[tuple[str, str]]:
    return [(s.kind, s.key) for s in steps]


@pytest.mark.parametrize("where", WHERE, ids=IDS)
def test_ticks_are_read_and_are_not_part_of_the_prompts_identity(where):
    empty, ticked = screen(*where, "question_multi_select"), screen(*where, "question_multi_ticked")
    assert empty.prompt.multi_select and ticked.prompt.multi_select
    assert empty.prompt.ticked == () and ticked.prompt.ticked == ("1", "3")
    assert [o.ticked for o in ticked.prompt.options][:4] == [True, False, True, False]  # 4 is Claude's own "[ ] Type something"
    assert ticked.prompt.options[-1].ticked is None  # "Chat about this": no box, a digit picks it
    # The same question, still answerable with the keys seen; but a new reading for the row.
    assert empty.prompt.fingerprint == ticked.prompt.fingerprint
    assert not same_observation(empty, ticked)


@pytest.mark.parametrize("where", WHERE, ids=IDS)
def test_the_review_page_is_a_page_of_its_own_with_every_answer(where):
    review = screen(*where, "question_several_review")
    prompt = review.prompt
    assert review.state is AgentState.QUESTION and prompt.review and not prompt.multi_select
    assert prompt.answers == (("Which database should we use?", "Postgres"), (FEATURES, "Billing"))
    assert [o.label for o in prompt.options] == ["Submit answers", "Cancel"] and prompt.question_count == 2
    assert prompt.fingerprint != screen(*where, "question_multi_review").prompt.fingerprint


@pytest.mark.parametrize("where", WHERE, ids=IDS)
def test_the_keys_each_intent_becomes(where):
    empty, ticked = screen(*where, "question_multi_select"), screen(*where, "question_multi_ticked")
    second, review = screen(*where, "question_several_multi_ticked"), screen(*where, "question_multi_review")
    option = lambda keys: Intent(IntentKind.OPTION, option=keys)  # noqa: E731
    submit = Intent(IntentKind.SUBMIT)
    # A digit toggles one box (either way); nothing else goes with it.
    assert kinds(multi.plan(empty, option("2"))) == [("toggle", "2")]
    assert kinds(multi.plan(ticked, option("1"))) == [("toggle", "1")]
    # "1,3": exactly those ticked, then → to the review page and its "Submit answers".
    assert kinds(multi.plan(empty, option("1,3"))) == [("toggle", "1"), ("toggle", "3"), ("next", "Right"), ("submit", "")]
    assert kinds(multi.plan(ticked, option("3,1"))) == [("next", "Right"), ("submit", "")]
    assert kinds(multi.plan(ticked, option("2"))) == [("toggle", "2")]
    assert kinds(multi.plan(ticked, option("2,3"))) == [("toggle", "1"), ("toggle", "2"), ("next", "Right"), ("submit", "")]
    assert kinds(multi.plan(ticked, submit)) == [("next", "Right"), ("submit", "")]
    assert kinds(multi.plan(second, submit)) == [("next", "Right"), ("submit", "")]  # 2/2 is the last page
    assert kinds(multi.plan(review, submit)) == [("submit", "")]
    assert [s.keys for s in plan_keys(empty, option("1,3"), family=CLAUDE)] == [("1",), ("3",), ("Right",), ("1",)]
    for wrong, said in (
        ((empty, submit), "nothing ticked"),
        ((empty, option("1,5")), "no option 5 to tick"),  # "Chat about this" has no box
        ((empty, option("1,9")), "no option 9"),
        ((review, option("1,2")), "review of every answer"),
    ):
        with pytest.raises(ActionError, match=said):
            multi.plan(*wrong)
    scrolled = replace(empty, prompt=replace(empty.prompt, hidden_options=1))  # as if Claude scrolled one box out of view
    with pytest.raises(ActionError, match="out of view"):
        multi.plan(scrolled, option("1,3"))
    assert kinds(multi.plan(scrolled, option("3"))) == [("toggle", "3")]
    assert not multi.handles(review, option("1"))  # a digit at the review page picks its option like any menu
    assert not multi.handles(empty, option("5"))  # "Chat about this": a plain option


@pytest.mark.parametrize("where", WHERE, ids=IDS)
def test_which_page_follows_which_in_one_dialog(where):
    """An answer that leads to the next page of the same dialog leaves the dialog going on (the inbox stays)."""
    first, second = screen(*where, "question_several_first"), screen(*where, "question_several_multi_ticked")
    review, one, one_review = screen(*where, "question_several_review"), screen(*where, "question_multi_ticked"), screen(*where, "question_multi_review")
    assert second.prompt.follows(first.prompt) and review.prompt.follows(second.prompt) and one_review.prompt.follows(one.prompt)
    assert not review.prompt.follows(first.prompt)  # question 1/2 is not the last: → goes to 2/2
    assert not one_review.prompt.follows(second.prompt)  # another dialog's review (one question, not two)
    assert not first.prompt.follows(second.prompt) and not second.prompt.follows(review.prompt)


def test_a_single_choice_question_has_nothing_to_submit_and_takes_one_option():
    single = screen("2.1.330", "alt", "80x24", "question_two_options")
    with pytest.raises(ActionError, match="single-choice"):
        multi.plan(single, Intent(IntentKind.SUBMIT))
    with pytest.raises(ActionError, match="multi-select"):
        plan_keys(single, Intent(IntentKind.OPTION, option="1,2"), family=CLAUDE)
    assert [s.keys for s in plan_keys(single, Intent(IntentKind.OPTION, option="2"), family=CLAUDE)] == [("2",)]


def test_submit_is_a_live_key_only_where_it_can_act():
    def agent(name: str) -> Agent:
        return Agent(pane_id="%1", target="s:0.0", session="s", observation=screen("2.1.330", "alt", "80x24", name))

    names = ("question_multi_select", "question_multi_ticked", "question_several_multi_ticked", "question_multi_review")
    names += ("question_two_options", "question_several_first", "permission_bash", "idle_fresh")
    live = {name: key_allowed("submit", agent(name)) for name in names}
    assert live == {
        "question_multi_select": True,
        "question_multi_ticked": True,
        "question_several_multi_ticked": True,
        "question_multi_review": True,
        "question_two_options": False,
        "question_several_first": False,
        "permission_bash": False,
        "idle_fresh": False,
    }


def test_the_row_and_the_prompt_bar_say_what_is_ticked_and_what_submit_does():
    def agent(name: str) -> Agent:
        return Agent(pane_id="%1", target="s:0.0", session="s", observation=screen("2.1.330", "alt", "80x24", name))

    assert waiting_for(agent("question_multi_ticked")).plain == f"{FEATURES} · ✔ Auth, Search"
    assert waiting_for(agent("question_multi_select")).plain == f"{FEATURES} · nothing ticked"
    assert waiting_for(agent("question_several_multi_ticked")).plain == f"{FEATURES} (2/2) · ✔ Billing"
    assert waiting_for(agent("question_several_review")).plain == f"submit your answers? Which database should we use? → Postgres; {FEATURES} → Billing"
    bar = prompt_bar_text(agent("question_multi_ticked"), DEFAULT_KEYS).plain
    assert "[1] [✔] Auth  [2] [ ] Billing  [3] [✔] Search" in bar and "[S] submit the ticked" in bar
    assert "[S] submit every answer" in prompt_bar_text(agent("question_multi_review"), DEFAULT_KEYS).plain
    assert "submit" not in prompt_bar_text(agent("question_two_options"), DEFAULT_KEYS).plain


def test_the_hook_gets_the_ticked_labels_joined_as_claude_joins_them():
    one = call(QUESTION_FEATURES)
    ticked, empty = screen("2.1.330", "alt", "80x24", "question_multi_ticked"), screen("2.1.330", "alt", "80x24", "question_multi_select")
    assert why_not(one, ticked) == ""
    answer = hook_answer(one, ticked, IntentKind.SUBMIT)
    assert answer is not None and answer.decision["updatedInput"]["answers"] == {FEATURES: "Auth, Search"}
    assert answer.decision["behavior"] == "allow" and answer.decision["updatedInput"]["questions"] == [QUESTION_FEATURES]
    several = hook_answer(one, empty, IntentKind.OPTION, "3,1")
    assert several is not None and several.decision["updatedInput"]["answers"] == {FEATURES: "Auth, Search"}  # in the options' order
    assert hook_answer(one, empty, IntentKind.OPTION, "1") is None  # a toggle: only keys tick a box
    assert hook_answer(one, empty, IntentKind.SUBMIT) is None  # nothing ticked: keys say so
    assert hook_answer(one, empty, IntentKind.OPTION, "1,4") is None  # "Type something" is no label Claude asked


def test_a_dialog_of_two_questions_keeps_its_hook_to_the_review_but_is_answered_by_keys():
    two = call(QUESTION_DB, QUESTION_FEATURES)
    second, review = screen("2.1.330", "alt", "80x24", "question_several_multi_ticked"), screen("2.1.330", "alt", "80x24", "question_several_review")
    assert why_not(two, second) == "" and why_not(two, review) == ""  # still this call's dialog: the hook is not let go
    assert hook_answer(two, second, IntentKind.SUBMIT) is None  # answers left out would go unanswered: keys
    assert hook_answer(two, review, IntentKind.SUBMIT) is None
    assert why_not(call(QUESTION_FEATURES), review) == "the screen reviews another set of questions"


def test_status_and_classify_print_the_boxes_and_the_review():
    def line(name: str) -> str:  # status's line for an agent showing that screen
        return describe(Agent(pane_id="%1", target="s:0.0", session="s", observation=screen("2.1.330", "inline", "80x24", name)))

    assert line("question_multi_ticked").endswith("1. [✔] Auth | 2. [ ] Billing | 3. [✔] Search | 4. [ ] Type something | 5. Chat about this")
    # The review in the table's words (one set of words: state/wait_words.py), then its options.
    review = line("question_several_review")
    assert review == f"question — submit your answers? Which database should we use? → Postgres; {FEATURES} → Billing — 1. Submit answers | 2. Cancel"
    assert line("question_two_options").endswith("1. Postgres | 2. SQLite | 3. Type something. | 4. Chat about this")


def test_send_option_takes_one_number_or_several():
    assert option_keys("3") == "3" and option_keys("1,3") == "1,3" and option_keys(" 1 , 03") == "1,3"
    for bad in ("", "1,,3", "a", "1;3", "-1", "123"):
        with pytest.raises(argparse.ArgumentTypeError):
            option_keys(bad)
