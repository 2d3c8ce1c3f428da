"""opencode's reader on every recorded screen of both versions, its keys, and its process recognition.

The corpus (``snapshots/panes/opencode-<version>/``) was recorded from the
real binaries by ``tests/harness/record_opencode.py``; every screen was
looked at before its label was kept.  The process tables are the trees seen
under a real pane (``ps``/``/proc`` on 1.18.33), built by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from headspace_tui.answering.keys import plan_keys
from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.detect.families import BY_NAME, find_agent
from headspace_tui.detect.opencode import FAMILY, classify, classify_capture, recognise, version_of
from headspace_tui.model import AgentState
from headspace_tui.shared.proctree import ProcessInfo, ProcessTable

PANES = Path(__file__).resolve().parents[2] / "snapshots" / "panes"
SCREENS = sorted(PANES.glob("opencode-*/*/*/*.json"))
IDS = [str(p.relative_to(PANES).with_suffix("")).removeprefix("opencode-") for p in SCREENS]
SGR = re.compile(r"\x1b\[[0-9;:]*m")


def load(path: Path) -> tuple[dict, str]:
    return json.loads(path.read_text()), path.with_suffix(".ansi").read_text()


def wrong(observation, expected: dict) -> list[str]:
    """What ``observation`` gets wrong about a screen labelled ``expected``."""
    found = []
    if observation.state.value != expected["state"]:
        found.append(f"state {observation.state.value}")
    if not observation.evidence:
        found.append("no evidence")
    prompt = observation.prompt
    if "tool" in expected and observation.tool != expected["tool"]:
        found.append(f"tool {observation.tool!r}")
    if "detail" in expected and (prompt is None or prompt.detail != expected["detail"]):
        found.append(f"detail {prompt.detail if prompt else None!r}")
    if "options" in expected and observation.option_labels != expected["options"]:
        found.append(f"options {observation.option_labels}")
    if "question" in expected and observation.question != expected["question"]:
        found.append(f"question {observation.question!r}")
    if observation.retrying is not expected.get("retrying", False):
        found.append(f"retrying {observation.retrying}")
    if "error" in expected and observation.error != expected["error"]:
        found.append(f"error {observation.error!r}")
    return found


def test_the_corpus_holds_two_versions_months_apart_with_every_state():
    versions = {p.parent.parent.parent.name for p in SCREENS}
    # 1.17.19 (issue 42): a release between them, recorded by the release canary at its two sizes.
    assert versions == {"opencode-1.15.4", "opencode-1.17.19", "opencode-1.18.33"}
    for version in versions:
        states = {json.loads(p.read_text())["expected"]["state"] for p in PANES.glob(f"{version}/alt/*/*.json")}
        assert states - {"question"} == {"starting", "idle", "working", "permission", "input", "error", "exited"}, version
        sizes = {p.parent.name for p in PANES.glob(f"{version}/alt/*/*.json")}
        assert sizes >= ({"80x24", "150x45"} if version == "opencode-1.17.19" else {"60x24", "80x24", "120x40"})
    # Issue 42: opencode's own question tool (1.18.33), and a wide pane with the sidebar beside the transcript.
    newest = {p.stem for p in PANES.glob("opencode-1.18.33/alt/*/*.json")}
    assert {"question_tool", "question_multiple", "question_two"} <= newest
    # And its Plan agent (Tab): a reply and a command asked for, under a "Plan ·" footer.
    assert {p.stem for p in PANES.glob("opencode-1.18.33/alt/80x24/*.json")} >= {"idle_plan_agent", "permission_plan_agent"}
    assert {p.stem for p in PANES.glob("opencode-1.18.33/alt/150x45/*.json")} >= {"input", "idle_after_reply", "permission_bash"}


@pytest.mark.parametrize("path", SCREENS, ids=IDS)
def test_every_recorded_screen_reads_as_labelled(path):
    meta, ansi = load(path)
    assert meta["agent"] == "opencode"
    observation = classify_capture(ansi, command=meta["pane_command"], version=meta["version"])
    assert wrong(observation, meta["expected"]) == [], observation.evidence


@pytest.mark.parametrize("path", SCREENS, ids=IDS)
def test_from_the_screen_alone_no_wait_is_missed(path):
    """Without the pane's command (``headspace classify FILE``): the state is still right, except that
    a shell prompt left under opencode's exit frame is the only sign it is gone."""
    meta, ansi = load(path)
    observation = classify_capture(ansi)
    assert observation.state.value == meta["expected"]["state"], observation.evidence


