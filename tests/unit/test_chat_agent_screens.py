"""GitHub Copilot CLI's and Qwen Code's readers on every recorded screen, their processes, and their words as data.

The corpora (``snapshots/panes/copilot-<version>/``, ``qwen-<version>/``) were
recorded from the real binaries by ``python -m tests.harness.record_chat_agents
FAMILY``; each screen's label was checked by eye against its ``.txt``.  The
process tables are the trees seen under a real pane (``ps --forest``), written out.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from headspace_tui.answering.keys import draft_refusal, plan_keys
from headspace_tui.answering.pane_io import ActionError
from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.detect import copilot, qwen
from headspace_tui.detect.approval import approval
from headspace_tui.detect.families import BY_NAME, find_agent
from headspace_tui.detect.words import FamilyWords, WordsError, load_words
from headspace_tui.model import NEEDS_YOU, AgentState
from headspace_tui.shared.proctree import ProcessInfo, ProcessTable
from tests.harness.copilot_agent import COPILOT_VERSION
from tests.harness.qwen_agent import QWEN_VERSION
from tests.harness.record_chat_agents import PANES, SCENARIOS, SIZES, plain_text

READERS = {"copilot": copilot, "qwen": qwen}
PINNED = {"copilot": COPILOT_VERSION, "qwen": QWEN_VERSION}
SCREENS = sorted(p for family in READERS for p in PANES.glob(f"{family}-*/alt/*/*.json"))


def load(meta_path: Path) -> tuple[str, dict]:
    return meta_path.with_suffix(".ansi").read_text(), json.loads(meta_path.read_text())


def words(text: str) -> str:
    return " ".join(text.split())


def screen(family: str, size: str, name: str) -> str:
    return (PANES / f"{family}-{PINNED[family]}" / "alt" / size / f"{name}.ansi").read_text()


@pytest.mark.parametrize("family", sorted(READERS))
def test_the_corpus_holds_every_scenario_at_every_size(family: str):
    version = PINNED[family]
    for scenario in SCENARIOS:
        if scenario.families and family not in scenario.families:
            continue
        for width, height in SIZES:
            meta_path = PANES / f"{family}-{version}" / "alt" / f"{width}x{height}" / f"{scenario.name}.json"
            assert meta_path.exists(), f"missing {meta_path}"
            ansi, meta = load(meta_path)
            assert (meta["agent"], meta["version"], meta["width"], meta["height"]) == (family, version, width, height)
            assert meta_path.with_suffix(".txt").read_text() == plain_text(ansi)
    states = {json.loads(p.read_text())["expected"]["state"] for p in PANES.glob(f"{family}-*/alt/*/*.json")}
    assert states >= {"idle", "working", "permission", "input", "error", "exited"}


@pytest.mark.parametrize("meta_path", SCREENS, ids=[str(p.relative_to(PANES).with_suffix("")) for p in SCREENS])
def test_every_recorded_screen_reads_as_its_label(meta_path: Path):
    ansi, meta = load(meta_path)
    read = READERS[meta["agent"]].classify_capture
    expected = meta["expected"]
    obs = read(ansi, command=meta["pane_command"], version=meta["version"])
    assert obs.state.value == expected["state"], [str(e) for e in obs.evidence]
    assert obs.evidence, "every observation says why"
    if "tool" in expected:
        assert obs.prompt is not None and obs.prompt.tool == expected["tool"]
    if "detail" in expected:
        assert obs.prompt is not None and obs.prompt.detail == expected["detail"]
    if "question" in expected:
        assert obs.prompt is not None and words(obs.prompt.title) == words(expected["question"])
    if "mode" in expected:
        assert obs.mode == expected["mode"]
    elif obs.state in (AgentState.IDLE, AgentState.INPUT, AgentState.ERROR):
        assert obs.mode == "manual", "the footer's mode: the tests run in the mode that asks, unless the scenario says"
    # Without the command (a remote host that could not tell): the same reading.
    assert read(ansi).state == obs.state


def test_no_screen_of_an_agent_that_needs_you_reads_as_one_that_does_not():
    for meta_path in SCREENS:
        ansi, meta = load(meta_path)
        if AgentState(meta["expected"]["state"]) in NEEDS_YOU:
            assert READERS[meta["agent"]].classify_capture(ansi, command=meta["pane_command"]).state.needs_you, meta_path


@pytest.mark.parametrize("size", ["80x24", "72x22", "120x40"])
def test_qwens_approval_approves_once_and_never_takes_a_standing_rule(size: str):
    prompt = qwen.classify_capture(screen("qwen", size, "permission_shell")).prompt
    assert prompt is not None and [o.key for o in prompt.options] == ["1", "2", "3", "4"]
    yes = approval(prompt)
    assert yes is not None and (yes.option.key, yes.option.label) == ("1", "Yes, allow once") and not yes.widens
    assert prompt.no is not None and prompt.no.key == "4"


@pytest.mark.parametrize("size", ["80x24", "72x22", "120x40"])
def test_in_qwens_own_default_mode_its_fallback_approval_is_approved_once_and_its_mode_is_left_as_it_is(size: str):
    """Auto mode, 0.24's default: when its classifier cannot judge a call it asks, offering to switch modes; y takes "Yes, allow once"."""
    obs = qwen.classify_capture(screen("qwen", size, "permission_auto_fallback"))
    assert obs.mode == "auto" and obs.prompt is not None
    yes = approval(obs.prompt)
    assert yes is not None and (yes.option.key, yes.option.label) == ("1", "Yes, allow once") and not yes.widens
    assert obs.prompt.options[1].label.startswith("Switch to Default Mode")


