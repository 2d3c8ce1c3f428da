"""Codex CLI's reader on every recorded screen, its process recognition and its own signals.

The corpus (``snapshots/panes/codex-<version>/``) is recorded from the real
binaries by ``python -m tests.harness.record_codex``; the process tables are
the trees seen under a pane running 0.169.0 (``ps --forest``), written out
by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from headspace_tui.detect.approval import approval
from headspace_tui.detect.codex import FAMILY, classify, classify_capture, classify_pane
from headspace_tui.detect.codex.process import is_command, recognise, version_of
from headspace_tui.detect.codex.screen import box_text
from headspace_tui.detect.codex.signals import title_observation
from headspace_tui.detect.families import CLAUDE, family_of_process, find_agent
from headspace_tui.model import AgentState
from headspace_tui.shared.proctree import ProcessInfo, ProcessTable

PANES = Path(__file__).resolve().parents[2] / "snapshots" / "panes"
SCREENS = sorted(PANES.glob("codex-*/*/*/*.json"))
VERSIONS = sorted({path.relative_to(PANES).parts[0] for path in SCREENS})


def _id(path: Path) -> str:
    return "/".join(path.relative_to(PANES).with_suffix("").parts)


def _load(path: Path) -> tuple[dict, str]:
    return json.loads(path.read_text()), path.with_suffix(".ansi").read_text()


# Versions recorded in full; the others hold the screens that date a rule (0.154/0.155/0.160.1: where finished turns are marked).
FULL = ["codex-0.144.0", "codex-0.169.0"]


def test_the_corpus_has_two_versions_months_apart_and_every_state_codex_has():
    assert set(FULL) <= set(VERSIONS)
    assert {"codex-0.154.0", "codex-0.155.0", "codex-0.160.1"} <= set(VERSIONS)
    for version in FULL:
        states = {json.loads(p.read_text())["expected"]["state"] for p in SCREENS if p.relative_to(PANES).parts[0] == version}
        assert states >= {"starting", "idle", "working", "permission", "input", "error", "exited"}, version
    # request_user_input exists in 0.169.0's Plan mode only (0.144.0 refuses it outside Plan mode, and has no shift+tab to it).
    assert any(p.stem == "question_plan_mode" for p in SCREENS if p.relative_to(PANES).parts[0] == "codex-0.169.0")


@pytest.mark.parametrize("path", SCREENS, ids=_id)
def test_every_recorded_screen_reads_as_labelled(path):
    meta, ansi = _load(path)
    expected = meta["expected"]
    seen = classify_pane(ansi, title=meta["pane_title"], command=meta["pane_command"], version=meta["version"])
    assert seen.state.value == expected["state"], [str(e) for e in seen.evidence]
    assert seen.evidence, "every observation says why"
    if "tool" in expected:
        assert seen.tool == expected["tool"]
    if "detail" in expected:
        assert seen.prompt is not None and seen.prompt.detail == expected["detail"]
    if "options" in expected:
        assert seen.option_labels == expected["options"]
    if "question" in expected:
        assert seen.question == expected["question"]
    assert seen.retrying is expected.get("retrying", False)


# Before 0.155 Codex hides its status row while a reply streams and marks no finished turn: only the title tells (pane.py).
TITLE_ONLY = {
    "codex-0.144.0/inline/80x24/working_streaming",
    "codex-0.144.0/inline/120x40/working_streaming",
    "codex-0.154.0/inline/80x24/working_streaming",
}


@pytest.mark.parametrize("path", SCREENS, ids=_id)
def test_the_screen_alone_reads_every_screen_but_a_streaming_reply_of_0_144(path):
    meta, ansi = _load(path)
    seen = classify_capture(ansi, command=meta["pane_command"], version=meta["version"])
    if _id(path) in TITLE_ONLY:
        assert seen.state is AgentState.IDLE and classify_pane(ansi, title="work", version=meta["version"]).state is AgentState.IDLE
    else:
        assert seen.state.value == meta["expected"]["state"], [str(e) for e in seen.evidence]


@pytest.mark.parametrize("path", SCREENS, ids=_id)
def test_no_screen_that_needs_you_reads_as_one_that_does_not_even_without_the_pane_command_or_version(path):
    meta, ansi = _load(path)
    seen = classify_pane(ansi, title=meta["pane_title"])
    needs = AgentState(meta["expected"]["state"]).needs_you
    assert seen.state.needs_you is needs or seen.state is AgentState(meta["expected"]["state"]), [str(e) for e in seen.evidence]
    if needs:
        assert seen.state is AgentState(meta["expected"]["state"])


@pytest.mark.parametrize("path", [p for p in SCREENS if p.stem.startswith("permission")], ids=_id)
def test_the_approval_dialog_is_answered_with_codexs_own_keys_found_by_label(path):
    meta, ansi = _load(path)
    prompt = classify_capture(ansi, version=meta["version"]).prompt
    assert prompt is not None
    assert [o.key for o in prompt.options] == ["y", "p", "Escape"]
    yes = approval(prompt)
    assert yes is not None and yes.option.key == "y" and not yes.widens  # "Yes, proceed", never "don't ask again"
    assert prompt.no is not None and prompt.no.key == "Escape"
    assert prompt.options[0].selected


@pytest.mark.parametrize("path", [p for p in SCREENS if p.stem == "question_plan_mode"], ids=_id)
def test_a_plan_mode_question_is_answered_by_digit_and_its_descriptions_are_not_labels(path):
    meta, ansi = _load(path)
    prompt = classify_capture(ansi, version=meta["version"]).prompt
    assert prompt is not None and prompt.kind == "question"
    assert [o.key for o in prompt.options] == ["1", "2", "3"]  # a digit picks and submits (measured: "2" sent SQLite to the API)
    assert (prompt.question_index, prompt.question_count) == (1, 1)
    assert prompt.options[0].selected and not prompt.free_text


DRAFT = "please also update the snapshot files of the parser tests and keep the old ones for the changelog"


@pytest.mark.parametrize("path", SCREENS, ids=_id)
def test_the_composer_says_what_it_holds_its_dim_placeholder_is_empty_and_a_dialog_has_none(path):
    meta, ansi = _load(path)
    held = box_text(ansi)
    if path.stem == "idle_draft":
        assert held == DRAFT  # its wrapped rows joined
    elif meta["expected"]["state"] in ("permission", "question", "starting", "exited") and path.stem != "starting_loading":  # loading: its composer is there, empty
        assert held is None
    else:
        assert held == ""  # "Ask Codex to do anything", "Find and fix a bug in @filename": a placeholder, not a draft


def test_a_prompt_keeps_its_fingerprint_when_read_again_and_at_another_size_and_a_new_command_changes_it():
    def read(version: str, size: str, name: str) -> str:
        path = PANES / f"codex-{version}" / ("alt" if version == "0.169.0" else "inline") / size / f"{name}.ansi"
        prompt = classify_capture(path.read_text(), version=version).prompt
        assert prompt is not None and prompt.fingerprint
        return prompt.fingerprint

    touch = read("0.169.0", "120x40", "permission_touch")
    assert touch == read("0.169.0", "120x40", "permission_touch")
    assert touch == read("0.169.0", "80x24", "permission_touch")
    assert touch != read("0.169.0", "120x40", "permission_long_command")
    assert read("0.144.0", "120x40", "input_question") != read("0.169.0", "120x40", "permission_touch")


def test_a_reply_that_quotes_an_approval_dialog_is_not_a_live_one():
    screen = "\n".join(
        [
            "› how do approvals look?",
            "",
            "• Like this:",
            "  Would you like to run the following command?",
            "  $ touch x",
            "› 1. Yes, proceed (y)",
            "  2. No, and tell Codex what to do differently (esc)",
            "",
            "  Worked for 2s • 13:40",
            "",
            "› Ask Codex to do anything",
            "",
            "  gpt-5.1-codex default · /work",
        ]
    )
    assert classify(screen, version="0.169.0").state is AgentState.IDLE


def test_the_shell_back_in_the_pane_is_exited_and_another_program_is_not_codex():
    assert classify("anything", command="bash").state is AgentState.EXITED
    assert classify("anything", command="vim").state is AgentState.UNKNOWN
    assert classify("", command="codex").state is AgentState.STARTING


# ---------------------------------------------------------------------------
# Processes: the trees under a pane running 0.169.0 (node 20 spawns the native binary).

LAUNCHER = "/home/u/.npm-global/lib/node_modules/@openai/codex/bin/codex.js"
NATIVE = "/home/u/.npm-global/lib/node_modules/@openai/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
DAEMON = "/home/u/.codex/packages/app-server-daemon/releases/0.169.0-x86_64-unknown-linux-musl/bin/codex"


def _tree(*, orphaned: bool = False) -> ProcessTable:
    daemon_parent = 1 if orphaned else 300
    return ProcessTable.of(
        [
            ProcessInfo(100, 1, "bash", ("bash",)),
            ProcessInfo(200, 100, "node", ("node", LAUNCHER)),
            ProcessInfo(300, 200, "codex", (NATIVE,)),
            ProcessInfo(400, daemon_parent, "codex", (DAEMON, "app-server", "--listen", "unix://", "--analytics-default-enabled", "--managed-daemon")),
            ProcessInfo(401, daemon_parent, "codex", (DAEMON, "app-server", "daemon", "pid-update-loop")),
            ProcessInfo(500, 300, "bash", ("/bin/bash", "-c", "touch x")),
        ]
    )


def test_the_native_binary_is_the_one_codex_process_not_its_node_launcher_nor_its_daemon():
    table = _tree()
    assert [pid for pid, info in table.processes.items() if recognise(info)] == [300]
    assert find_agent(100, table) == (300, FAMILY)


def test_the_daemon_left_running_after_the_pane_closed_is_no_agent():
    table = _tree(orphaned=True)
    assert not recognise(table.processes[400]) and not recognise(table.processes[401])
    assert find_agent(1, ProcessTable.of([table.processes[400], table.processes[401]])) is None


def test_a_launcher_that_execs_the_binary_and_codex_options_still_read_as_codex():
    assert recognise(ProcessInfo(200, 100, "codex", (NATIVE, "--no-alt-screen", "-a", "on-request")))
    assert recognise(ProcessInfo(200, 100, "codex", ("codex", "resume", "--last")))
    assert not recognise(ProcessInfo(200, 100, "codex", ("codex", "login")))
    assert not recognise(ProcessInfo(200, 100, "codex", ("codex", "-c", "x=1", "app-server")))


def test_codex_and_claude_never_claim_each_others_process():
    assert family_of_process(ProcessInfo(300, 200, "codex", (NATIVE,))) is FAMILY
    assert family_of_process(ProcessInfo(300, 200, "claude", ("claude",))) is CLAUDE
    assert family_of_process(ProcessInfo(200, 100, "node", ("node", LAUNCHER))) is None


def test_the_pane_command_of_a_running_codex_is_its_binary_or_node():
    assert is_command("codex") and is_command("node") and not is_command("bash") and not is_command("claude")


def test_the_version_comes_from_the_install_beside_the_binary_and_a_hostile_file_is_not_read(tmp_path):
    vendor = tmp_path / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl"
    (vendor / "bin").mkdir(parents=True)
    (vendor / "bin" / "codex").write_text("")
    (vendor / "codex-package.json").write_text('{"layoutVersion": 1, "version": "0.169.0", "variant": "codex"}')
    info = ProcessInfo(4242, 1, "codex", (str(vendor / "bin" / "codex"),))
    assert version_of(info, proc=str(tmp_path / "no-proc")) == "0.169.0"
    (vendor / "codex-package.json").write_text('{"version": "not a version"}')
    (tmp_path / "codex-linux-x64" / "package.json").write_text('{"name": "@openai/codex", "version": "0.144.0-linux-x64"}')
    assert version_of(info, proc=str(tmp_path / "no-proc")) == "0.144.0"
    (tmp_path / "codex-linux-x64" / "package.json").write_text("{" * 100000)
    assert version_of(info, proc=str(tmp_path / "no-proc")) is None


# ---------------------------------------------------------------------------
# Signals: bytes as tmux control mode's %output carried them from 0.169.0.


def test_the_title_says_working_or_action_required_and_nothing_sure_otherwise():
    working = title_observation("⠹ Scripted task | work")
    assert working is not None and working.state is AgentState.WORKING
    for title in ("[ ! ] Action Required | Scripted task | work", "[ . ] Action Required | work"):
        waiting = title_observation(title)
        assert waiting is not None and waiting.state is AgentState.PERMISSION
    assert title_observation("Scripted task | work") is None
    assert title_observation("work") is None


def test_classify_reads_a_saved_pane_with_its_title_as_the_live_pane_is_read():
    """``headspace classify --title``: a bug report's saved pane of a streaming 0.144 reply is working, as live; without the title, idle."""
    path = PANES / "codex-0.144.0/inline/80x24/working_streaming.json"
    meta = json.loads(path.read_text())
    base = [sys.executable, "-m", "headspace_tui", "classify", "--agent", "codex", "--command", meta["pane_command"], "--json", str(path.with_suffix(".ansi"))]
    with_title = subprocess.run([*base, "--title", meta["pane_title"]], capture_output=True, text=True, timeout=60, check=True)
    without = subprocess.run(base, capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(with_title.stdout)["state"] == "working"
    assert json.loads(without.stdout)["state"] == "idle"
    # The title is data: control characters in it never reach the terminal.
    hostile = subprocess.run([*base[:-2], "--title", "\x1b]0;pwn\x07⠇ work\x1b[2J", str(path.with_suffix(".ansi"))], capture_output=True, text=True, timeout=60, check=True)
    assert "\x1b" not in hostile.stdout and "\x07" not in hostile.stdout