@pytest.mark.parametrize("path", SCREENS, ids=IDS)
def test_plain_text_alone_never_reads_a_wait_as_no_wait(path):
    """Without colours (a plain capture) a screen that needs you is still read as needing you."""
    meta, ansi = load(path)
    observation = classify(SGR.sub("", ansi), command=meta["pane_command"])
    expected = AgentState(meta["expected"]["state"])
    if expected.needs_you:
        assert observation.state.needs_you, (path, observation.evidence)
    else:
        assert not observation.state.needs_you, (path, observation.evidence)


def _screen(version: str, size: str, name: str) -> str:
    return (PANES / f"opencode-{version}" / "alt" / size / f"{name}.ansi").read_text()


@pytest.mark.parametrize("version", ["1.15.4", "1.18.33"])
def test_the_approval_dialog_is_answered_by_the_keys_opencode_takes(version):
    """Enter picks the selected "Allow once", Esc rejects; "Allow always" needs two keys, which are never sent."""
    observation = classify_capture(_screen(version, "120x40", "permission_bash"), command="opencode")
    prompt = observation.prompt
    assert prompt is not None
    assert [(o.label, o.key, o.selected) for o in prompt.options] == [
        ("Allow once", "Enter", True),
        ("Allow always", "Right Enter", False),
        ("Reject", "Escape", False),
    ]
    assert plan_keys(observation, Intent(IntentKind.APPROVE), family=FAMILY)[0].keys == ("Enter",)
    assert plan_keys(observation, Intent(IntentKind.DENY), family=FAMILY)[0].keys == ("Escape",)


def test_without_colours_the_selection_is_unknown_and_only_escape_is_offered():
    observation = classify(SGR.sub("", _screen("1.18.33", "80x24", "permission_bash")), command="opencode")
    assert [(o.label, o.key) for o in observation.prompt.options] == [("Allow once", ""), ("Allow always", ""), ("Reject", "Escape")]


def test_the_selection_moved_by_hand_moves_the_keys():
    """A person pressed → once: "Allow always" is selected, so Enter now means it and "Allow once" is two keys away."""
    ansi = _screen("1.18.33", "120x40", "permission_bash")
    row = next(line for line in ansi.split("\n") if "Allow once" in line)
    moved = row.replace("\x1b[48;5;215m \x1b[38;5;232mAllow once\x1b[38;5;15m \x1b[48;5;234m", " \x1b[38;5;8mAllow once\x1b[38;5;15m ")
    moved = moved.replace("  \x1b[38;5;8mAllow always", "  \x1b[48;5;215m \x1b[38;5;232mAllow always\x1b[38;5;15m \x1b[48;5;234m")
    assert moved != row
    observation = classify_capture(ansi.replace(row, moved), command="opencode")
    keys = {o.label: o.key for o in observation.prompt.options}
    assert keys == {"Allow once": "Right Right Enter", "Allow always": "Enter", "Reject": "Escape"}


def test_fingerprint_is_stable_and_names_the_command():
    ansi = _screen("1.18.33", "120x40", "permission_bash")
    first = classify_capture(ansi, command="opencode").prompt
    again = classify_capture(ansi, command="opencode").prompt
    other = classify_capture(ansi.replace("touch marker.txt", "rm -rf build"), command="opencode").prompt
    assert first.fingerprint == again.fingerprint
    assert other.detail == "rm -rf build" and other.fingerprint != first.fingerprint
    older = classify_capture(_screen("1.18.33", "80x24", "permission_bash"), command="opencode").prompt
    assert older.fingerprint == first.fingerprint  # the same prompt at another size