@pytest.mark.parametrize("size", ["80x24", "72x22", "120x40"])
def test_copilots_path_approval_approves_once_and_never_remembers_the_path(size: str):
    prompt = copilot.classify_capture(screen("copilot", size, "permission_path")).prompt
    assert prompt is not None and prompt.tool == "Allow path access" and prompt.detail == "/tmp/headspace-outside.txt"
    yes = approval(prompt)
    assert yes is not None and (yes.option.key, yes.option.label) == ("1", "Yes") and not yes.widens
    assert prompt.no is not None and prompt.no.label == "No (Esc)"


def test_qwens_question_takes_digits_and_its_empty_field_of_your_own_takes_a_typed_answer():
    """Its "Type something..." digit opens the field without submitting (measured); once it holds words it is not empty."""
    prompt = qwen.classify_capture(screen("qwen", "80x24", "question")).prompt
    assert prompt is not None and prompt.kind == "question" and prompt.title == "Which database should we use?"
    assert [(o.key, o.label) for o in prompt.options] == [("1", "Postgres"), ("2", "SQLite"), ("3", "Type something...")]
    assert prompt.free_text == "3"
    asked = plain_text(screen("qwen", "80x24", "question")).replace("❯ 1. Postgres", "  1. Postgres")
    opened = qwen.classify_capture(asked.replace("  3. Type something...", "❯ 3. > Type something...")).prompt
    assert opened is not None and opened.options[2].label == "Type something..." and opened.options[2].selected and opened.free_text == "3"
    typed = qwen.classify_capture(asked.replace("  3. Type something...", "❯ 3. > MariaDB please")).prompt
    assert typed is not None and typed.options[2].label == "MariaDB please" and typed.free_text == ""


@pytest.mark.parametrize("family, reader", [("qwen", qwen), ("gemini", None)])
def test_a_box_in_shell_mode_is_never_typed_into(family: str, reader):
    """After "!" the box runs what is typed as a shell command: it counts as holding the person's "!", so no reply is typed there."""
    if reader is None:
        from headspace_tui.detect import gemini as reader  # the same mark, the same box (Qwen Code is its fork)

        idle = plain_text((PANES / "gemini-0.61.0" / "inline" / "80x24" / "idle.ansi").read_text())
        shell = idle.replace(" >   Type your message", " !   Type your message", 1)
    else:
        idle = plain_text(screen(family, "80x24", "idle"))
        shell = idle.replace(">   Type your message", "!   Type your message", 1)
    assert shell != idle and reader.box_text(idle) == ""
    assert reader.box_text(shell) == "!Type your message or @path/to/file"  # its hint, as the reader cannot tell it from text there
    assert draft_refusal(BY_NAME[family], shell), "a typed line is refused"


def test_qwens_command_is_not_taken_from_a_description_that_repeats_it():
    asking = plain_text(screen("qwen", "120x40", "permission_shell")).replace("touch marker.txt (Create the marker file)", "touch marker.txt (Run touch marker.txt)")
    prompt = qwen.classify_capture(asking).prompt
    assert prompt is not None and prompt.detail == "touch marker.txt"


