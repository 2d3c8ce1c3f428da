"""``y`` approves this one request or plan and widens nothing (detect/approval.py), on every family's recorded menus.

Issue 37: Claude Code 2.1.332's plan menu is "1. Yes, and use auto mode /
2. Yes, manually approve edits / 3. Tell Claude what to change"; the first
"Yes" switches Claude into auto mode, where it stops asking at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from headspace_tui.answering.keys import ActionError, WidensPermissions, plan_keys
from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.detect.approval import NOT_UNDERSTOOD, approval, widening
from headspace_tui.detect.families import BY_NAME
from headspace_tui.hooks.calls import PendingCall, hook_answer
from headspace_tui.model import AgentState, Observation, Option, Prompt
from tests.harness.record import PANES

# Words no option y picks may carry, while the menu offers one without them.
WIDE = ("auto mode", "auto-accept", "automatically accept", "auto-approve", "don't ask again", "always", "allow all", "clear context", "allow for this session")

MENUS = sorted(p for p in PANES.glob("*/*/*/*.ansi") if p.stem.startswith(("permission", "plan")))


def _id(path: Path) -> str:
    return "-".join(path.parts[-4:]).removesuffix(".ansi")


def read(path: Path) -> Observation:
    family = BY_NAME[path.parts[-4].split("-")[0]]
    return family.classify(path.read_text(encoding="utf-8", errors="replace"), command=family.name)


def menu(*labels: str, kind: str = "plan") -> Prompt:
    return Prompt(kind=kind, options=tuple(Option(str(n), label) for n, label in enumerate(labels, 1)))


@pytest.mark.parametrize(
    "labels,key",
    [
        # Claude Code 2.1.332's plan menu: never auto mode.
        (("Yes, and use auto mode", "Yes, manually approve edits", "Tell Claude what to change"), "2"),
        (("Yes, clear context and auto-accept edits (shift+tab)", "Yes, auto-accept edits", "Yes, manually approve edits", "Type here"), "3"),
        (("Yes, clear context (0% used) and use auto mode", "Yes, and use auto mode", "Yes, manually approve edits", "Tell Claude"), "3"),
        (("Yes, and auto-accept edits", "Yes, and manually approve edits", "No, keep planning"), "2"),
        (("Yes, automatically accept edits", "Yes, manually accept edits", "Type your feedback..."), "2"),  # Gemini
        # Leaving plan mode into the mode that asks each time is what approving the plan means.
        (("Yes, and switch to default (ask each time) for this session", "No"), "1"),
        # Permissions: the plain one, wherever it sits.
        (("Yes, and switch to auto mode", "Yes", "No"), "2"),
        (("Yes, and don't ask again for touch commands in /w", "Yes", "No"), "2"),
        (("Allow always", "Allow once", "Reject"), "2"),  # opencode's order turned round
        (("Allow for this session", "Allow once", "No, suggest changes (esc)"), "2"),
        (("Yes, allow all edits during this session (shift+tab)", "Yes", "No"), "2"),
        (("Yes, proceed", "Yes, and don't ask again for commands that start with `touch x`", "No"), "1"),
        (("Allow", "Deny (esc)"), "1"),
    ],
)
def test_y_picks_the_option_that_approves_only_this(labels, key):
    chosen = approval(menu(*labels))
    assert chosen is not None and chosen.option.key == key and chosen.widens == ""


@pytest.mark.parametrize(
    "labels,key,why",
    [
        (("Yes, and use auto mode", "Tell Claude what to change"), "1", "auto mode"),
        (("Yes, clear context and auto-accept edits", "Yes, auto-accept edits", "No"), "2", "every edit"),  # never clears the conversation first
        (("Yes, and don't ask again for Bash", "No"), "1", "stops asking"),
        # A label cut short at the pane's edge may hide what it does: not a plain "Yes".
        (("Yes, and switch to…", "No"), "1", NOT_UNDERSTOOD),
    ],
)
def test_where_every_approval_widens_y_names_it_and_what_it_does(labels, key, why):
    chosen = approval(menu(*labels))
    assert chosen is not None and chosen.option.key == key
    assert why in chosen.widens


def test_nothing_approves_where_no_option_says_yes_or_allow():
    assert approval(menu("Confirm", "Cancel")) is None
    assert approval(None) is None
    assert widening("Yes") == "" and widening("Allow once") == "" and widening("Yes, manually approve edits") == ""


@pytest.mark.parametrize("path", MENUS, ids=_id)
def test_on_every_recorded_approval_menu_y_never_widens(path):
    """Every family, every version: y's option carries none of the widening words, and the bar has nothing to confirm."""
    seen = read(path)
    if seen.state not in (AgentState.PERMISSION, AgentState.PLAN):
        pytest.skip(f"{seen.state.value}: not an approval menu")
    chosen = approval(seen.prompt)
    if chosen is None:
        assert seen.prompt is not None and not any(o.label.lower().startswith(("yes", "allow")) for o in seen.prompt.options)
        return
    label = chosen.option.label.lower()
    assert not any(word in label for word in WIDE), chosen
    assert chosen.widens == ""
    if seen.state is AgentState.PLAN and any("manually" in o.label.lower() for o in seen.prompt.options):
        assert "manually" in label  # the corpus's plan menus: the one that keeps the user asked