def test_the_first_start_of_1_15_migrating_its_storage_is_starting():
    """Seen above the exit frame of the 1.15.4 recordings: the line opencode prints before its UI on a first start."""
    exited = (PANES / "opencode-1.15.4" / "alt" / "80x24" / "exited.txt").read_text().split("\n")
    first = next(n for n, line in enumerate(exited) if line.startswith("Performing one time"))
    screen = "\n".join(exited[: first + 1])
    assert classify(screen, command="opencode").state is AgentState.STARTING
    assert classify(screen).state is AgentState.STARTING


def test_a_reply_that_quotes_the_dialog_is_not_a_dialog():
    """The dialog is read only at the bottom, in place of the input box: text above the box is transcript."""
    ansi = _screen("1.18.33", "120x40", "idle_after_reply")
    quoted = ansi.replace("Hello from the scripted model. Nothing else to do.", "△ Permission required   Allow once   Allow always   Reject  ⇆ select")
    assert classify_capture(quoted, command="opencode").state is AgentState.IDLE


@pytest.mark.parametrize("capture", ["", "\n\n", "\x1b[31m\x1b[", "┃\n" * 60, "╹" + "▀" * 300, "  ┃  △ x\n  ┃  a  b  ⇆\n" * 30])
def test_garbage_never_raises_and_says_why(capture):
    observation = classify_capture(capture)
    assert observation.evidence


# ---------------------------------------------------------------------------
# Which process is opencode


def _tree() -> ProcessTable:
    """A pane as measured on 1.18.33: bash, opencode (threads only), a command it runs."""
    return ProcessTable.of(
        [
            ProcessInfo(100, 1, "bash", ("bash", "--norc")),
            ProcessInfo(200, 100, "opencode", ("opencode",)),
            ProcessInfo(300, 200, "bash", ("/bin/bash", "-c", "touch marker.txt")),
        ]
    )


def test_the_native_process_is_the_agent_and_its_command_is_not():
    table = _tree()
    assert [pid for pid, info in table.processes.items() if recognise(info)] == [200]
    assert find_agent(100, table) == (200, FAMILY)
    assert BY_NAME["opencode"] is FAMILY


def test_helpers_and_launchers_are_not_the_agent():
    assert not recognise(ProcessInfo(1, 0, "opencode", ("opencode", "serve", "--port", "4096")))
    assert not recognise(ProcessInfo(2, 0, "opencode", ("opencode", "--print-logs", "run", "fix it")))
    assert not recognise(ProcessInfo(3, 0, "opencode", ("opencode", "web")))
    assert not recognise(ProcessInfo(4, 0, "node", ("node", "/x/node_modules/opencode-ai/bin/opencode")))
    assert not recognise(ProcessInfo(5, 0, "bash", ("bash",)))
    assert recognise(ProcessInfo(6, 0, "opencode", ("opencode", "attach", "http://127.0.0.1:4096")))
    assert recognise(ProcessInfo(7, 0, "opencode", ("opencode", "--model", "scripted/m", "src")))
    assert recognise(ProcessInfo(8, 0, "opencode.exe", ("/x/opencode-ai/bin/opencode.exe",)))


