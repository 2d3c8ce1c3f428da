"""Record Codex CLI's screens from the real binary against the scripted Responses API.

    python -m tests.harness.record_codex                   # the pinned version
    python -m tests.harness.record_codex --version 0.144.0
    python -m tests.harness.record_codex --only permission_touch --sizes 80x24

Writes ``snapshots/panes/codex-<version>/<renderer>/<W>x<H>/<scenario>.{ansi,txt,json}``
in the format of Claude's corpus (``record.py``), with ``"agent": "codex"``.
The renderer is the one Codex draws with: 0.169.0 takes the alternate screen
by default ("alt") and draws inline with ``--no-alt-screen``; 0.144.0 draws
inline in tmux by default (and is recorded so only).

A label is what the screen shows a person: every recorded ``.txt`` was looked
at before its expected state was trusted.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import codex_api as api
from . import scenarios as text
from .codex_agent import APPROVAL, CODEX_VERSION, CodexSession, find_codex
from .pane_session import SHELL_PROMPT
from .recording import Job, pane_record, parse_size, plain_text, record_all, write_screen
from .tmux import temp_server
from .versions import nearest_older

REPO = Path(__file__).resolve().parents[2]
PANES = REPO / "snapshots" / "panes"
SIZES = ((80, 24), (120, 40))
# What each recorded version draws with by default, the first its default in tmux (0.154 and 0.155: inline,
# as 0.144; 0.160.1: the alternate screen; 0.171.0 stays on the alternate screen even with --no-alt-screen:
# its canary run recorded no inline screen).  An unlisted version: those of the newest listed one before it.
RENDERERS: dict[str, tuple[str, ...]] = {
    "0.144.0": ("inline",),
    "0.154.0": ("inline",),
    "0.155.0": ("inline",),
    "0.160.1": ("alt",),
    "0.169.0": ("alt", "inline"),
    "0.171.0": ("alt",),
}

QUESTION = "I found two ways to fix the flaky test. Should I also update the snapshot files, or leave them alone?"
REPLY = "Hello from the scripted API. The parser reads tokens and builds a tree."
REPLY_END = re.compile(r"builds\s+a\s+tree\.")  # its last words, wherever a narrow pane wraps them (72 columns: "builds a" / "tree.")
LONG_COMMAND = (
    "touch marker.txt && mkdir -p build/reports/coverage/html && printf 'coverage for every package in the workspace\\n' > build/reports/coverage/README.txt && ls -la build/reports/coverage"
)
# Paragraphs: 0.144 shows streamed text a finished line at a time.
DRAFT = "please also update the snapshot files of the parser tests and keep the old ones for the changelog"
SLOW = "\n\n".join(["The tokenizer reads the input one rune at a time and groups runs of letters into identifiers."] * 12)
WORKING = re.compile(r"esc to interrupt")
RETRYING = re.compile(r"Reconnecting\.\.\. \d+/\d+")
ERROR_MARK = re.compile(r"^■ ", re.M)


@dataclass(frozen=True)
class Scenario:
    name: str
    state: str
    script: list[api.Step]
    drive: Callable[[CodexSession], None]
    expected: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)
    settle: bool = True  # wait for the text to stop changing before the capture
    versions: tuple[str, ...] = ()  # recorded only on these (empty: every version)
    # What the captured screen must still show (a retry notice comes and goes): else the screen is taken again.
    shows: re.Pattern[str] | None = None


def _ready(s: CodexSession) -> None:
    s.launch()


def _signin(s: CodexSession) -> None:
    s.launch(wait_ready=False)
    s.wait_for("Sign in with ChatGPT", what="the sign-in menu")


LOADING = re.compile(r"^  \? for shortcuts$", re.M)  # 0.169's first frames: the composer, no model line yet


def _loading(s: CodexSession) -> None:
    s.launch(wait_ready=False)
    s.wait_for(LOADING, what="the composer before the model line", timeout=15)


def _trust(s: CodexSession) -> None:
    s.launch(wait_ready=False)
    s.wait_for(re.compile(r"[Tt]rust (?:this folder|the files|the contents)|Trust and continue"), what="the trust dialog")


def _reply(s: CodexSession) -> None:
    s.launch()
    s.submit("say hello")
    s.wait_for(lambda screen: REPLY_END.search(screen) is not None, what="the reply")
    s.api.wait_for(lambda r: True)
    s.wait_for(lambda screen: not WORKING.search(screen), what="the turn's end")


def _question(s: CodexSession) -> None:
    s.launch()
    s.submit("fix the flaky test")
    s.wait_for("leave them alone?", what="the question")
    s.wait_for(lambda screen: not WORKING.search(screen), what="the turn's end")


def _text_turn(prompt: str, marker: str) -> Callable[[CodexSession], None]:
    """Submit ``prompt``; wait for ``marker`` in the reply (wraps aside) and the turn's end."""

    def drive(s: CodexSession) -> None:
        s.launch()
        s.submit(prompt)
        s.wait_for(lambda screen: marker in " ".join(screen.split()), what=f"the reply with {marker!r}")
        s.wait_for(lambda screen: not WORKING.search(screen), what="the turn's end")

    return drive


