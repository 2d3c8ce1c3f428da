"""Gemini CLI's reader on every recorded screen, its process recognition, its title.

The corpus (``snapshots/panes/gemini-<version>/``) was recorded from the
real binaries by ``python -m tests.harness.record_gemini --version V``; each
screen's label was checked by eye against its ``.txt``.  The process tables
are the trees seen under a real pane (``ps -ef --forest``), written out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from headspace_tui.detect.approval import approval
from headspace_tui.detect.families import BY_NAME, find_agent
from headspace_tui.detect.gemini import FAMILY, box_text, classify_capture, is_gemini_command, recognise, version_of
from headspace_tui.model import NEEDS_YOU, AgentState
from headspace_tui.shared.proctree import ProcessInfo, ProcessTable
from tests.harness.gemini_agent import GEMINI_RECORDED
from tests.harness.record_gemini import PANES, SCENARIOS, SIZES, plain_text

SCREENS = sorted(PANES.glob("gemini-*/inline/*/*.json"))
IDS = [str(p.relative_to(PANES).with_suffix("")).removeprefix("gemini-") for p in SCREENS]


def load(meta_path: Path) -> tuple[str, dict]:
    return meta_path.with_suffix(".ansi").read_text(), json.loads(meta_path.read_text())


def words(text: str) -> str:
    return " ".join(text.split())


def test_the_corpus_holds_every_scenario_of_both_versions_at_both_sizes():
    on_disk = sorted(p.name.removeprefix("gemini-") for p in PANES.glob("gemini-*"))
    assert on_disk == sorted(GEMINI_RECORDED)
    for version in GEMINI_RECORDED:
        for scenario in SCENARIOS:
            if not scenario.applies_to(version):
                continue
            for width, height in SIZES:
                meta_path = PANES / f"gemini-{version}" / "inline" / f"{width}x{height}" / f"{scenario.name}.json"
                assert meta_path.exists(), f"missing {meta_path}"
                ansi, meta = load(meta_path)
                assert (meta["agent"], meta["version"], meta["width"], meta["height"]) == ("gemini", version, width, height)
                assert meta["expected"] == {"state": scenario.state, **scenario.expected}, "re-record: the scenario changed"
                assert meta["alternate_on"] is False
                assert meta_path.with_suffix(".txt").read_text() == plain_text(ansi)
    states = {json.loads(p.read_text())["expected"]["state"] for p in SCREENS}
    assert states >= {"starting", "idle", "working", "permission", "question", "plan", "input", "error", "exited"}


@pytest.mark.parametrize("meta_path", SCREENS, ids=IDS)
def test_every_recorded_screen_reads_as_its_label(meta_path: Path):
    ansi, meta = load(meta_path)
    expected = meta["expected"]
    obs = classify_capture(ansi, command=meta["pane_command"], version=meta["version"])
    assert obs.state.value == expected["state"], [str(e) for e in obs.evidence]
    assert obs.evidence, "every observation says why"
    assert obs.retrying == expected.get("retrying", False)
    if "tool" in expected:
        assert obs.prompt is not None and obs.prompt.tool == expected["tool"]
    if "detail" in expected:
        assert obs.prompt is not None and words(obs.prompt.detail) == words(expected["detail"])
    if "options" in expected:
        assert obs.option_labels == expected["options"]
    if "question" in expected:
        assert obs.prompt is not None and words(obs.prompt.title) == words(expected["question"])
    if obs.prompt is not None and obs.prompt.options:
        assert [o.key for o in obs.prompt.options] == [str(n) for n in range(1, len(obs.prompt.options) + 1)]
        assert obs.prompt.fingerprint
    # Without the command (a remote host that could not tell): the same reading.
    assert classify_capture(ansi).state == obs.state


@pytest.mark.parametrize("meta_path", [p for p in SCREENS if p.stem.startswith("permission")], ids=lambda p: f"{p.parent.parent.parent.name}-{p.parent.name}-{p.stem}")
def test_a_permission_is_answered_by_the_digits_of_its_labels(meta_path: Path):
    ansi, _ = load(meta_path)
    prompt = classify_capture(ansi).prompt
    assert prompt is not None and prompt.kind == "permission"
    yes = approval(prompt)
    assert yes is not None and (yes.option.key, yes.option.label) == ("1", "Allow once") and not yes.widens
    assert prompt.no is not None and prompt.no.label.startswith("No, suggest changes")
    assert prompt.no.key == str(len(prompt.options))


@pytest.mark.parametrize("version", GEMINI_RECORDED)
def test_a_plans_numbered_steps_are_not_its_options(version: str):
    """The plan approval lists the plan's steps (1. 2. 3.) above its own options; only the options take keys."""
    prompt = classify_capture(_screen(version, "80x24", "plan")).prompt
    assert prompt is not None and prompt.kind == "plan"
    # y approves the plan and keeps every edit asked: never "automatically accept edits".
    yes = approval(prompt)
    assert yes is not None and (yes.option.key, yes.option.label) == ("2", "Yes, manually accept edits") and not yes.widens
    assert prompt.no is None and prompt.deny_key == "Escape"  # "Esc to cancel" refuses it
    assert "Cover both with tests." in prompt.detail


