"""Record opencode's screens from the real binary, for the reader's corpus.

    python -m tests.harness.record_opencode                    # the pinned version
    python -m tests.harness.record_opencode --version 1.15.4   # an older one (npm-installed into the test cache)
    python -m tests.harness.record_opencode --only permission_bash --sizes 80x24

Each scenario below is played at 80x24 and 120x40 (the dialogs and turns
also at 60x24, where opencode puts a dialog's hints on a row of their own), each in its own private
tmux server against its own scripted OpenAI-compatible API, and written as
``snapshots/panes/opencode-<version>/alt/<W>x<H>/<scenario>.{ansi,txt,json}``
(opencode draws full-screen on the alternate screen: renderer ``alt``), in
the format of Claude's corpus plus ``"agent"`` and ``"version"``.

A scenario's ``drive`` returns once the screen shows its state (it waits on
what opencode draws, never on a timer alone).  Labels are what the screen
shows a person: every recorded screen was looked at before its label was kept.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from . import opencode_api as api
from . import scenarios as text
from .opencode_agent import OPENCODE_VERSION, PERMISSION, OpencodeSession, find_opencode
from .pane_session import SHELL_PROMPT
from .recording import pane_record, parse_size, play, record_all, write_screen
from .tmux import temp_server

REPO = Path(__file__).resolve().parents[2]
PANES = REPO / "snapshots" / "panes"
SIZES = ((80, 24), (120, 40))
# Under 80 columns (a split pane) opencode lays its dialogs out otherwise: these are recorded there too.
NARROW = (60, 24)
NARROW_SCENARIOS = ("idle", "working", "permission_bash", "permission_always", "input", "error")
WORKING = re.compile(r"esc interrupt")
RETRYING = re.compile(r"attempt #[2-9]")
ASKS = "I can add the parser in two ways: a hand-written one or a generated one. Which do you prefer?"
REJECTED = "The scripted model rejected the request"
# opencode's ``question`` tool's arguments (its schema: question, header, options of label and description, multiple).
PACKAGE_QUESTION = {
    "question": "Which package manager should the project use?",
    "header": "Package manager",
    "options": [{"label": "pnpm", "description": "Fast, strict installs"}, {"label": "npm", "description": "The default with Node"}],
}
CHECKS_QUESTION = {
    "question": "Which checks should run before each commit?",
    "header": "Checks",
    "options": [
        {"label": "lint", "description": "ruff"},
        {"label": "types", "description": "mypy"},
        {"label": "tests", "description": "pytest -q"},
    ],
}


@dataclass(frozen=True)
class Scenario:
    name: str
    state: str
    script: list[api.Step]
    drive: Callable[[OpencodeSession], None]
    expected: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)


def _idle(s: OpencodeSession) -> None:
    s.launch()
    s.wait_stable()


def _draft(s: OpencodeSession) -> None:
    """Half a prompt typed into the box and not sent (issue 37: no typed answer may join it)."""
    _idle(s)
    s.type("refactor the parser so that it")
    s.wait_for("refactor the parser so that it", timeout=10)
    s.wait_stable(quiet=0.5)


def _launched(s: OpencodeSession, *, plan: bool = False) -> None:
    """opencode started; with ``plan``, switched to its Plan agent (Tab switches Build and Plan: the footer names it)."""
    s.launch()
    if plan:
        s.wait_stable()
        s.press("Tab")
        s.wait_for(re.compile(r"Plan · "), timeout=10, what="the Plan agent in the footer")


def _replied(s: OpencodeSession, *, plan: bool = False) -> None:
    _launched(s, plan=plan)
    s.submit("say hello")
    s.wait_for("the scripted model", timeout=60)  # as slow to start as the working turn's first words
    s.wait_for(re.compile(r"▣ .*· \d"), timeout=10)  # the turn's footer with its duration: done
    # 1.17 draws that footer while its bar still runs ("esc interrupt"), busy a moment longer: idle once it stops.
    s.wait_for(lambda screen: WORKING.search(screen) is None, timeout=30, what="the busy bar to stop")


def _working(s: OpencodeSession) -> None:
    s.launch()
    s.submit("explain the parser")
    s.wait_for("tokenizer", timeout=60)  # 1.17 on a loaded machine: its first words after 20-40 s
    s.wait_for(WORKING, timeout=5)


def _permission(s: OpencodeSession, *, plan: bool = False) -> None:
    _launched(s, plan=plan)
    s.submit("create the marker file")
    s.wait_for(PERMISSION, timeout=60)  # 1.17 on a loaded machine is slow to its first request, in either agent
    s.wait_for("touch marker.txt", timeout=10)
    s.wait_stable(quiet=0.8)


def _permission_always(s: OpencodeSession) -> None:
    _permission(s)
    s.press("Right")
    s.wait_stable(quiet=0.5)
    s.press("Enter")
    s.wait_for("Always allow", timeout=10)
    s.wait_stable(quiet=0.8)


def _permission_edit(s: OpencodeSession) -> None:
    s.launch()
    s.submit("write the notes")
    s.wait_for(PERMISSION, timeout=20)
    s.wait_for("first line", timeout=10)
    s.wait_stable(quiet=0.8)


def _rejected(s: OpencodeSession) -> None:
    """Esc at the dialog rejects the command: the turn ends there (no result goes back), the box returns."""
    _permission(s)
    s.press("Escape")
    s.wait_for(re.compile(r"╹▀{10,}"), timeout=10)
    s.wait_stable()


def _esc_once(s: OpencodeSession) -> None:
    """One Esc while a turn runs only arms the interrupt: "esc again to interrupt"."""
    _working(s)
    s.press("Escape")
    s.wait_for("esc again to interrupt", timeout=5)


def _interrupted(s: OpencodeSession) -> None:
    _esc_once(s)
    s.press("Escape")
    s.wait_for("interrupted", timeout=10)
    s.wait_stable()


def _input(s: OpencodeSession) -> None:
    s.launch()
    s.submit("add a config parser")
    s.wait_for("Which do you prefer?", timeout=20)
    s.wait_for(re.compile(r"▣ .*· \d"), timeout=10)


def _question(s: OpencodeSession) -> None:
    """opencode's own ``question`` tool: the dialog that replaces the box, its options numbered, "Type your own answer" last."""
    s.launch()
    s.submit("set up the project")
    s.wait_for("Type your own answer", timeout=90)
    s.wait_stable(quiet=0.8)


