"""Every screen state headspace must read, as a script plus the keys that reach it.

A scenario knows three things: what the scripted API answers, how a person
drives the session to the state (``drive``), and what a correct observation of
the resulting screen is (``expected``).  The recorder plays each one against
the real binary at several sizes and in both renderers; live tests reuse the
same definitions, so the corpus and the tests cannot drift apart.

``drive`` returns only once the screen shows the state: it waits on text that
Claude draws for that state (never on a timer alone).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from . import fake_api as api
from .session import READY, SHELL_PROMPT, ClaudeSession

# Claude's spinner line while a turn runs: a glyph, a gerund, an ellipsis.
SPINNER = re.compile(r"^\S \w[\w ]*… ", re.M)
NUMBERED_MENU = re.compile(r"❯ 1\. ", re.M)
RETRYING = re.compile(r"retrying in \d+s · attempt [3-9]/\d+")
# The line Claude prints under a finished turn: "✻ Baked for 0s · done 5:00 AM".
TURN_DONE = re.compile(r"for \d+[ms](?: \d+s)? · done ")

LONG_ANSWER = (
    "Here is a careful walk through the parser. The tokenizer reads the input one "
    "rune at a time and groups runs of letters into identifiers, digits into numbers "
    "and everything else into punctuation. The parser then builds the tree bottom up. "
) * 6

QUESTION_DB = api.question("Which database should we use?", ["Postgres", "SQLite"], header="Database")
QUESTION_FOUR = api.question(
    "Which license should the project use?", ["MIT", "Apache-2.0", "GPL-3.0", "BSD-3-Clause"], header="License"
)
QUESTION_FEATURES = api.question(
    "Which features should ship first?", ["Auth", "Billing", "Search"], header="Features", multi_select=True
)
PLAN = "# Plan\n\n1. Add a tokenizer for the config format.\n2. Parse it into typed settings.\n3. Cover both with tests.\n"
QUOTED_DIALOG = (
    "When Claude needs approval it shows a dialog like this one:\n\n"
    "  Do you want to proceed?\n  ❯ 1. Yes\n    2. No\n\n"
    "You answer it with the number of your choice. Nothing is waiting for you now."
)
INPUT_QUESTION = "I found two ways to fix the flaky test. Should I also update the snapshot files, or leave them alone?"


@dataclass(frozen=True)
class Scenario:
    name: str
    state: str
    script: list[Any]
    drive: Callable[[ClaudeSession], None]
    expected: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)
    # Wait for the text to stop changing before the capture (not for animated states).
    settle: bool = True


def _prompt(text: str, until: Callable[[ClaudeSession], None]) -> Callable[[ClaudeSession], None]:
    """Launch Claude, submit ``text``, then wait with ``until``."""

    def drive(s: ClaudeSession) -> None:
        s.launch()
        s.submit(text)
        until(s)

    return drive


def _screen(expect: Any, what: str, timeout: float = 30) -> Callable[[ClaudeSession], None]:
    return lambda s: s.wait_for(expect, timeout=timeout, what=what) and None


def _finished(marker: str) -> Callable[[ClaudeSession], None]:
    """The turn is over: the reply's text and Claude's "done" line are shown, input box back."""
    return _screen(lambda scr: marker in scr and TURN_DONE.search(scr) is not None and READY.search(scr) is not None, f"finished turn with {marker!r}")


def _starting(s: ClaudeSession, anchor: str) -> None:
    s.launch(wait_ready=False)
    s.wait_for(anchor, timeout=30, what=anchor)


def _idle_fresh(s: ClaudeSession) -> None:
    s.launch()


def _idle_typed(s: ClaudeSession) -> None:
    s.launch()
    s.type("refactor the parser so that it")
    s.wait_for("refactor the parser so that it", what="the half-typed prompt")


def _streaming(s: ClaudeSession) -> None:
    s.launch()
    s.submit("explain the parser")
    s.wait_for("rune at a time and groups", timeout=30, what="streamed text")


def _spinner(s: ClaudeSession) -> None:
    s.launch()
    s.submit("explain the parser")
    s.wait_for(SPINNER, what="the spinner")
    time.sleep(1.2)  # let the elapsed-time counter tick once, as a user would see it


def _exited(s: ClaudeSession) -> None:
    s.launch()
    s.submit("say hello")
    _finished("Hello there")(s)
    s.submit("/exit")
    s.wait_for(lambda scr: SHELL_PROMPT.search(scr.rstrip()) is not None and "claude --permission-mode" in scr, what="the shell prompt after /exit")


def _old_permission_then(final: Callable[[ClaudeSession], None]) -> Callable[[ClaudeSession], None]:
    """A permission dialog approved with "1"; then wait for the newer state."""

    def drive(s: ClaudeSession) -> None:
        s.launch()
        s.submit("create the marker file")
        s.wait_for("Do you want to proceed?", what="the permission dialog")
        s.wait_for(NUMBERED_MENU, what="the numbered menu")
        s.answer("1")
        final(s)

    return drive


MENU = _screen(NUMBERED_MENU, "a numbered menu")
QUESTION_UI = _screen("Enter to select", "the question dialog")


def _question_second(s: ClaudeSession) -> None:
    """Answer the first of two questions, so the second is showing."""
    s.launch()
    s.submit("help me choose")
    s.wait_for("Which database should we use?", what="the first question")
    s.wait_for(NUMBERED_MENU, what="the first question's menu")
    s.answer("1")
    s.wait_for("Which features should ship first?", what="the second question")


SCENARIOS: list[Scenario] = [
    Scenario("starting_trust_dialog", "starting", [], lambda s: _starting(s, "trust this folder"), session={"trust": False}),
    Scenario(
        "starting_api_key_dialog", "starting", [], lambda s: _starting(s, "Do you want to use this API key?"), session={"approve_key": False}
    ),
    Scenario("idle_fresh", "idle", [], _idle_fresh),
    Scenario("idle_finished", "idle", [api.text("Hello there! The build is green and all tests pass.")], _prompt("say hello", _finished("Hello there"))),
    Scenario("idle_half_typed", "idle", [], _idle_typed),
    Scenario("working_spinner", "working", [api.text("Here it is.", delay=120)], _spinner, settle=False),
    Scenario("working_streaming", "working", [api.text(LONG_ANSWER, seconds=120)], _streaming, settle=False),
    Scenario(
        "permission_bash",
        "permission",
        [api.bash("touch marker.txt && echo headspace-ok", "Create a marker file")],
        _prompt("create the marker file", MENU),
        expected={"tool": "Bash", "detail": "touch marker.txt && echo headspace-ok"},
    ),
    Scenario(
        "permission_write",
        "permission",
        [api.write("notes.txt", "remember the milk\n")],
        _prompt("write a note", MENU),
        expected={"tool": "Write", "detail": "notes.txt"},
    ),
    Scenario(
        "permission_edit",
        "permission",
        [api.tool("Read", {"file_path": "README.md"}), api.edit("README.md", "old title", "new title")],
        _prompt("fix the title", MENU),
        expected={"tool": "Edit", "detail": "README.md"},
        session={"files": {"README.md": "# old title\n\nSome text.\n"}},
    ),
    Scenario(
        "permission_webfetch",
        "permission",
        api.web_fetch("https://example.com/docs"),
        _prompt("read the docs page", MENU),
        expected={"tool": "WebFetch", "detail": "https://example.com/docs"},
    ),
    Scenario(
        "question_two_options",
        "question",
        [api.ask(QUESTION_DB)],
        _prompt("pick a database", QUESTION_UI),
        expected={"question": "Which database should we use?", "options": ["Postgres", "SQLite"], "multi_select": False},
    ),
    Scenario(
        "question_four_options",
        "question",
        [api.ask(QUESTION_FOUR)],
        _prompt("pick a license", QUESTION_UI),
        expected={
            "question": "Which license should the project use?",
            "options": ["MIT", "Apache-2.0", "GPL-3.0", "BSD-3-Clause"],
            "multi_select": False,
        },
    ),
    Scenario(
        "question_several_first",
        "question",
        [api.ask(QUESTION_DB, QUESTION_FEATURES)],
        _prompt("help me choose", QUESTION_UI),
        expected={
            "question": "Which database should we use?",
            "options": ["Postgres", "SQLite"],
            "multi_select": False,
            "question_index": 1,
            "question_count": 2,
        },
    ),
    Scenario(
        "question_several_second",
        "question",
        [api.ask(QUESTION_DB, QUESTION_FEATURES)],
        _question_second,
        expected={
            "question": "Which features should ship first?",
            "options": ["Auth", "Billing", "Search"],
            "multi_select": True,
            "question_index": 2,
            "question_count": 2,
        },
    ),
    Scenario(
        "question_multi_select",
        "question",
        [api.ask(QUESTION_FEATURES)],
        _prompt("what ships first", QUESTION_UI),
        expected={"question": "Which features should ship first?", "options": ["Auth", "Billing", "Search"], "multi_select": True},
    ),
    Scenario(
        "plan_exit_plan_mode",
        "plan",
        [api.write_plan(PLAN), *api.exit_plan_mode(PLAN)],
        _prompt("plan the config parser", MENU),
        expected={"tool": "ExitPlanMode"},
        session={"permission_mode": "plan"},
    ),
    Scenario("input_plain_question", "input", [api.text(INPUT_QUESTION)], _prompt("fix the flaky test", _finished("leave them alone?")), expected={"question": INPUT_QUESTION}),
    Scenario(
        "error_retrying_429",
        "error",
        [api.fail(429, times=None)],
        _prompt("hello", _screen(RETRYING, "the retry line", timeout=40)),
        expected={"retrying": True, "status": 429},
        settle=False,
    ),
    Scenario(
        "error_retrying_500",
        "error",
        [api.fail(500, times=None)],
        _prompt("hello", _screen(RETRYING, "the retry line", timeout=40)),
        expected={"retrying": True, "status": 500},
        settle=False,
    ),
    Scenario(
        "error_overloaded_529",
        "error",
        [api.fail(529, times=None)],
        _prompt("hello", _screen("API Error", "the API error", timeout=60)),
        expected={"retrying": False, "status": 529},
    ),
    Scenario("exited_shell_back", "exited", [api.text("Hello there! Nice to meet you.")], _exited),
    Scenario("trap_quoted_dialog", "idle", [api.text(QUOTED_DIALOG)], _prompt("how do approvals look?", _finished("Nothing is waiting"))),
    Scenario(
        "trap_old_permission_then_idle",
        "idle",
        [api.bash("touch marker.txt && echo headspace-ok", "Create a marker file"), api.text("Created the marker file.")],
        _old_permission_then(_finished("Created the marker file.")),
    ),
    Scenario(
        "trap_old_permission_then_question",
        "question",
        [api.bash("touch marker.txt && echo headspace-ok", "Create a marker file"), api.ask(QUESTION_DB)],
        _old_permission_then(QUESTION_UI),
        expected={"question": "Which database should we use?", "options": ["Postgres", "SQLite"], "multi_select": False},
    ),
]

BY_NAME = {s.name: s for s in SCENARIOS}
STATES = ("starting", "idle", "working", "permission", "question", "plan", "input", "error", "exited")
