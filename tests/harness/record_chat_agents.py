"""Record GitHub Copilot CLI's and Qwen Code's screens from the real binaries: their scenarios and the recorder.

    python -m tests.harness.record_chat_agents copilot               # the pinned version, every scenario
    python -m tests.harness.record_chat_agents qwen --only permission_shell --sizes 80x24

Both talk to the scripted OpenAI-compatible API (tests/harness/opencode_api.py),
so their scenarios are the same script with each one's own shell tool and
the words each draws.  Each scenario is played at 80x24, 72x22 and 120x40 in
its own private tmux server and written as the other corpora are::

    snapshots/panes/<family>-<version>/<renderer>/<W>x<H>/<scenario>.{ansi,txt,json}

"alt": both draw on the alternate screen (``alternate_on`` 1 in every
recording).  A scenario's ``drive`` returns only once the screen shows its
state.  The live tests reuse these sessions.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import opencode_api as api
from .copilot_agent import COPILOT_VERSION, CopilotSession, find_copilot
from .copilot_agent import PERMISSION as COPILOT_PERMISSION
from .copilot_agent import READY as COPILOT_READY
from .copilot_agent import WORKING as COPILOT_WORKING
from .pane_session import SHELL_PROMPT, PaneSession
from .qwen_agent import PERMISSION as QWEN_PERMISSION
from .qwen_agent import PLACEHOLDER as QWEN_PLACEHOLDER
from .qwen_agent import QWEN_VERSION, QwenSession, find_qwen
from .qwen_agent import WORKING_HINT as QWEN_WORKING
from .recording import pane_record, parse_size, play, record_all, write_screen
from .recording import plain_text as plain_text  # re-exported: the screen tests read with it
from .tmux import temp_server

REPO = Path(__file__).resolve().parents[2]
PANES = REPO / "snapshots" / "panes"
SIZES = ((80, 24), (72, 22), (120, 40))
RENDERER = "alt"

QUESTION_REPLY = "I can put the parser in parser.py or split it across lexer.py and grammar.py. Which layout do you prefer?"
LONG_COMMAND = "touch marker.txt && mkdir -p build/reports/coverage/html && printf 'coverage for every package\\n' > build/reports/coverage/README.txt"
REJECTED = "The scripted model rejected the request"


@dataclass(frozen=True)
class Agent:
    """What differs between the two: how a session is made, its shell tool, and the words that say a screen is reached."""

    name: str
    version: str
    find: Callable[..., str]
    session: Callable[..., PaneSession]
    shell_tool: str
    ready: Callable[[str], bool]  # at rest, its box empty or not
    working: re.Pattern[str]
    permission: re.Pattern[str]
    quit: str  # the command that ends it

    def shell(self, command: str, description: str) -> api.Step:
        return api.tool(self.shell_tool, {"command": command, "description": description})


COPILOT = Agent(
    "copilot",
    COPILOT_VERSION,
    find_copilot,
    CopilotSession,
    "bash",
    lambda screen: COPILOT_READY.search(screen) is not None and COPILOT_WORKING.search(screen) is None,
    COPILOT_WORKING,
    COPILOT_PERMISSION,
    "/exit",
)
QWEN = Agent(
    "qwen",
    QWEN_VERSION,
    find_qwen,
    QwenSession,
    "run_shell_command",
    lambda screen: QWEN_PLACEHOLDER in screen and QWEN_WORKING.search(screen) is None,
    QWEN_WORKING,
    QWEN_PERMISSION,
    "/quit",
)
AGENTS = {a.name: a for a in (COPILOT, QWEN)}


@dataclass(frozen=True)
class Scenario:
    name: str
    state: str
    script: Callable[[Agent], tuple[api.Step, ...]] = lambda agent: ()
    drive: Callable[[Agent, Any], None] = lambda agent, s: None
    expected: Callable[[Agent], dict[str, Any]] = lambda agent: {}
    session: dict[str, Any] = field(default_factory=dict)
    settle: bool = True
    families: tuple[str, ...] = ()  # the families that draw it (empty: both)


def _ask(prompt: str, wait: Callable[[Agent], object]) -> Callable[[Agent, Any], None]:
    def drive(agent: Agent, s: Any) -> None:
        s.launch()
        s.submit(prompt)
        s.wait_for(wait(agent), timeout=60, what=f"the screen after {prompt!r}")

    return drive


def _then_ready(marker: str) -> Callable[[Agent, Any], None]:
    """Ask, wait for ``marker`` (wraps aside), then for the agent at rest."""

    def drive(agent: Agent, s: Any) -> None:
        _ask("go on", lambda a: lambda screen: marker in " ".join(screen.split()))(agent, s)
        s.wait_for(agent.ready, timeout=30, what="the agent at rest")

    return drive


def ask_user(agent: Agent) -> api.Step:
    """Each one's tool that asks the person a question with choices."""
    if agent.name == "copilot":
        schema = {"properties": {"db": {"type": "string", "title": "Database", "enum": ["Postgres", "SQLite"]}}, "required": ["db"]}
        return api.tool("ask_user", {"message": "Which database should we use?", "requestedSchema": schema})
    options = [{"label": "Postgres", "description": "A server, for many writers"}, {"label": "SQLite", "description": "One file, no server"}]
    return api.tool("ask_user_question", {"questions": [{"question": "Which database should we use?", "header": "Database", "options": options, "multiSelect": False}]})