def test_a_copilot_dialog_that_asks_without_a_call_in_it_is_a_menu_the_approve_key_never_answers():
    """A boxed "Do you want to …?" with no nested call (turning a mode on, say) is not a tool's approval."""
    rows = plain_text(screen("copilot", "120x40", "permission_shell")).split("\n")
    nested = [i for i, row in enumerate(rows) if row.startswith(("│ ╭", "│ │", "│ ╰"))]
    asking = "\n".join(row.replace("Do you want to run this command?", "Do you want to enable autopilot?") for i, row in enumerate(rows) if i not in nested)
    obs = copilot.classify_capture(asking)
    assert obs.state is AgentState.QUESTION and obs.prompt is not None and obs.prompt.kind == "menu"
    with pytest.raises(ActionError):
        plan_keys(obs, Intent(IntentKind.APPROVE), BY_NAME["copilot"])


def test_copilots_question_form_needs_its_own_head():
    form = plain_text(screen("copilot", "80x24", "question"))
    assert copilot.classify_capture(form).state is AgentState.QUESTION
    assert copilot.classify_capture(form.replace("Copilot needs information.", "Pick one.")).state is not AgentState.QUESTION


def test_copilots_question_form_is_read_and_left_to_the_pane():
    """Its form's choices have no keys (arrows and Enter, and perhaps more fields): no digit can be sent for one."""
    obs = copilot.classify_capture(screen("copilot", "80x24", "question"))
    assert obs.state is AgentState.QUESTION and obs.prompt is not None and obs.prompt.title == "Which database should we use?"
    assert [(o.key, o.label, o.selected) for o in obs.prompt.options] == [("", "Postgres", True), ("", "SQLite", False), ("", "Other (type your answer)", False)]
    with pytest.raises(ActionError, match="answer it in the pane itself"):
        plan_keys(obs, Intent(IntentKind.OPTION, option="1"), BY_NAME["copilot"])


@pytest.mark.parametrize("size", ["80x24", "72x22", "120x40"])
def test_copilots_approval_approves_once_and_refuses_by_escape(size: str):
    """Its "2" is "don't ask again for `touch` in this directory", kept across sessions; its "3" only opens a field for feedback."""
    prompt = copilot.classify_capture(screen("copilot", size, "permission_shell")).prompt
    assert prompt is not None and [o.key for o in prompt.options] == ["1", "2", "Escape"]
    yes = approval(prompt)
    assert yes is not None and (yes.option.key, yes.option.label) == ("1", "Yes") and not yes.widens
    assert "don't ask again" in prompt.options[1].label and prompt.options[1].label.endswith("/work)"), "a wrapped label is joined"
    assert prompt.no is not None and prompt.no.key == "Escape"


def test_copilots_long_call_broken_after_a_slash_is_read_but_not_called_whole():
    """At 72 columns Copilot breaks "build/reports/" from "coverage/README.txt"; the reading joins them and says it guessed."""
    narrow = copilot.classify_capture(screen("copilot", "72x22", "permission_long_command")).prompt
    wide = copilot.classify_capture(screen("copilot", "120x40", "permission_long_command")).prompt
    assert narrow is not None and wide is not None and narrow.detail == wide.detail
    assert wide.whole and not narrow.whole


def test_qwens_long_call_is_the_titles_whole_command_though_its_body_is_cut_at_the_edge():
    rows = plain_text(screen("qwen", "72x22", "permission_long_command"))
    assert "printf 'coverage" not in rows.split("Allow execution")[0].split("(Prepare the coverage folder)")[1], "the body is cut at 72 columns"
    prompt = qwen.classify_capture(screen("qwen", "72x22", "permission_long_command")).prompt
    assert prompt is not None and prompt.detail.endswith("build/reports/coverage/README.txt") and "printf 'coverage" in prompt.detail


@pytest.mark.parametrize("family", sorted(READERS))
def test_a_dialog_changed_under_the_key_is_another_prompt(family: str):
    shell = plain_text(screen(family, "120x40", "permission_shell"))
    first = READERS[family].classify_capture(shell).prompt
    other = READERS[family].classify_capture(shell.replace("touch marker.txt", "touch other.txt")).prompt
    assert first is not None and other is not None and other.detail == "touch other.txt" and other.fingerprint != first.fingerprint


@pytest.mark.parametrize("family", sorted(READERS))
def test_a_draft_is_what_the_box_holds(family: str):
    assert READERS[family].box_text(screen(family, "80x24", "idle_with_draft")) == "please rename the parser module and keep its tests green"
    assert READERS[family].box_text(screen(family, "80x24", "idle")) == ""
    assert READERS[family].box_text(screen(family, "80x24", "permission_shell")) is None