def test_version_from_the_install_read_defensively(tmp_path):
    package = tmp_path / "node_modules" / "opencode-ai"
    (package / "bin").mkdir(parents=True)
    binary = package / "bin" / "opencode.exe"
    binary.write_bytes(b"\x7fELF")
    proc = tmp_path / "proc" / "42"
    proc.mkdir(parents=True)
    (proc / "exe").symlink_to(binary)
    info = ProcessInfo(42, 1, "opencode", ("opencode",))
    assert version_of(info, proc=str(tmp_path / "proc")) is None  # no package.json yet
    (package / "package.json").write_text(json.dumps({"name": "opencode-ai", "version": "1.18.33"}))
    assert version_of(info, proc=str(tmp_path / "proc")) == "1.18.33"
    (package / "package.json").write_text(json.dumps({"name": "left-pad", "version": "9.9.9"}))
    assert version_of(info, proc=str(tmp_path / "proc")) is None  # somebody else's package
    (package / "package.json").write_text("{" * 100_000)
    assert version_of(info, proc=str(tmp_path / "proc")) is None


def test_the_pane_command_check():
    assert FAMILY.is_command("opencode") and FAMILY.is_command("opencode.exe")
    assert not FAMILY.is_command("bash") and not FAMILY.is_command("node") and not FAMILY.is_command("claude")


def test_the_question_dialog_is_answered_by_its_digits_and_never_typed_into():
    """opencode's question tool: a digit picks its option (measured: "2" answers it and shows the next question)."""
    from headspace_tui.answering.pane_io import ActionError

    observation = classify_capture(_screen("1.18.33", "120x40", "question_tool"), command="opencode")
    assert observation.state is AgentState.QUESTION
    prompt = observation.prompt
    assert [(o.key, o.label, o.selected, o.ticked) for o in prompt.options] == [
        ("1", "pnpm", True, None),
        ("2", "npm", False, None),
        ("3", "Type your own answer", False, None),
    ]
    assert (prompt.question_index, prompt.question_count, prompt.multi_select) == (1, 1, False)
    assert plan_keys(observation, Intent(IntentKind.OPTION, option="2"), family=FAMILY)[0].keys == ("2",)
    with pytest.raises(ActionError, match="pick an option by number"):
        plan_keys(observation, Intent(IntentKind.APPROVE), family=FAMILY)
    with pytest.raises(ActionError, match="no empty 'Type something.' option"):
        plan_keys(observation, Intent(IntentKind.TEXT, text="yarn"), family=FAMILY)


def test_several_questions_say_which_one_shows():
    prompt = classify_capture(_screen("1.18.33", "150x45", "question_two"), command="opencode").prompt
    assert (prompt.question_index, prompt.question_count) == (1, 2)
    assert prompt.title == "Which package manager should the project use?"


def test_a_multi_select_question_is_ticked_by_digit_and_finished_in_the_pane():
    """A digit ticks a box; headspace does not submit opencode's multi-select (its "Confirm" tab is not Claude's review)."""
    from headspace_tui.answering.pane_io import ActionError

    observation = classify_capture(_screen("1.18.33", "80x24", "question_multiple"), command="opencode")
    prompt = observation.prompt
    assert prompt.multi_select and [o.ticked for o in prompt.options] == [False, False, False, False]
    assert prompt.title == "Which checks should run before each commit?"
    assert plan_keys(observation, Intent(IntentKind.OPTION, option="1"), family=FAMILY)[0].keys == ("1",)
    ticked = classify_capture(_screen("1.18.33", "80x24", "question_multiple").replace("[ ] lint", "[✓] lint"), command="opencode")
    assert ticked.prompt.ticked == ("1",)
    with pytest.raises(ActionError, match="finished in the pane itself"):
        plan_keys(ticked, Intent(IntentKind.SUBMIT), family=FAMILY)
    with pytest.raises(ActionError, match="finished in the pane itself"):
        plan_keys(observation, Intent(IntentKind.OPTION, option="1,3"), family=FAMILY)


def test_a_reply_beside_the_sidebar_is_read_without_it():
    """At 150 columns the sidebar ("Context", "0% used") shares the reply's rows; the question is still its last words."""
    ansi = _screen("1.18.33", "150x45", "input")
    assert "0% used" in SGR.sub("", ansi)
    observation = classify_capture(ansi, command="opencode")
    assert observation.state is AgentState.INPUT and observation.question == "Which do you prefer?"