def _error(s: OpencodeSession) -> None:
    s.launch()
    s.submit("add a config parser")
    s.wait_for(REJECTED, timeout=60)
    s.wait_for(lambda screen: not WORKING.search(screen), timeout=10, what="the turn to end")
    s.wait_stable()


def _retrying(s: OpencodeSession) -> None:
    s.launch()
    s.submit("add a config parser")
    s.wait_for(RETRYING, timeout=30)


def _provider_setup(s: OpencodeSession) -> None:
    s.launch()
    s.tmux.send_text(s.pane_id, "/connect")
    s.wait_for("Connect provider", timeout=10)
    s.wait_stable(quiet=0.4)
    s.press("Enter")
    s.wait_for("Connect a provider", timeout=10)
    s.wait_stable()


def _exited(s: OpencodeSession) -> None:
    s.launch()
    s.submit("say hello")
    s.wait_for(re.compile(r"▣ .*· \d"), timeout=20)
    s.tmux.send_text(s.pane_id, "/exit")
    s.wait_for("/exit", timeout=5)
    s.wait_stable(quiet=0.4)
    s.press("Enter")
    s.wait_for(lambda screen: s.info().current_command == "bash" and SHELL_PROMPT.search(screen) is not None, timeout=15, what="the shell back")


SLOW = "Here is a careful walk through the parser. The tokenizer reads the input one rune at a time and groups runs of letters into identifiers. " * 4