def test_claude_2_1_332_plan_menu_is_approved_manually():
    """The real menu, recorded from 2.1.332 (issue 37): y sends the digit of "Yes, manually approve edits"."""
    paths = sorted(PANES.glob("claude-2.1.332/*/*/plan_exit_plan_mode.ansi"))
    assert paths, "record it: python -m tests.harness.record --version 2.1.332"
    for path in paths:
        seen = read(path)
        assert seen.state is AgentState.PLAN
        labels = [o.label for o in seen.prompt.options]
        assert labels[:2] == ["Yes, and use auto mode", "Yes, manually approve edits"], labels
        assert [k for s in plan_keys(seen, Intent(IntentKind.APPROVE), family=BY_NAME["claude"]) for k in s.keys] == ["2"]


def test_claude_2_1_332_permission_menu_is_approved_by_its_plain_yes():
    paths = sorted(PANES.glob("claude-2.1.332/*/*/permission_*.ansi"))
    assert paths, "record it: python -m tests.harness.record --version 2.1.332"
    for path in paths:
        seen = read(path)
        assert seen.state is AgentState.PERMISSION
        assert any("auto mode" in o.label for o in seen.prompt.options) or json.loads(path.with_suffix(".json").read_text())["scenario"] != "permission_bash"
        chosen = approval(seen.prompt)
        assert chosen is not None and chosen.option.label == "Yes"
        assert [k for s in plan_keys(seen, Intent(IntentKind.APPROVE), family=BY_NAME["claude"]) for k in s.keys] == [chosen.option.key]


def test_the_approve_key_sends_nothing_where_every_approval_widens_and_says_which_option_to_pick():
    seen = Observation(AgentState.PLAN, menu("Yes, and use auto mode", "Tell Claude what to change"))
    with pytest.raises(WidensPermissions) as refused:
        plan_keys(seen, Intent(IntentKind.APPROVE), family=BY_NAME["claude"])
    assert "auto mode" in str(refused.value) and "--option 1" in str(refused.value)
    assert isinstance(refused.value, ActionError)  # every front end reports it as a refusal: nothing sent
    # A digit is a deliberate choice: it still picks any option.
    assert [k for s in plan_keys(seen, Intent(IntentKind.OPTION, option="1"), family=BY_NAME["claude"]) for k in s.keys] == ["1"]


def _call(tool: str = "Bash") -> PendingCall:
    return PendingCall(id=1, pane_id="%1", pid=1, session_id="s", tool_name=tool, tool_input={"command": "touch x"}, cwd="/w")


def test_the_hooks_allow_approves_this_call_only_and_a_widening_digit_goes_by_keys():
    """The hook's ``allow`` carries no ``updatedPermissions``; the digit of a widening option is never turned into an allow."""
    shown = Observation(AgentState.PERMISSION, menu("Yes", "Yes, and switch to auto mode", "Yes, and don't ask again for touch", "No", kind="permission"))
    approve = hook_answer(_call(), shown, "approve")
    assert approve is not None and approve.decision == {"behavior": "allow"}
    assert "updatedPermissions" not in json.dumps(approve.decision)
    assert hook_answer(_call(), shown, "option", "1").decision == {"behavior": "allow"}
    assert hook_answer(_call(), shown, "option", "2") is None
    assert hook_answer(_call(), shown, "option", "3") is None


def test_the_hook_program_never_hands_claude_a_permission_rule():
    """Whatever reaches the hook program, what it prints for Claude carries no ``updatedPermissions`` (its fields are a whitelist)."""
    from headspace_tui.hooks.program import _decision

    widened = {"decision": {"behavior": "allow", "updatedPermissions": [{"type": "setMode", "mode": "bypassPermissions", "destination": "session"}]}}
    out = _decision(json.dumps(widened).encode())
    assert out == {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
