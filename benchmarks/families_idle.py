"""What an idle agent of each family costs headspace: real binaries at their prompts, the app watching them.

    python benchmarks/families_idle.py                    # 4 agents of each family, 20 s windows
    python benchmarks/families_idle.py --agents 6 --seconds 30 --json

For each family (Codex CLI, Gemini CLI, opencode, Copilot CLI, Qwen Code: the pinned binaries
against their scripted APIs, tests/harness/) N agents are started at their
prompts in a private tmux server, and the app (headless, under Textual's
pilot) watches them; after the first reads settle, headspace's own CPU
(this process: the app, its service, its control clients' readers) and
the tmux server's are measured over a window.  The same is done with no
agent at all, so what one idle agent adds is (family - none) / N.  The
agents' own CPU is theirs, not headspace's, and is not counted (their
notes in ``headspace_tui/detect/<family>/`` give it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from headspace_tui.service.facade import Service  # noqa: E402
from headspace_tui.service.records.journal import Journal  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402
from tests.harness import codex_api, gemini_api, opencode_api  # noqa: E402
from tests.harness.codex_agent import CodexSession, find_codex  # noqa: E402
from tests.harness.copilot_agent import CopilotSession, find_copilot  # noqa: E402
from tests.harness.gemini_agent import GeminiSession, find_gemini  # noqa: E402
from tests.harness.opencode_agent import OpencodeSession, find_opencode  # noqa: E402
from tests.harness.qwen_agent import QwenSession, find_qwen  # noqa: E402
from tests.harness.tmux import PrivateTmux  # noqa: E402
from tests.ui.apps import app_of  # noqa: E402


def self_cpu() -> float:
    return time.process_time()


def proc_cpu(pid: int) -> float:
    """CPU seconds of one process (the tmux server), from /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def start_agents(family: str, count: int, tmux: PrivateTmux, root: Path, stack: ExitStack) -> list:
    """``count`` agents of ``family`` at their prompts (each closed, with its API, when ``stack`` ends)."""
    sessions = []
    for n in range(count):
        where = root / f"{family}-{n}"
        if family == "codex":
            api = stack.enter_context(codex_api.FakeResponsesAPI())
            session = CodexSession(tmux, api, find_codex(), where, name=f"codex{n}", width=100, height=30)
        elif family == "gemini":
            api = gemini_api.FakeGeminiAPI(()).start()
            stack.callback(api.close)
            session = GeminiSession(tmux, api, find_gemini(), where, name=f"gemini{n}", width=100, height=30)
        else:
            api = opencode_api.OpenAICompatibleAPI().start()
            stack.callback(api.close)
            chat = {"copilot": (CopilotSession, find_copilot), "qwen": (QwenSession, find_qwen)}.get(family)
            if chat is not None:
                session = chat[0](tmux, api, chat[1](), where, name=f"{family}{n}", width=100, height=30)
            else:
                session = OpencodeSession(tmux, api, find_opencode(), where, name=f"opencode{n}", width=100, height=30)
        stack.callback(session.close)
        session.launch(wait_ready=False)
        sessions.append(session)
    for session in sessions:
        session.wait_ready()
    return sessions


async def watch(tmux: PrivateTmux, expected: int, seconds: float, workdir: Path) -> dict:
    app = app_of(Service.build(TmuxServer(socket_name=tmux.name), config_dir=workdir / "no-claude-config", journal=Journal(None), hooks=False))
    async with app.run_test(size=(160, 48)) as pilot:
        deadline = time.monotonic() + 60
        while len(app.table.agents) < expected and time.monotonic() < deadline:
            await pilot.pause(0.2)
        found = len(app.table.agents)
        states = sorted({a.state.value for a in app.table.agents.values()})
        await pilot.pause(3.0)  # the first reads settle
        server = int(tmux.run("display-message", "-p", "#{pid}").strip())
        readings: dict[str, Callable[[], float]] = {"headspace": self_cpu, "tmux": lambda: proc_cpu(server)}
        before = {name: read() for name, read in readings.items()}
        began = time.monotonic()
        await pilot.pause(seconds)
        took = time.monotonic() - began
        used = {name: 100 * (read() - before[name]) / took for name, read in readings.items()}
    return {"found": found, "states": states, "headspace_pct": round(used["headspace"], 2), "tmux_pct": round(used["tmux"], 2)}


def measure(family: str | None, count: int, seconds: float) -> dict:
    root = Path(tempfile.mkdtemp(prefix="headspace-families-idle-"))
    tmux = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"})
    try:
        with ExitStack() as stack:
            if family is None:
                tmux.new_session("empty", width=100, height=30, cwd="/", command=["bash", "--norc", "-i"])
            else:
                start_agents(family, count, tmux, root, stack)
            return asyncio.run(watch(tmux, 0 if family is None else count, seconds, root))
    finally:
        tmux.close()
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=4, help="agents of each family (default 4)")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each CPU window (default 20)")
    parser.add_argument("--families", default="codex,gemini,opencode,copilot,qwen", help="comma-separated (default all five)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    result: dict = {"agents": args.agents, "seconds": args.seconds, "none": measure(None, 0, args.seconds)}
    for family in args.families.split(","):
        got = measure(family, args.agents, args.seconds)
        got["per_agent_headspace_pct"] = round((got["headspace_pct"] - result["none"]["headspace_pct"]) / args.agents, 3)
        result[family] = got
    if args.json:
        print(json.dumps(result))
    else:
        for name, got in result.items():
            print(f"{name}: {got}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
