"""Dialogs the corpus had not recorded, read by their structure (issue 23).

Each case starts from a real recorded 2.1.330 screen and changes it the way
the issue reports the dialog from real captures elsewhere: a menu Claude
scrolled inside itself ("↑ 1 more line" / "↓ 2 more lines"), options with a
preview panel beside them, the plan-exit menu titled only "Would you like to
proceed?", Claude in Chrome's "wants to …" with Allow / Deny, and a menu drawn
without a cursor.  Every one needs the user, so every one must be read as the
kind it is, never as ``unknown`` and never as a kind whose keys differ.
(The screens Claude really scrolls at 80x20 and 80x16 are in the recorded
corpus as well; these cover the wordings 2.1.330 does not draw here.)
"""

from __future__ import annotations

import pytest

from headspace_tui.answering.keys import ActionError, Intent, plan_keys
from headspace_tui.detect.claude import BASE, classify_capture
from headspace_tui.detect.families import CLAUDE
from headspace_tui.model import AgentState
from tests.harness.record import corpus_dir

RULES = [None, BASE]
RULE_IDS = ["newest table", "structure alone"]


def screen(name: str, size: str = "80x24") -> list[str]:
    return (corpus_dir("2.1.330") / "alt" / size / f"{name}.txt").read_text().split("\n")


def row_of(rows: list[str], needle: str) -> int:
    return next(i for i, row in enumerate(rows) if needle in row)


def read(rows: list[str], rules=None):
    return classify_capture("\n".join(rows), command="claude", rules=rules)


def keys(observation, kind: str, option: str = "") -> list[str]:
    return [k for stroke in plan_keys(observation, Intent(kind, option=option), family=CLAUDE) for k in stroke.keys]


@pytest.mark.parametrize("rules", RULES, ids=RULE_IDS)
def test_a_question_scrolled_past_its_first_option_is_read_with_the_options_on_screen(rules):
    rows = screen("question_long_options")
    first, second = row_of(rows, "1. Skip them"), row_of(rows, "2. Quarantine them")
    # Claude scrolled option 1 and its description out of view and says so above the rest.
    rows[first:second] = ["  ↑ 4 more lines"]
    observation = read(rows, rules)
    assert observation.state is AgentState.QUESTION, observation.evidence
    prompt = observation.prompt
    assert [(o.key, o.label) for o in prompt.options][:3] == [("2", "Quarantine them"), ("3", "Abort the batch"), ("4", "Fix them")]
    assert prompt.hidden_options == 1 and not prompt.more_below
    assert prompt.title == "How should the migration handle the rows that fail validation?"
    assert any(e.rule == "menu-scrolled" for e in observation.evidence)
    # A digit answers an option by its own number; one nobody can see is refused.
    assert keys(observation, "option", "3") == ["3"]
    with pytest.raises(ActionError, match="no option 1 here"):
        plan_keys(observation, Intent("option", option="1"), family=CLAUDE)


@pytest.mark.parametrize("rules", RULES, ids=RULE_IDS)
def test_a_permission_whose_long_option_runs_below_the_pane_is_still_a_permission(rules):
    rows = screen("permission_bash_wrapped")
    no = row_of(rows, "4. No")
    rows[no] = "   ↓ 2 more lines"
    observation = read(rows, rules)
    assert observation.state is AgentState.PERMISSION, observation.evidence
    prompt = observation.prompt
    assert prompt.tool == "Bash" and prompt.detail.startswith("touch marker.txt && mkdir -p build/reports/coverage/html")
    assert [o.key for o in prompt.options] == ["1", "2", "3"] and prompt.more_below and prompt.hidden_options == 0
    assert keys(observation, "approve") == ["1"]
    # "No" is out of view; the dialog's own "Esc to cancel" refuses.
    assert keys(observation, "deny") == ["Escape"]


@pytest.mark.parametrize("rules", RULES, ids=RULE_IDS)
def test_a_permission_menu_drawn_without_a_cursor_is_read_by_its_hint(rules):
    rows = screen("permission_bash")
    rows[row_of(rows, "1. Yes")] = rows[row_of(rows, "1. Yes")].replace("❯", " ")
    observation = read(rows, rules)
    assert observation.state is AgentState.PERMISSION, observation.evidence
    assert observation.prompt.detail == "touch marker.txt && echo headspace-ok"
    assert [o.label for o in observation.prompt.options][0] == "Yes" and observation.prompt.no.label == "No"
    assert not any(o.selected for o in observation.prompt.options)


def test_a_numbered_list_with_neither_cursor_nor_dialog_hint_is_not_a_menu():
    rows = screen("permission_bash")
    rows[row_of(rows, "1. Yes")] = rows[row_of(rows, "1. Yes")].replace("❯", " ")
    rows[row_of(rows, "Esc to cancel")] = ""
    observation = read(rows)
    assert not observation.state.is_menu, observation
    assert observation.state is AgentState.UNKNOWN