@pytest.mark.parametrize("family", sorted(READERS))
def test_the_footers_mode_is_read_from_its_words(family: str):
    idle = plain_text(screen(family, "80x24", "idle"))
    renamed = {"copilot": ("Manual Approval", "Allow All"), "qwen": ("⏸ Ask permissions", "YOLO mode")}[family]
    assert READERS[family].classify_capture(idle).mode == "manual"
    assert READERS[family].classify_capture(idle.replace(*renamed)).mode == "bypass"


# -- words as data -------------------------------------------------------------------------


@pytest.mark.parametrize("family", sorted(READERS))
def test_a_release_that_renames_a_word_is_followed_by_changing_the_data_file_only(family: str, tmp_path: Path):
    """A made-up next release draws its busy word and its dialog's waiting line in other words.

    The reader as shipped does not follow it; a copy of the family's words
    folder with those words changed (and nothing else) makes the same code
    read it right.
    """
    folder = Path(READERS[family].screen.__file__).with_name("words")
    renames = {
        "copilot": [("Working", "Busy"), ("Do you want to run this command?", "Run this command?")],
        "qwen": [("esc to cancel", "esc to stop"), ("Enter to steer", "Enter to redirect"), ("Ctrl+Q to queue", "Ctrl+Q to hold"), ("Waiting for user confirmation", "Awaiting your approval")],
    }[family]
    working, asking = plain_text(screen(family, "80x24", "working")), plain_text(screen(family, "80x24", "permission_shell"))
    for old, new in renames:
        working, asking = working.replace(old, new), asking.replace(old, new)
    read = READERS[family].classify_capture
    assert read(working).state is not AgentState.WORKING and read(asking).state is not AgentState.PERMISSION

    shutil.copytree(folder, tmp_path / "words")
    (data,) = (tmp_path / "words").glob("*.toml")
    text = data.read_text()
    for old, new in renames:
        assert f'"{old}"' in text
        text = text.replace(f'"{old}"', f'"{new}"')
    data.write_text(text)
    renamed = FamilyWords(tmp_path / "words").of(PINNED[family])
    assert read(working, words=renamed).state is AgentState.WORKING
    asked = read(asking, words=renamed)
    assert asked.state is AgentState.PERMISSION and asked.prompt is not None and asked.prompt.detail == "touch marker.txt"


def test_a_release_reads_with_the_words_of_its_range(tmp_path: Path):
    for name, releases in (("0.24.0", 'from = "0.24.0"\nbefore = "0.30.0"'), ("0.30.0", 'from = "0.30.0"')):
        (tmp_path / f"{name}.toml").write_text(f'[releases]\n{releases}\n[box]\nprompt = "{name}"\n')
    family = FamilyWords(tmp_path)
    assert [family.of(v).one("box", "prompt") for v in ("0.24.4", "0.29.9", "0.30.0", "0.41.2", "", "0.1.0", "garbage")] == [
        "0.24.0",
        "0.24.0",
        "0.30.0",
        "0.30.0",
        "0.30.0",  # unknown: the newest
        "0.24.0",  # older than every file: the oldest
        "0.30.0",
    ]


@pytest.mark.parametrize(
    "body, why",
    [
        ("[box]\nprompt = '>'\n", "[releases] needs from"),
        ('[releases]\nfrom = "1.0.0"\n[box]\nprompt = ""\n', "1 to 200 characters"),
        ('[releases]\nfrom = "1.0.0"\n[box]\nprompt = 3\n', "a word or a list of words"),
        ('box = "x"\n[releases]\nfrom = "1.0.0"\n', "a section of named words"),
        ("[releases\n", "Expected"),
    ],
)
def test_a_words_file_that_cannot_be_used_says_why(tmp_path: Path, body: str, why: str):
    path = tmp_path / "1.0.0.toml"
    path.write_text(body)
    with pytest.raises(WordsError, match=re.escape(why)):
        load_words(path)


def test_a_word_is_matched_literally_never_as_a_pattern(tmp_path: Path):
    (tmp_path / "1.0.0.toml").write_text('[releases]\nfrom = "1.0.0"\n[w]\nx = ["a.c", "(x+)+$"]\n')
    pattern = FamilyWords(tmp_path).of("1.0.0").any_of("w", "x")
    assert pattern.search("abc") is None and pattern.search("a.c") is not None and pattern.search("(x+)+$ here") is not None


