"""Record Gemini CLI's screens from the real binary: its scenarios and the recorder.

    python -m tests.harness.record_gemini                   # the pinned version
    python -m tests.harness.record_gemini --version 0.53.0  # an older one (npm-installed into the test cache)
    python -m tests.harness.record_gemini --only permission_shell --sizes 80x24

Each scenario is played at 80x24 and 120x40 in its own private tmux server
against its own scripted Gemini API, and written as Claude's corpus is::

    snapshots/panes/gemini-<version>/inline/<W>x<H>/<scenario>.{ansi,txt,json}

"inline": Gemini CLI draws in the normal screen (``ui.useAlternateBuffer``
is off by default; ``alternate_on`` is 0 in every recording).  A scenario's
``drive`` returns only once the screen shows its state (it waits on what the
CLI draws, never on a timer alone).  The live tests reuse these scenarios.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import gemini_api as api
from . import scenarios as text
from .gemini_agent import GEMINI_VERSION, MENU, PLACEHOLDER, WORKING_HINT, GeminiSession, find_gemini
from .pane_session import SHELL_PROMPT
from .recording import pane_record, parse_size, play, record_all, write_screen
from .recording import plain_text as plain_text  # re-exported: the screen tests read with it
from .tmux import temp_server

REPO = Path(__file__).resolve().parents[2]
PANES = REPO / "snapshots" / "panes"
SIZES = ((80, 24), (120, 40))
RENDERER = "inline"

PLAN_LIST = ("Add a tokenizer for the config format.", "Parse it into typed settings.", "Cover both with tests.")
PLAN_STEPS = " ".join(f"{n}. {step}" for n, step in enumerate(PLAN_LIST, 1))
QUESTION_REPLY = "I can put the parser in parser.py or split it across lexer.py and grammar.py. Which layout do you prefer?"
LONG_COMMAND = "touch marker.txt && mkdir -p build/reports/coverage/html && printf 'coverage for every package in the workspace\\n' > build/reports/coverage/README.txt"


@dataclass(frozen=True)
class Scenario:
    name: str
    state: str
    script: tuple[api.Step, ...] = ()
    drive: Callable[[GeminiSession], None] = lambda s: None
    expected: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)  # GeminiSession options
    settle: bool = True  # wait for a quiet screen before the capture (not while a spinner turns)
    versions: tuple[str, ...] = ()  # the versions that draw this state (empty: every one)

    def applies_to(self, version: str) -> bool:
        return not self.versions or version in self.versions


def _ask(prompt: str, wait: str | re.Pattern[str], timeout: float = 30) -> Callable[[GeminiSession], None]:
    def drive(s: GeminiSession) -> None:
        s.launch()
        s.submit(prompt)
        s.wait_for(wait, timeout=timeout, what=str(wait))

    return drive


def _starting(s: GeminiSession) -> None:
    s.launch(wait_ready=False)
    s.wait_for("Do you trust the files in this folder?", what="the trust dialog")


def _signing_in(s: GeminiSession) -> None:
    s.launch(wait_ready=False)
    s.wait_for("How would you like to authenticate", what="the sign-in choice")


def _drafting(s: GeminiSession) -> None:
    """A draft of twelve lines pasted into the box, not sent: the box grows upwards."""
    s.launch()
    s.wait_stable(quiet=0.5, timeout=5, strict=False)
    s.tmux.send_text(s.pane_id, "\n".join(f"line {n} of a long pasted message" for n in range(12)))
    s.wait_for("line 11 of a long pasted message", what="the pasted draft")


def _idle(s: GeminiSession) -> None:
    s.launch()


def _exited(s: GeminiSession) -> None:
    s.launch()
    s.submit("/quit")
    s.wait_for(lambda screen: SHELL_PROMPT.search(screen.rstrip()) is not None, what="the shell prompt after /quit")


def _error(s: GeminiSession) -> None:
    _ask("check the key", "[API Error")(s)
    s.wait_for(PLACEHOLDER, what="the prompt back under the error")


def _retrying(s: GeminiSession) -> None:
    """Wait until the API has refused the turn and the CLI has asked again (a retry is under way)."""
    _ask("try the overloaded model", WORKING_HINT)(s)
    s.api.wait_for(lambda req: req.is_loop and len(s.api.loop_requests) >= 2, timeout=40)
    s.wait_for(WORKING_HINT, what="the running-turn hint while it retries")


def _running_tool(s: GeminiSession) -> None:
    """Approve a slow command and wait while it runs (the turn goes on under the tool's box)."""
    _ask("wait for the build", "Allow execution")(s)
    s.wait_stable(quiet=0.5, timeout=3, strict=False)  # a digit sent as the menu is drawn can be lost
    s.press("1")
    s.wait_for(lambda screen: "Allow execution" not in screen and WORKING_HINT.search(screen) is not None, what="the command running")


def _reply_then(wait: str) -> Callable[[GeminiSession], None]:
    def drive(s: GeminiSession) -> None:
        _ask("go on", wait)(s)
        s.wait_for(lambda screen: PLACEHOLDER in screen and WORKING_HINT.search(screen) is None, what="the idle prompt")

    return drive


def _text_turn(prompt: str, marker: str) -> Callable[[GeminiSession], None]:
    """Submit ``prompt``; wait for ``marker`` in the reply (wraps aside), then the idle prompt."""

    def drive(s: GeminiSession) -> None:
        _ask(prompt, lambda screen: marker in " ".join(screen.split()))(s)  # type: ignore[arg-type]
        s.wait_for(lambda screen: PLACEHOLDER in screen and WORKING_HINT.search(screen) is None, what="the idle prompt")

    return drive


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("starting_trust", "starting", drive=_starting, session={"trust_dialog": True}),
    Scenario("starting_signin", "starting", drive=_signing_in, session={"signed_in": False}),
    Scenario("idle", "idle", drive=_idle),
    Scenario("idle_with_draft", "idle", drive=_drafting),
    Scenario("idle_after_reply", "idle", (api.text("Hello there. The tests pass and the build is green."),), _reply_then("the build is green")),
    Scenario(
        "working",
        "working",
        (api.text(" ".join(f"word{i}" for i in range(80)), seconds=120),),
        _ask("write a long answer", WORKING_HINT),
        settle=False,
    ),
    # Retrying a 503: the screen (and the title) show a plain running turn, so
    # it is labelled working; measured: no retry hint at either version.
    Scenario(
        "working_retrying",
        "working",
        (api.fail(503, "The model is overloaded. Please try again later.", times=None),),
        _retrying,
        settle=False,
    ),
    Scenario("working_tool", "working", (api.shell("sleep 60", "Wait for the build"),), _running_tool, settle=False),
    Scenario(
        "permission_shell",
        "permission",
        (api.shell("touch x", "Create the file x"),),
        _ask("make x", "Allow execution"),
        {"tool": "Shell", "detail": "touch x", "options": ["Allow once", "Allow for this session", "No, suggest changes (esc)"]},
    ),
    Scenario(
        "permission_long_command",
        "permission",
        (api.shell(LONG_COMMAND, "Prepare the coverage folder"),),
        _ask("prepare coverage", "Allow execution"),
        {"tool": "Shell", "detail": LONG_COMMAND, "options": ["Allow once", "Allow for this session", "No, suggest changes (esc)"]},
    ),
    Scenario(
        "permission_write",
        "permission",
        (api.write_file("notes.txt", "first line\nsecond line\n"),),
        _ask("write notes", MENU),
        {"tool": "WriteFile", "detail": "notes.txt"},
    ),
    # Taller than an 80x24 pane: the dialog must still be read as the write's approval.
    Scenario(
        "permission_write_long",
        "permission",
        (api.write_file("report.md", "".join(f"line {n} of the quarterly report\n" for n in range(1, 61))),),
        _ask("write the report", MENU),
        {"tool": "WriteFile", "detail": "report.md"},
    ),
    Scenario(
        "question",
        "question",
        (
            api.call(
                "ask_user",
                {
                    "questions": [
                        {
                            "question": "Which database should we use?",
                            "header": "Database",
                            "type": "choice",
                            "options": [
                                {"label": "Postgres", "description": "A server, for many writers"},
                                {"label": "SQLite", "description": "One file, no server"},
                            ],
                        }
                    ]
                },
            ),
        ),
        _ask("pick a database", "Which database should we use?"),
        {"question": "Which database should we use?"},
    ),
    Scenario(
        "plan",
        "plan",
        (api.call("exit_plan_mode", {"plan_filename": "plan.md"}),),
        _ask("plan the parser", "Ready to start implementation?"),
        {"detail": PLAN_STEPS, "options": ["Yes, automatically accept edits", "Yes, manually accept edits", "Type your feedback..."]},
        session={
            "extra_settings": {"general": {"defaultApprovalMode": "plan", "plan": {"enabled": True, "directory": "plans"}}},
            "files": {"plans/plan.md": "# Plan\n\n" + "\n".join(f"{n}. {step}" for n, step in enumerate(PLAN_LIST, 1)) + "\n"},
        },
    ),
    Scenario("input", "input", (api.text(QUESTION_REPLY),), _reply_then("Which layout do you prefer?"), {"question": QUESTION_REPLY}),
    Scenario("error", "error", (api.fail(400, "API key not valid. Please pass a valid API key.", times=None),), _error),
    Scenario("exited", "exited", drive=_exited),
)
# Issue 37: a question asked in text before what it offers, and statements that merely contain one (as for Claude).
TEXT_ONLY = ("0.61.0",)
SCENARIOS += (
    Scenario(
        "input_question_before_list",
        "input",
        (api.text(text.INPUT_BEFORE_LIST),),
        _text_turn("run the tests", "under load"),
        {"question": "I found three failing tests. Which one should I look at first?"},
        versions=TEXT_ONLY,
    ),
    Scenario(
        "input_question_before_code",
        "input",
        (api.text(text.INPUT_BEFORE_CODE),),
        _text_turn("look at the retry loop", "0.5 * 2 ** attempt"),
        {"question": "The retry loop sleeps a fixed second between attempts. Should I apply this bounded backoff instead?"},
        versions=TEXT_ONLY,
    ),
    Scenario(
        "input_question_short_last_paragraph",
        "input",
        (api.text(text.INPUT_SHORT_LAST),),
        _text_turn("finish the parser", "old behaviour"),
        {"question": "Want me to update the changelog too? It still describes the old behaviour."},
        versions=TEXT_ONLY,
    ),
    Scenario("idle_question_answered_in_reply", "idle", (api.text(text.STATEMENT_ANSWERED),), _text_turn("fix the build", "green again"), versions=TEXT_ONLY),
    Scenario("idle_quoted_question", "idle", (api.text(text.STATEMENT_QUOTED),), _text_turn("fix the health check", "passes now"), versions=TEXT_ONLY),
    Scenario("idle_question_heading_a_list", "idle", (api.text(text.STATEMENT_BEFORE_LIST),), _text_turn("summarise the pass", "with its line"), versions=TEXT_ONLY),
)
BY_NAME = {sc.name: sc for sc in SCENARIOS}


