"""The agent-family registry and what the core does with a row's family (pure parts)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace as _replace
from pathlib import Path

import pytest

from headspace_tui.answering.keys import ActionError, KeyStroke, answer_key, plan_keys
from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.api.facade import ServiceError
from headspace_tui.detect.families import BY_NAME, CLAUDE, FAMILIES, UnknownFamily, family_named, find_agent
from headspace_tui.model import Agent, AgentState, Observation, Option, Prompt
from headspace_tui.service.facade import Service
from headspace_tui.service.records.scan import screen_observation
from headspace_tui.shared.proctree import ProcessInfo, ProcessTable
from headspace_tui.tmux.server import PaneRecord


def test_every_family_is_registered_once_under_its_own_name():
    assert [f.name for f in FAMILIES] == list(BY_NAME)
    assert len(set(BY_NAME)) == len(FAMILIES) and FAMILIES[0] is CLAUDE


def test_a_family_is_found_by_name_case_aside_and_an_unknown_one_is_named_with_the_known_ones():
    assert family_named(" Claude ") is CLAUDE
    with pytest.raises(UnknownFamily, match="known: claude"):
        family_named("aider")


def test_the_agent_nearest_the_pane_is_found_with_its_family():
    table = ProcessTable.of(
        [
            ProcessInfo(100, 1, "bash", ("bash",)),
            ProcessInfo(200, 100, "claude", ("claude",)),
            ProcessInfo(300, 200, "claude", ("claude", "-p", "sub")),  # an agent Claude started: not the pane's
        ]
    )
    assert find_agent(100, table) == (200, CLAUDE)
    assert find_agent(300, table) == (300, CLAUDE)


def test_a_pane_with_no_agent_has_none():
    table = ProcessTable.of([ProcessInfo(100, 1, "bash", ("bash",)), ProcessInfo(101, 100, "vim", ("vim", "x"))])
    assert find_agent(100, table) is None


@pytest.mark.parametrize(("key", "fits"), [("1", True), ("y", True), ("a", True), ("Enter", True), ("Escape", True), ("", False), (" ", False), ("yes", False), ("\x1b", False)])
def test_an_option_key_is_one_printable_key_or_a_named_one_never_a_word(key, fits):
    assert answer_key(key) is fits


def _menu(*options: Option) -> Observation:
    return Observation(AgentState.PERMISSION, prompt=Prompt(kind="permission", title="Run?", options=options, fingerprint="f"))


def test_a_family_whose_menu_takes_letters_is_answered_with_the_letter_its_reader_found():
    menu = _menu(Option("y", "Yes, proceed"), Option("a", "Yes, and don't ask again"), Option("n", "No, and tell me what to do"))
    assert plan_keys(menu, Intent(IntentKind.APPROVE), family_named("codex")) == [KeyStroke(("y",))]
    assert plan_keys(menu, Intent(IntentKind.DENY), family_named("codex")) == [KeyStroke(("n",))]


def test_an_option_without_a_key_is_never_guessed():
    with pytest.raises(ActionError, match="no keys to pick"):
        plan_keys(_menu(Option("", "Yes"), Option("", "No")), Intent(IntentKind.APPROVE), family_named("claude"))


def test_classify_names_the_known_agents_for_an_unknown_one(tmp_path):
    capture = tmp_path / "pane.txt"
    capture.write_text("$ \n")
    done = subprocess.run([sys.executable, "-m", "headspace_tui", "classify", "--agent", "aider", str(capture)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "unknown agent 'aider' (known: claude" in done.stderr and "Traceback" not in done.stderr


def test_reject_is_a_refusal_by_its_label():
    menu = _menu(Option("Enter", "Allow once"), Option("Right Enter", "Allow always"), Option("Escape", "Reject"))
    assert menu.prompt is not None and menu.prompt.no == Option("Escape", "Reject")
    assert plan_keys(menu, Intent(IntentKind.DENY), family_named("opencode")) == [KeyStroke(("Escape",))]


def test_a_family_that_needs_two_presses_to_interrupt_gets_both():
    working = Observation(AgentState.WORKING)
    assert plan_keys(working, Intent(IntentKind.INTERRUPT), family_named("claude")) == [KeyStroke(("Escape",))]
    assert plan_keys(working, Intent(IntentKind.INTERRUPT), family_named("opencode")) == [KeyStroke(("Escape",)), KeyStroke(("Escape",))]


def test_a_family_that_reads_its_title_gets_it_where_the_monitor_and_status_read_a_pane():
    """Codex 0.144 draws a reply still streaming exactly as a finished one: only the title's spinner says working."""
    base = Path(__file__).resolve().parents[2] / "snapshots" / "panes" / "codex-0.144.0" / "inline" / "80x24" / "working_streaming"
    meta = json.loads(base.with_suffix(".json").read_text())
    ansi = base.with_suffix(".ansi").read_text()
    record = PaneRecord("%1", "$1", "s", 0, 0, "s:0.0", 10, meta["pane_command"], "/w", 80, 24, False, False, meta["pane_title"], False, None)
    codex = family_named("codex")
    assert screen_observation(record, 11, ansi, "0.144.0", codex).state is AgentState.WORKING  # the listing's title
    assert screen_observation(_replace(record, title="work"), 11, ansi, "0.144.0", codex, meta["pane_title"]).state is AgentState.WORKING  # the title read now wins
    assert screen_observation(record, 11, ansi, "0.144.0", codex, "work").state is not AgentState.WORKING  # the screen alone cannot tell


def test_stop_and_restart_refuse_another_family_in_one_line_rather_than_typing_claudes_exit():
    codex = Agent(pane_id="%4", target="work:0.0", session="work", family="codex")
    with pytest.raises(ServiceError, match=r"work:0\.0: Stop and Restart know Claude Code's /exit only; stop codex in its pane"):
        Service._claude_only(codex)
    Service._claude_only(Agent(pane_id="%5", target="main:0.0", session="main"))  # Claude's: no refusal