def test_no_screen_of_an_agent_that_needs_you_reads_as_one_that_does_not():
    for meta_path in SCREENS:
        ansi, meta = load(meta_path)
        if AgentState(meta["expected"]["state"]) in NEEDS_YOU:
            assert classify_capture(ansi, command=meta["pane_command"]).state.needs_you, meta_path


def _screen(version: str, size: str, name: str) -> str:
    return (PANES / f"gemini-{version}" / "inline" / size / f"{name}.ansi").read_text()


def test_the_fingerprint_is_the_prompts_own_text():
    shell = _screen("0.61.0", "120x40", "permission_shell")
    first = classify_capture(shell).prompt
    again = classify_capture(shell).prompt
    assert first is not None and again is not None and first.fingerprint == again.fingerprint
    # The same dialog at another size: the same prompt.
    other_size = classify_capture(_screen("0.61.0", "80x24", "permission_shell")).prompt
    assert other_size is not None and other_size.fingerprint == first.fingerprint
    # Another command: another prompt.
    longer = classify_capture(_screen("0.61.0", "120x40", "permission_long_command")).prompt
    assert longer is not None and longer.fingerprint != first.fingerprint
    edited = classify_capture(plain_text(shell).replace("touch x", "touch y")).prompt
    assert edited is not None and edited.fingerprint != first.fingerprint and edited.detail == "touch y"
    # The cursor moving to another option is not another prompt.
    moved = shell.replace("●", " ", 1)
    moved_prompt = classify_capture(moved).prompt
    assert moved_prompt is not None and moved_prompt.fingerprint == first.fingerprint


@pytest.mark.parametrize("version", GEMINI_RECORDED)
def test_an_error_whose_head_scrolled_off_a_short_pane_is_still_an_error(version: str):
    rows = plain_text(_screen(version, "80x24", "error")).split("\n")
    head = next(i for i, line in enumerate(rows) if line.startswith("✕ "))
    obs = classify_capture("\n".join(rows[head + 1 :]))  # the ✕ row and all above it gone
    assert obs.state is AgentState.ERROR and "This request failed" in obs.error


def test_a_dialog_quoted_in_the_history_is_not_live():
    """An old approval box scrolled into the history, with the input box under it, is idle."""
    idle = _screen("0.61.0", "120x40", "idle_after_reply").split("\n")
    dialog = [line for line in _screen("0.61.0", "120x40", "permission_shell").split("\n") if "│" in line or "╭" in line or "╰" in line]
    box_row = next(i for i, line in enumerate(idle) if "Type your message" in line) - 6
    screen = "\n".join(idle[: box_row - len(dialog)] + dialog + idle[box_row:])
    assert classify_capture(screen).state is AgentState.IDLE