def _refused(agent: Agent, s: Any) -> None:
    """Ask for a command, refuse it in the dialog with Esc, and wait for the agent at rest."""
    _ask("create another file", lambda a: a.permission)(agent, s)
    s.wait_stable(quiet=0.5, timeout=3, strict=False)  # a key sent as the dialog is drawn can be lost
    s.press("Escape")
    s.wait_for(lambda screen: agent.permission.search(screen) is None and agent.ready(screen), timeout=30, what="the agent at rest after the refusal")


def _retrying(agent: Agent, s: Any) -> None:
    """Ask, then wait until the API has refused it thrice (it is retrying) and the screen says it works."""
    s.launch()
    s.submit("hello")
    s.api.wait_for(lambda request: len(s.api.requests) >= 3, timeout=60)
    s.wait_for(agent.working, timeout=30, what="the turn still running")


def _idle(agent: Agent, s: Any) -> None:
    s.launch()


def _drafting(agent: Agent, s: Any) -> None:
    s.launch()
    s.wait_stable(quiet=0.5, timeout=5, strict=False)
    s.type("please rename the parser module and keep its tests green")
    s.wait_for("keep its tests green", what="the draft")


def _starting(agent: Agent, s: Any) -> None:
    s.launch(wait_ready=False)
    s.wait_for("Confirm folder trust", timeout=60, what="the trust dialog")


def _exited(agent: Agent, s: Any) -> None:
    s.launch()
    s.submit(agent.quit)
    s.wait_for(lambda screen: SHELL_PROMPT.search(screen.rstrip()) is not None, timeout=30, what="the shell prompt after quitting")