def _stalled(s: CodexSession) -> None:
    s.launch()
    s.submit("explain the parser")
    s.wait_for(WORKING, what="the working status")


def _streaming(s: CodexSession) -> None:
    s.launch()
    s.submit("explain the parser slowly")
    s.wait_for("one rune at a time", what="the streaming reply", timeout=40)


def _approval(s: CodexSession) -> None:
    s.launch()
    s.submit("create the marker file")
    s.wait_for(APPROVAL, what="the approval dialog")


def _error(s: CodexSession) -> None:
    s.launch()
    s.submit("break the build")
    s.wait_for(ERROR_MARK, what="the error")
    s.wait_for(lambda screen: not WORKING.search(screen), what="the turn's end")


def _retrying(s: CodexSession) -> None:
    s.launch()
    s.submit("break the build")
    s.wait_for(RETRYING, what="a retry notice", timeout=40)


def _plan_question(s: CodexSession) -> None:
    s.launch()
    s.press("BTab")  # to Plan mode, where Codex offers request_user_input
    s.wait_for("Plan mode", what="Plan mode in the footer")
    s.submit("pick a database")
    s.wait_for(re.compile(r"Question 1/1"), what="the question")


def _draft(s: CodexSession) -> None:
    s.launch()
    s.tmux.send_text(s.pane_id, DRAFT)
    s.wait_for(DRAFT.split()[-1] + "\n", what="the draft in the composer")


def _exited(s: CodexSession) -> None:
    s.launch()
    s.tmux.send_text(s.pane_id, "/quit")
    s.wait_for("/quit", what="the typed command")
    s.wait_stable(quiet=0.5, timeout=5, strict=False)
    s.press("Enter")
    s.wait_for(lambda screen: SHELL_PROMPT.search(screen.rstrip()) is not None, what="the shell prompt")


DATABASE = {
    "questions": [
        {
            "id": "database",
            "header": "Database",
            "question": "Which database should we use?",
            "options": [
                {"label": "Postgres (Recommended)", "description": "A server with every feature"},
                {"label": "SQLite", "description": "One file, no server"},
            ],
        }
    ]
}
PERMISSION_OPTIONS = ["Yes, proceed", "Yes, and don't ask again for commands that start with `touch x`", "No, and tell Codex what to do differently"]

SCENARIOS = [
    Scenario("starting_signin", "starting", [], _signin, session={"provider": False}),
    Scenario("starting_loading", "starting", [], _loading, settle=False, shows=LOADING, versions=("0.169.0",)),
    Scenario("starting_trust", "starting", [], _trust, session={"trust": False, "git": True}),
    Scenario("idle_fresh", "idle", [], _ready, settle=False),
    Scenario("idle_draft", "idle", [], _draft),
    Scenario("idle_after_reply", "idle", [api.text(REPLY)], _reply),
    Scenario("working_stalled", "working", [api.stall(seconds=120)], _stalled, settle=False),
    Scenario("working_streaming", "working", [api.text(SLOW, seconds=90)], _streaming, settle=False),
    Scenario(
        "permission_touch",
        "permission",
        [api.command("touch x", justification="Do you want me to create the marker file x?")],
        _approval,
        expected={"tool": "exec_command", "detail": "touch x", "options": PERMISSION_OPTIONS},
    ),
    Scenario(
        "permission_long_command",
        "permission",
        [api.command(LONG_COMMAND, justification="Do you want me to write the coverage report?")],
        _approval,
        expected={"tool": "exec_command", "detail": LONG_COMMAND},
    ),
    Scenario("input_question", "input", [api.text(QUESTION)], _question, expected={"question": QUESTION}),
    Scenario(
        "question_plan_mode",
        "question",
        [api.Step("call", name="request_user_input", arguments=DATABASE)],
        _plan_question,
        expected={"tool": "request_user_input", "question": "Which database should we use?", "options": ["Postgres (Recommended)", "SQLite", "None of the above"]},
        versions=("0.169.0",),  # 0.144.0 has no Plan mode on shift+tab: request_user_input is refused there
    ),
    Scenario("error_rejected_400", "error", [api.fail(400, "The scripted request was rejected.", times=None)], _error),
    Scenario(
        "working_retrying_500",
        "working",
        [api.fail(500, "Internal error (scripted).", times=None)],
        _retrying,
        expected={"retrying": True},
        session={"retries": 8},
        settle=False,
        shows=RETRYING,
    ),
    Scenario("exited_shell_back", "exited", [], _exited),
]
# Issue 37: a question asked in text before what it offers, and statements that merely contain one (as for Claude).
TEXT_ONLY = ("0.169.0",)
SCENARIOS += [
    Scenario(
        "input_question_before_list",
        "input",
        [api.text(text.INPUT_BEFORE_LIST)],
        _text_turn("run the tests", "under load"),
        expected={"question": "I found three failing tests. Which one should I look at first?"},
        versions=TEXT_ONLY,
    ),
    Scenario(
        "input_question_before_code",
        "input",
        [api.text(text.INPUT_BEFORE_CODE)],
        _text_turn("look at the retry loop", "0.5 * 2 ** attempt"),
        expected={"question": "The retry loop sleeps a fixed second between attempts. Should I apply this bounded backoff instead?"},
        versions=TEXT_ONLY,
    ),
    Scenario(
        "input_question_short_last_paragraph",
        "input",
        [api.text(text.INPUT_SHORT_LAST)],
        _text_turn("finish the parser", "old behaviour"),
        expected={"question": "Want me to update the changelog too? It still describes the old behaviour."},
        versions=TEXT_ONLY,
    ),
    Scenario("idle_question_answered_in_reply", "idle", [api.text(text.STATEMENT_ANSWERED)], _text_turn("fix the build", "green again"), versions=TEXT_ONLY),
    Scenario("idle_quoted_question", "idle", [api.text(text.STATEMENT_QUOTED)], _text_turn("fix the health check", "passes now"), versions=TEXT_ONLY),
    Scenario("idle_question_heading_a_list", "idle", [api.text(text.STATEMENT_BEFORE_LIST)], _text_turn("summarise the pass", "with its line"), versions=TEXT_ONLY),
]
BY_NAME = {sc.name: sc for sc in SCENARIOS}