@pytest.mark.parametrize("command", ["echo sign in", "Get started", "Do you trust the files in this folder?"])
def test_a_shell_command_that_sounds_like_a_start_up_dialog_is_still_a_permission(command: str):
    shell = plain_text(_screen("0.61.0", "120x40", "permission_shell")).replace("touch x", command)
    obs = classify_capture(shell)
    assert obs.state is AgentState.PERMISSION and obs.prompt is not None and obs.prompt.detail == command


@pytest.mark.parametrize("version", GEMINI_RECORDED)
def test_the_sign_in_choice_is_starting_not_an_approval_of_a_tool(version: str):
    """Its title "? Get started" looks like a tool approval's "? Shell  touch x"."""
    obs = classify_capture(_screen(version, "120x40", "starting_signin"))
    assert obs.state is AgentState.STARTING and obs.prompt is not None and obs.prompt.tool == ""
    assert obs.option_labels == ["Sign in with Google", "Use Gemini API Key", "Vertex AI"]


@pytest.mark.parametrize("name", ["idle", "idle_with_draft", "working", "input", "error"])
def test_without_truecolor_the_box_edges_are_blank_rows(name: str):
    """Without COLORTERM=truecolor Gemini draws the half-block edges as blank rows (seen on 0.61.0): same reading."""
    text = plain_text(_screen("0.61.0", "80x24", name))
    blank_edges = "\n".join("" if line and set(line) <= {"▄", "▀"} else line for line in text.split("\n"))
    assert blank_edges != text
    assert classify_capture(blank_edges).state == classify_capture(text).state


def test_hostile_screens_are_read_quickly_and_without_error():
    """Long blank box rows once made the option pattern backtrack: a second per read."""
    import time

    box = ["╭" + "─" * 1998 + "╮"] + ["│" + " " * 1990 + "1x" + " " * 6 + "│"] * 30 + ["│ ● 1. Allow once" + " " * 1980 + "│", "╰" + "─" * 1998 + "╯"]
    started = time.perf_counter()
    obs = classify_capture("\n".join(box))
    assert time.perf_counter() - started < 0.5  # the regression took a second; 2-30 ms here, so a 5x slower machine passes
    assert obs.state.needs_you
    hostile = plain_text(_screen("0.61.0", "120x40", "permission_shell")).replace("touch x", "touch \x07x\x9b\x1b]0;pwned\x07")
    prompt = classify_capture(hostile).prompt
    assert prompt is not None and prompt.detail == "touch x"  # no control character reaches a display
    for noise in ("", "\x00\x1b[31m\x1b]0;x\x07\x9b", "\n" * 500, "╰──────╯", "│ ● 1. x │\n╰──────╯", "─" * 80 + "\n > "):
        assert classify_capture(noise).evidence


# ---------------------------------------------------------------------------
# the process

BIN = "/root/.cache/headspace-tests/gemini-0.61.0/node_modules/.bin/gemini"
TREE = ProcessTable.of(
    [
        ProcessInfo(100, 1, "tmux: server", ("tmux", "-L", "x")),
        ProcessInfo(101, 100, "bash", ("bash", "--norc", "--noprofile", "-i")),
        ProcessInfo(102, 101, "node", ("node", BIN)),  # the launcher, as the bin's shebang runs it
        ProcessInfo(103, 102, "node", ("/usr/bin/node", "--max-old-space-size=12052", BIN)),  # the CLI it relaunched
        ProcessInfo(104, 103, "bash", ("bash", "-c", "touch x")),  # a tool it runs
        # Another pane: Codex with its daemon, and Claude: not Gemini.
        ProcessInfo(200, 100, "bash", ("bash",)),
        ProcessInfo(201, 200, "node", ("node", "/x/node_modules/.bin/codex")),
        ProcessInfo(202, 201, "codex", ("/x/codex-linux-x64/vendor/bin/codex",)),
        ProcessInfo(203, 202, "codex", ("/h/codex/packages/app-server-daemon/bin/codex", "app-server", "--listen", "unix://", "--managed-daemon")),
        ProcessInfo(300, 100, "bash", ("bash",)),
        ProcessInfo(301, 300, "claude", ("claude",)),
    ]
)