def test_every_shipped_words_file_loads():
    for family in READERS:
        files = FamilyWords(Path(READERS[family].screen.__file__).with_name("words")).files
        assert files and files[0].every_word()


# -- processes -----------------------------------------------------------------------------

CACHE = "/root/.cache/headspace-tests"


def _table(*rows: tuple[int, int, str, list[str]]) -> ProcessTable:
    return ProcessTable({pid: ProcessInfo(pid, ppid, comm, tuple(argv)) for pid, ppid, comm, argv in rows})


def test_qwens_launcher_is_the_agent_and_its_children_are_not():
    launcher = [
        "node",
        f"{CACHE}/qwen-0.24.4/node_modules/.bin/qwen",
    ]
    child = ["/usr/bin/node", "--expose-gc", f"{CACHE}/qwen-0.24.4/node_modules/@qwen-code/qwen-code/cli.js"]
    table = _table((100, 1, "bash", ["bash"]), (101, 100, "node", launcher), (102, 101, "node", child), (103, 102, "node", child))
    assert find_agent(100, table) == (101, BY_NAME["qwen"])
    assert not qwen.recognise(table.get(102)) and not copilot.recognise(table.get(101))


def test_copilots_loader_is_the_agent_and_its_native_binary_alone_is_one_too():
    loader = ["node", f"{CACHE}/copilot-1.0.102/node_modules/.bin/copilot", "--log-level", "none"]
    native = [f"{CACHE}/copilot-1.0.102/node_modules/@github/copilot-linux-x64/copilot", "--log-level", "none"]
    table = _table((100, 1, "bash", ["bash"]), (101, 100, "node", loader), (102, 101, "MainThread", native))
    assert find_agent(100, table) == (101, BY_NAME["copilot"])
    alone = _table((200, 1, "bash", ["bash"]), (201, 200, "MainThread", native))
    assert find_agent(200, alone) == (201, BY_NAME["copilot"])
    assert not copilot.recognise(ProcessInfo(5, 1, "node", ("node", "/srv/app/copilot-helper.js")))
    assert not qwen.recognise(table.get(101))


@pytest.mark.parametrize("family, relative", [("copilot", "node_modules/.bin/copilot"), ("qwen", "node_modules/.bin/qwen")])
def test_the_version_comes_from_the_installs_package_json(family: str, relative: str, tmp_path: Path):
    package = {"copilot": "@github/copilot", "qwen": "@qwen-code/qwen-code"}[family]
    folder = tmp_path / "node_modules" / package
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": package, "version": "9.8.7"}))
    (folder / "cli.js").write_text("")
    (tmp_path / "node_modules" / ".bin").mkdir()
    (tmp_path / relative).symlink_to(folder / "cli.js")
    info = ProcessInfo(1, 0, "node", ("node", str(tmp_path / relative)))
    assert READERS[family].recognise(info)
    assert READERS[family].version_of(info) == "9.8.7"


@pytest.mark.parametrize("family", sorted(READERS))
def test_hostile_screens_are_read_quickly_and_without_error(family: str):
    """Rows of 2000 blanks: a scrollbar pattern searched along each row once took 0.7-0.8 s for 45 of them (measured); 4 ms now."""
    import time

    rows = [" " * 1990 + "1x" for _ in range(100)] + [" " * 1990 + " █" for _ in range(100)] + ["   › 1. " + "a " * 990, "  ⠏ Waiting for user confirmation..."]
    started = time.perf_counter()
    obs = READERS[family].classify_capture("\n".join(rows))
    assert time.perf_counter() - started < 1.0  # the pattern's cost grew with the square of a row: seconds here; milliseconds now
    assert obs.evidence
    hostile = plain_text(screen(family, "120x40", "permission_shell")).replace("touch marker.txt", "touch \x07marker.txt\x9b\x1b]0;pwned\x07")
    prompt = READERS[family].classify_capture(hostile).prompt
    assert prompt is not None and prompt.detail == "touch marker.txt"  # no control character reaches a display
    for noise in ("", "\x00\x1b[31m\x1b]0;x\x07\x9b", "\n" * 500, "╰──────╯", "│ ❯ 1. x │\n╰──────╯", "─" * 80 + "\n> \n" + "─" * 80):
        assert READERS[family].classify_capture(noise).evidence