SCENARIOS: list[Scenario] = [
    Scenario("idle", "idle", [], _idle),
    Scenario("idle_draft", "idle", [], _draft),
    Scenario("idle_after_reply", "idle", [api.text("Hello from the scripted model. Nothing else to do.")], _replied),
    Scenario("working", "working", [api.text(SLOW, seconds=25)], _working),
    Scenario("idle_plan_agent", "idle", [api.text("Hello from the scripted model. Nothing else to do.")], partial(_replied, plan=True)),
    Scenario(
        "permission_plan_agent",
        "permission",
        [api.bash("touch marker.txt"), api.text("Created it.")],
        partial(_permission, plan=True),
        {"tool": "bash", "detail": "touch marker.txt", "options": ["Allow once", "Allow always", "Reject"]},
    ),
    Scenario(
        "permission_bash",
        "permission",
        [api.bash("touch marker.txt"), api.text("Created it.")],
        _permission,
        {"tool": "bash", "detail": "touch marker.txt", "options": ["Allow once", "Allow always", "Reject"]},
    ),
    Scenario(
        "permission_always",
        "permission",
        [api.bash("touch marker.txt"), api.text("Created it.")],
        _permission_always,
        {"tool": "", "detail": "touch *", "options": ["Confirm", "Cancel"]},
    ),
    Scenario(
        "permission_edit",
        "permission",
        [api.tool("write", {"filePath": "notes.md", "content": "# Notes\n\nfirst line\n"}), api.text("Written.")],
        _permission_edit,
        {"tool": "edit", "detail": "notes.md", "options": ["Allow once", "Allow always", "Reject"]},
    ),
    Scenario("rejected", "idle", [api.bash("touch marker.txt"), api.text("Created it.")], _rejected),
    Scenario("working_esc_once", "working", [api.text(SLOW, seconds=25)], _esc_once),
    Scenario("interrupted", "idle", [api.text(SLOW, seconds=25)], _interrupted),
    Scenario("input", "input", [api.text(ASKS)], _input, {"question": "Which do you prefer?"}),
    Scenario(
        "question_tool",
        "question",
        [api.tool("question", {"questions": [PACKAGE_QUESTION]}), api.text("Using pnpm.")],
        _question,
        {"question": PACKAGE_QUESTION["question"], "options": ["pnpm", "npm", "Type your own answer"]},
    ),
    Scenario(
        "question_multiple",
        "question",
        [api.tool("question", {"questions": [{**CHECKS_QUESTION, "multiple": True}]}), api.text("Adding them.")],
        _question,
        {"question": CHECKS_QUESTION["question"], "options": ["lint", "types", "tests", "Type your own answer"]},
    ),
    Scenario(
        "question_two",
        "question",
        [api.tool("question", {"questions": [PACKAGE_QUESTION, CHECKS_QUESTION]}), api.text("Noted.")],
        _question,
        {"question": PACKAGE_QUESTION["question"], "options": ["pnpm", "npm", "Type your own answer"]},
    ),
    Scenario("error", "error", [api.fail(400, times=None)], _error, {"error": REJECTED}),
    Scenario("retrying", "working", [api.fail(500, times=None)], _retrying, {"retrying": True}),
    Scenario("provider_setup", "starting", [], _provider_setup, session={"provider": False}),
    Scenario("exited", "exited", [api.text("Hello from the scripted model.")], _exited),
]


def _text_turn(prompt: str, marker: str) -> Callable[[OpencodeSession], None]:
    """Submit ``prompt``; wait for ``marker`` in the reply (wraps aside) and the turn's end row."""

    def drive(s: OpencodeSession) -> None:
        s.launch()
        s.submit(prompt)
        s.wait_for(lambda screen: marker in " ".join(screen.split()), timeout=20, what=f"the reply with {marker!r}")
        s.wait_for(re.compile(r"▣ .*· \d"), timeout=10)
        s.wait_for(lambda screen: not WORKING.search(screen), timeout=10, what="the turn to end")  # the timer row comes first

    return drive