def test_the_launcher_is_the_one_process_that_is_the_agent():
    matching = [pid for pid, info in TREE.processes.items() if recognise(info)]
    assert matching == [102]
    found = find_agent(101, TREE)
    assert found is not None and found[0] == 102 and found[1] is FAMILY
    assert BY_NAME["gemini"] is FAMILY


def test_other_agents_and_daemons_are_not_gemini():
    for pid in (201, 202, 203, 301):
        assert not recognise(TREE.processes[pid])
    found = find_agent(300, TREE)
    assert found is not None and found[1].name == "claude"
    assert not BY_NAME["claude"].recognise(TREE.processes[102])


def test_without_the_relaunch_the_single_process_is_the_agent():
    for argv in (("node", BIN), ("node", "--no-warnings", "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js"), ("nodejs", "gemini")):
        assert recognise(ProcessInfo(5, 1, "node", argv)), argv
    assert not recognise(ProcessInfo(5, 1, "node", ("node", "/srv/app/server.js")))
    assert not recognise(ProcessInfo(5, 1, "node", ("node",)))
    assert not recognise(ProcessInfo(5, 1, "gemini", ()))
    # A single-executable build, typed by name, and the copy of itself it relaunches.
    assert recognise(ProcessInfo(5, 1, "gemini", ("gemini", "--yolo")))
    assert not recognise(ProcessInfo(6, 5, "gemini", ("/opt/gemini/gemini", "--yolo")))


def test_the_version_comes_from_the_installs_package_json(tmp_path: Path):
    package = tmp_path / "lib" / "node_modules" / "@google" / "gemini-cli"
    (package / "bundle").mkdir(parents=True)
    (package / "bundle" / "gemini.js").write_text("#!/usr/bin/env node\n")
    (package / "package.json").write_text(json.dumps({"name": "@google/gemini-cli", "version": "0.61.0"}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gemini").symlink_to(package / "bundle" / "gemini.js")
    assert version_of(ProcessInfo(5, 1, "node", ("node", str(bin_dir / "gemini")))) == "0.61.0"
    # Another package's package.json beside a script called gemini.js is not Gemini CLI's.
    other = tmp_path / "other"
    other.mkdir()
    (other / "gemini.js").write_text("")
    (other / "package.json").write_text(json.dumps({"name": "not-gemini", "version": "1.0.0"}))
    assert version_of(ProcessInfo(5, 1, "node", ("node", str(other / "gemini.js")))) is None
    # A huge or odd package.json is not read.
    (package / "package.json").write_text(" " * (1 << 20))
    assert version_of(ProcessInfo(5, 1, "node", ("node", str(bin_dir / "gemini")))) is None


def test_the_pane_command_of_a_running_gemini():
    assert is_gemini_command("node") and is_gemini_command("gemini") and is_gemini_command("node22")
    assert not is_gemini_command("bash") and not is_gemini_command("claude") and not is_gemini_command("nodemon")


@pytest.mark.parametrize("version", GEMINI_RECORDED)
def test_the_input_box_is_read_empty_with_its_placeholder_and_whole_with_a_draft_and_absent_under_a_dialog(version):
    """What a typed line's Enter waits for (answering/keys.py): the box holding the text."""
    base = PANES / f"gemini-{version}" / "inline" / "80x24"
    assert box_text((base / "idle.ansi").read_text()) == ""
    assert "line 11 of a long pasted message" in (box_text((base / "idle_with_draft.ansi").read_text()) or "")
    assert box_text((base / "permission_shell.ansi").read_text()) is None