def corpus_dir(version: str) -> Path:
    return PANES / f"codex-{version}"


def record_one(job: Job, codex: str, out: Path) -> dict:
    with temp_server("hs-cxrec-") as (root, tmux), api.FakeResponsesAPI(job.scenario.script) as fake:
        session = CodexSession(tmux, fake, codex, root, width=job.width, height=job.height, inline=job.renderer == "inline" and job.version == "0.169.0", **job.scenario.session)
        try:
            job.scenario.drive(session)
            if job.scenario.settle:
                session.wait_stable(quiet=0.8, timeout=4, strict=False)
            ansi = session.ansi()
            info = session.info()
            if job.scenario.shows is not None:
                for _ in range(50):
                    if job.scenario.shows.search(plain_text(ansi)):
                        break
                    time.sleep(0.1)
                    ansi, info = session.ansi(), session.info()
                else:
                    raise AssertionError(f"{job.label}: the screen no longer shows {job.scenario.shows.pattern!r}")
        finally:
            session.close()
    if job.scenario.state != "exited" and info.alternate_on != (job.renderer == "alt"):
        raise AssertionError(f"{job.label}: recorded as {job.renderer} but alternate_on={info.alternate_on}")
    meta = pane_record({"agent": "codex", "version": job.version}, job.scenario.name, job.renderer, info, {"state": job.scenario.state, **job.scenario.expected})
    write_screen(out / job.renderer / f"{job.width}x{job.height}", job.scenario.name, ansi, meta)
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.record_codex", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="SCENARIO", choices=sorted(BY_NAME))
    parser.add_argument("--sizes", nargs="+", type=parse_size, metavar="WxH")
    parser.add_argument("--version", default=CODEX_VERSION)
    parser.add_argument("--renderers", nargs="+", choices=("alt", "inline"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tries", type=int, default=2)
    parser.add_argument("--out", type=Path, help="default: snapshots/panes/codex-<version>")
    args = parser.parse_args(argv)
    version = args.version
    has = nearest_older(RENDERERS, version)
    chosen = [r for r in (args.renderers or has) if r in has]
    codex = find_codex(version=version)
    out = args.out or corpus_dir(version)
    scenarios = [sc for sc in ([BY_NAME[n] for n in args.only] if args.only else SCENARIOS) if not sc.versions or version in sc.versions]
    jobs = [Job(sc, w, h, r, version) for sc in scenarios for (w, h) in (args.sizes or SIZES) for r in chosen]
    print(f"recording {len(jobs)} screens of Codex {version} ({codex}) into {out}", flush=True)
    return record_all(jobs, lambda job: record_one(job, codex, out), lambda job: job.label, workers=args.jobs, tries=args.tries)


if __name__ == "__main__":
    sys.exit(main())