def _error(agent: Agent, s: Any) -> None:
    s.launch()
    s.submit("check the key")
    s.wait_for(lambda screen: "rejected the request" in " ".join(screen.split()), timeout=60, what="the error")
    s.wait_for(agent.ready, timeout=30, what="the agent at rest under the error")


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("starting_trust", "starting", drive=_starting, session={"trust_dialog": True}, families=("copilot",)),
    Scenario("idle", "idle", drive=_idle),
    Scenario("idle_with_draft", "idle", drive=_drafting),
    Scenario("idle_after_reply", "idle", lambda a: (api.text("Hello there. The tests pass and the build is green."),), _then_ready("the build is green")),
    Scenario(
        "working",
        "working",
        lambda a: (api.text(" ".join(f"word{i}" for i in range(80)), seconds=120),),
        _ask("write a long answer", lambda a: a.working),
        settle=False,
    ),
    # A 429 is retried by both on their own, with no word of it on screen (Qwen: 16 requests in 25 s, Copilot: 4):
    # working, as the screen says; neither draws a rate limit that stopped it.
    Scenario(
        "working_retrying",
        "working",
        lambda a: (api.fail(429, message="Rate limit reached for requests. Try again in 20s.", times=None),),
        _retrying,
        settle=False,
    ),
    Scenario(
        "permission_shell",
        "permission",
        lambda a: (a.shell("touch marker.txt", "Create the marker file"),),
        _ask("make the marker", lambda a: a.permission),
        lambda a: {"tool": "Shell", "detail": "touch marker.txt"},
    ),
    Scenario(
        "permission_long_command",
        "permission",
        lambda a: (a.shell(LONG_COMMAND, "Prepare the coverage folder"),),
        _ask("prepare coverage", lambda a: a.permission),
        lambda a: {"tool": "Shell", "detail": LONG_COMMAND},
    ),
    # Refused in its dialog (Esc: Copilot then draws "✗ Shell …", the error's mark): at rest, not in error.
    Scenario("idle_after_refusal", "idle", lambda a: (a.shell("touch refused.txt", "Create another file"), api.text("Stopped.")), _refused),
    Scenario("input", "input", lambda a: (api.text(QUESTION_REPLY),), _then_ready("Which layout do you prefer?"), lambda a: {"question": QUESTION_REPLY}),
    Scenario(
        "question",
        "question",
        lambda a: (ask_user(a),),
        _ask("pick a database", lambda a: re.compile(r"Postgres.*\n(?:.*\n){0,4}.*SQLite")),
        lambda a: {"question": "Which database should we use?"},
    ),
    # Qwen's default mode: its classifier judges each call, and when it cannot (here: its request refused) it asks.
    Scenario(
        "permission_auto_fallback",
        "permission",
        lambda a: (a.shell("touch marker.txt", "Create the marker file"), api.fail(400, message="no classifier here", times=None)),
        _ask("make the marker", lambda a: a.permission),
        lambda a: {"tool": "Shell", "detail": "touch marker.txt", "mode": "auto"},
        session={"mode": "auto"},
        families=("qwen",),
    ),
    Scenario("idle_auto", "idle", drive=_idle, expected=lambda a: {"mode": "auto"}, session={"mode": "auto"}, families=("qwen",)),
    Scenario("idle_yolo", "idle", drive=_idle, expected=lambda a: {"mode": "bypass"}, session={"mode": "yolo"}, families=("qwen",)),
    Scenario("idle_plan", "idle", drive=_idle, expected=lambda a: {"mode": "plan"}, session={"mode": "plan"}, families=("qwen",)),
    Scenario("idle_allow_all", "idle", drive=_idle, expected=lambda a: {"mode": "bypass"}, session={"extra_args": ["--allow-all"]}, families=("copilot",)),
    Scenario("idle_plan", "idle", drive=_idle, expected=lambda a: {"mode": "plan"}, session={"extra_args": ["--plan"]}, families=("copilot",)),
    # Outside its folder Copilot asks for the path as well as for the command.
    Scenario(
        "permission_path",
        "permission",
        lambda a: (a.shell("touch /tmp/headspace-outside.txt", "Create a file outside"),),
        _ask("make the outside file", lambda a: re.compile(r"Do you want to")),
        lambda a: {"tool": "Allow path access", "detail": "/tmp/headspace-outside.txt"},
        families=("copilot",),
    ),
    Scenario("error", "error", lambda a: (api.fail(400, message=REJECTED, times=None),), _error),
    Scenario("exited", "exited", drive=_exited),
)
NAMES = sorted({sc.name for sc in SCENARIOS})  # a name both draw differently is a scenario of each


def corpus_dir(agent: Agent, version: str) -> Path:
    return PANES / f"{agent.name}-{version}"


def record_one(agent: Agent, scenario: Scenario, width: int, height: int, version: str, binary: str, out: Path) -> dict:
    """Play one scenario against the real binary and write its three files."""
    with temp_server(f"hs-{agent.name[:3]}-") as (root, tmux), api.OpenAICompatibleAPI(list(scenario.script(agent))) as fake:
        session = agent.session(tmux, fake, binary, root, width=width, height=height, **scenario.session)
        ansi, info = play(session, lambda s: scenario.drive(agent, s), settle=scenario.settle)
    meta = pane_record({"agent": agent.name, "version": version}, scenario.name, RENDERER, info, {"state": scenario.state, **scenario.expected(agent)})
    write_screen(out / RENDERER / f"{width}x{height}", scenario.name, ansi, meta)
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.record_chat_agents", description=__doc__.split("\n\n")[0])
    parser.add_argument("family", choices=sorted(AGENTS), help="copilot or qwen")
    parser.add_argument("--only", nargs="+", metavar="SCENARIO", choices=NAMES)
    parser.add_argument("--sizes", nargs="+", type=parse_size, metavar="WxH", default=list(SIZES))
    parser.add_argument("--version")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--tries", type=int, default=2)
    args = parser.parse_args(argv)
    agent = AGENTS[args.family]
    version = args.version or agent.version
    out = args.out or corpus_dir(agent, version)
    binary = agent.find(install=True, version=version)
    scenarios = [sc for sc in SCENARIOS if (not args.only or sc.name in args.only) and (not sc.families or agent.name in sc.families)]
    jobs = [(sc, w, h) for sc in scenarios for (w, h) in args.sizes]
    print(f"recording {len(jobs)} screens of {agent.name} {version} ({binary}) into {out}", flush=True)
    return record_all(jobs, lambda job: record_one(agent, *job, version, binary, out), lambda job: f"{job[1]}x{job[2]}/{job[0].name}", workers=args.jobs, tries=args.tries)


if __name__ == "__main__":
    sys.exit(main())