def corpus_dir(version: str = GEMINI_VERSION) -> Path:
    return PANES / f"gemini-{version}"


def record_one(scenario: Scenario, width: int, height: int, version: str, binary: str, out: Path) -> dict:
    """Play one scenario against the real binary and write its three files."""
    with temp_server("hs-gem-") as (root, tmux), api.FakeGeminiAPI(scenario.script) as fake:
        session = GeminiSession(tmux, fake, binary, root, width=width, height=height, **scenario.session)
        ansi, info = play(session, scenario.drive, settle=scenario.settle)
    meta = pane_record({"agent": "gemini", "version": version}, scenario.name, RENDERER, info, {"state": scenario.state, **scenario.expected})
    write_screen(out / RENDERER / f"{width}x{height}", scenario.name, ansi, meta)
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.record_gemini", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="SCENARIO", choices=sorted(BY_NAME))
    parser.add_argument("--sizes", nargs="+", type=parse_size, metavar="WxH", default=list(SIZES))
    parser.add_argument("--version", default=GEMINI_VERSION)
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--tries", type=int, default=2)
    args = parser.parse_args(argv)
    out = args.out or corpus_dir(args.version)
    binary = find_gemini(install=True, version=args.version)
    scenarios = [sc for sc in ([BY_NAME[n] for n in args.only] if args.only else SCENARIOS) if sc.applies_to(args.version)]
    jobs = [(sc, w, h) for sc in scenarios for (w, h) in args.sizes]
    print(f"recording {len(jobs)} screens of Gemini CLI {args.version} ({binary}) into {out}", flush=True)
    return record_all(jobs, lambda job: record_one(*job, args.version, binary, out), lambda job: f"{job[1]}x{job[2]}/{job[0].name}", workers=args.jobs, tries=args.tries)


if __name__ == "__main__":
    sys.exit(main())