# Issue 37: a question asked in text before what it offers, and statements that merely contain one (as for Claude).
# Recorded on the pinned version only.
TEXT_QUESTIONS = [
    Scenario("input_question_before_list", "input", [api.text(text.INPUT_BEFORE_LIST)], _text_turn("run the tests", "under load"), {"question": "Which one should I look at first?"}),
    Scenario(
        "input_question_before_code",
        "input",
        [api.text(text.INPUT_BEFORE_CODE)],
        _text_turn("look at the retry loop", "0.5 * 2 ** attempt"),
        {"question": "Should I apply this bounded backoff instead?"},
    ),
    Scenario(
        "input_question_short_last_paragraph",
        "input",
        [api.text(text.INPUT_SHORT_LAST)],
        _text_turn("finish the parser", "old behaviour"),
        {"question": "Want me to update the changelog too?"},
    ),
    Scenario("idle_question_answered_in_reply", "idle", [api.text(text.STATEMENT_ANSWERED)], _text_turn("fix the build", "green again")),
    Scenario("idle_quoted_question", "idle", [api.text(text.STATEMENT_QUOTED)], _text_turn("fix the health check", "passes now")),
    Scenario("idle_question_heading_a_list", "idle", [api.text(text.STATEMENT_BEFORE_LIST)], _text_turn("summarise the pass", "with its line")),
]
BY_NAME = {sc.name: sc for sc in (*SCENARIOS, *TEXT_QUESTIONS)}


def corpus_dir(version: str) -> Path:
    return PANES / f"opencode-{version}"


def record_one(scenario: Scenario, width: int, height: int, version: str, binary: str, out: Path) -> dict:
    """Play one scenario against the real binary and write its three files."""
    with temp_server("hs-oc-rec-") as (root, tmux), api.OpenAICompatibleAPI(scenario.script) as fake:
        session = OpencodeSession(tmux, fake, binary, root, width=width, height=height, **scenario.session)
        ansi, info = play(session, scenario.drive, settle=False)
    # opencode always draws on the alternate screen (an exited one has left it)
    meta = pane_record({"agent": "opencode", "version": version}, scenario.name, "alt", info, {"state": scenario.state, **scenario.expected})
    write_screen(out / "alt" / f"{width}x{height}", scenario.name, ansi, meta)
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.record_opencode", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default=OPENCODE_VERSION)
    parser.add_argument("--only", nargs="+", choices=sorted(BY_NAME))
    parser.add_argument("--sizes", nargs="+", type=parse_size, help="default: 80x24 and 120x40, and 60x24 for the dialogs and turns")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tries", type=int, default=2)
    parser.add_argument("--out", type=Path, help="default: snapshots/panes/opencode-<version>")
    parser.add_argument("--install", action="store_true", help="npm-install the version into the test cache when it is not there")
    args = parser.parse_args(argv)
    binary = find_opencode(args.version, install=args.install)
    out = args.out or corpus_dir(args.version)
    chosen = [BY_NAME[n] for n in args.only] if args.only else [*SCENARIOS, *(TEXT_QUESTIONS if args.version == OPENCODE_VERSION else [])]
    if args.sizes:
        jobs = [(sc, w, h) for sc in chosen for (w, h) in args.sizes]
    else:
        jobs = [(sc, w, h) for sc in chosen for (w, h) in (*SIZES, *([NARROW] if sc.name in NARROW_SCENARIOS else []))]
    print(f"recording {len(jobs)} screens of opencode {args.version} into {out}", flush=True)
    label: Callable[[tuple[Scenario, int, int]], str] = lambda job: f"{job[1]}x{job[2]}/{job[0].name}"  # noqa: E731
    return record_all(jobs, lambda job: record_one(*job, args.version, binary, out), label, workers=args.jobs, tries=args.tries, error_chars=1500)


if __name__ == "__main__":
    sys.exit(main())