@pytest.mark.parametrize("rules", RULES, ids=RULE_IDS)
def test_a_question_with_a_preview_panel_beside_its_options(rules):
    rows = screen("question_two_options", "120x40")
    start = row_of(rows, "1. Postgres")
    end = row_of(rows, "Enter to select")
    rows[start : end + 1] = [
        "› 1. Postgres                      ┌──────────────────────────────────────┐",
        "  2. SQLite                        │ CREATE TABLE users (                 │",
        "  3. Type something.               │   id serial primary key,             │",
        "                                   │   name text not null                 │",
        "                                   │ );                                   │",
        "                                   └──────────────────────────────────────┘",
        "  4. Chat about this",
        "",
        "  Notes: press n to add notes",
        "",
        "Enter to select · ↑/↓ to navigate · n to add notes · Esc to cancel",
    ]
    observation = read(rows, rules)
    assert observation.state is AgentState.QUESTION, observation.evidence
    prompt = observation.prompt
    assert prompt.title == "Which database should we use?"
    assert [o.label for o in prompt.options] == ["Postgres", "SQLite", "Type something.", "Chat about this"]
    assert prompt.options[0].selected
    assert keys(observation, "option", "2") == ["2"]


TALL_QUESTION = "Which version of the settings page should we ship?"


@pytest.mark.parametrize("rules", RULES, ids=RULE_IDS)
@pytest.mark.parametrize("size", ["120x40", "80x24", "60x24", "44x30"])
def test_a_preview_box_taller_than_its_options_is_looked_past(rules, size):
    # Recorded (issue 42): the focused option's preview runs far below option 3,
    # and in a narrow pane its cut ("├─ ✂ ─ 24 lines hidden ─┤") wraps onto a row of its own.
    rows = screen("question_tall_preview", size)
    assert row_of(rows, "└") - row_of(rows, "3. Lazy") >= 5  # the box ends well under the options
    observation = read(rows, rules)
    assert observation.state is AgentState.QUESTION, observation.evidence
    assert observation.prompt.title == TALL_QUESTION
    assert [o.label for o in observation.prompt.options] == ["Sectioned", "Flat", "Lazy"]
    assert keys(observation, "option", "2") == ["2"]


@pytest.mark.parametrize("rules", RULES, ids=RULE_IDS)
def test_a_preview_box_drawn_below_its_options_is_looked_past(rules):
    # The same box moved under the options, as a renderer short of width would stack it.
    rows = screen("question_tall_preview", "120x40")
    top, bottom = row_of(rows, "┌"), row_of(rows, "└")
    column = rows[top].index("┌")
    box = [row[column:] for row in rows[top : bottom + 1]]
    options = [row[:column].rstrip() for row in rows[top : bottom + 1] if row[:column].strip()]
    rows[top : bottom + 1] = [*options, "", *box]
    observation = read(rows, rules)
    assert observation.state is AgentState.QUESTION, observation.evidence
    assert [o.label for o in observation.prompt.options] == ["Sectioned", "Flat", "Lazy"]


def test_only_a_closed_box_is_looked_past():
    # Without its bottom edge the rows are not a preview box but text under the
    # options, too much of it for a dialog: not read as a menu.
    rows = screen("question_tall_preview", "120x40")
    rows[row_of(rows, "└")] = ""
    assert read(rows).state is AgentState.UNKNOWN


PLAN_MENU = [
    " Would you like to proceed?",
    "",
    " ❯ 1. Yes, clear context and auto-accept edits (shift+tab)",
    "   2. Yes, auto-accept edits",
    "   3. Yes, manually approve edits",
    "   4. Type here to tell Claude what to change",
    "",
    " ctrl-g to edit in Vim · .claude/plans/config-parser-harmonic-hamster.md",
]


@pytest.mark.parametrize("rules", RULES, ids=RULE_IDS)
def test_the_plan_exit_menu_titled_would_you_like_to_proceed_is_a_plan(rules):
    rows = screen("permission_bash")
    top = row_of(rows, "Bash command") - 1
    rows[top + 1 :] = PLAN_MENU
    observation = read(rows, rules)
    assert observation.state is AgentState.PLAN, observation.evidence
    assert observation.prompt.tool == "ExitPlanMode"
    # y approves without throwing the conversation away, and keeps every edit asked.
    assert keys(observation, "approve") == ["3"]


@pytest.mark.parametrize("rules", RULES, ids=RULE_IDS)
@pytest.mark.parametrize("wants", ["navigate on example.com", "create a browser window and read your tabs"])
def test_claude_in_chrome_asking_is_a_permission_answered_by_allow_and_deny(rules, wants):
    rows = screen("permission_webfetch")
    top = row_of(rows, " Fetch") - 1
    rows[top + 1 :] = [
        f" Claude in Chrome wants to {wants}",
        "",
        " ❯ 1. Allow",
        "   2. Deny (esc)",
        "",
    ]
    observation = read(rows, rules)
    assert observation.state is AgentState.PERMISSION, observation.evidence
    assert observation.prompt.title == f"Claude in Chrome wants to {wants}"
    assert keys(observation, "approve") == ["1"]
    assert keys(observation, "deny") == ["2"]
