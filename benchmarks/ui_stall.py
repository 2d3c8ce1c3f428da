"""The worst UI stall while ten agents with long histories start at once.

    python benchmarks/ui_stall.py --agents 10 --json

headspace runs headless (Textual's test driver) with its journal on a real
event log.  Then ten stand-ins for Claude (``fake_agent.py``: real recorded
screens, a process called ``claude``) start at once in a private tmux
server, each with a Claude status file naming a transcript of about 7 MB
(the recorded transcript of the tests, repeated, all of it history from
before headspace started).  A heartbeat on the app's event loop wakes every
10 ms; the longest gap between two beats, beyond the 10 ms asked for, is how
long the UI could not answer a key.  It runs until every agent is in the
table with its last command read from its transcript, and two seconds more.

Not part of the tests.  Prints one JSON line (``--json``) or a short report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from headspace_tui.app.main import HeadspaceApp  # noqa: E402
from headspace_tui.detect.claude.transcript import transcript_path  # noqa: E402
from headspace_tui.resident.facade_client import ServiceClient  # noqa: E402
from headspace_tui.service.facade import Service  # noqa: E402
from headspace_tui.service.records.journal import Journal  # noqa: E402
from headspace_tui.state.eventlog import EventLog  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402

CORPUS = REPO / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "120x40"
TRANSCRIPT = REPO / "tests" / "data" / "transcripts" / "bash_question_2.1.330.jsonl"
BEAT = 0.01


def long_transcript(size: int) -> str:
    """The recorded transcript repeated to ``size`` bytes, every uuid made unique."""
    lines = TRANSCRIPT.read_text().splitlines()
    out: list[str] = []
    total, round_ = 0, 0
    while total < size:
        for line in lines:
            data = json.loads(line)
            if "uuid" in data:
                data["uuid"] = f"{data['uuid']}-{round_}"
            text = json.dumps(data)
            out.append(text)
            total += len(text) + 1
        round_ += 1
    return "\n".join(out) + "\n"


async def heartbeat(gaps: list[float], beat: float = BEAT) -> None:
    """Wake every ``beat`` s on the running loop, until cancelled; each gap beyond ``beat`` into ``gaps`` (how long a key would have waited)."""
    last = time.perf_counter()
    while True:
        await asyncio.sleep(beat)
        now = time.perf_counter()
        gaps.append(now - last - beat)
        last = now


def tmux(socket: str, env: dict[str, str], *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, env=env, check=True).stdout


async def run(agents: int, size: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix="hs-stall-"))
    home, results = root / "home", root / "results"
    config = home / ".claude"
    (config / "sessions").mkdir(parents=True)
    results.mkdir()
    socket = f"headspace-stall-{os.getpid()}"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8", "TERM": "xterm-256color"}
    history = long_transcript(size)
    # A server with a plain shell, so the app starts watching before the agents come.
    tmux(socket, env, "-f", "/dev/null", "new-session", "-d", "-s", "shell", "-x", "80", "-y", "24", "sleep 3600")
    log_path = root / "events.db"
    journal = Journal(EventLog(log_path))
    app = HeadspaceApp(ServiceClient.in_process(Service.build(TmuxServer(socket_name=socket), config_dir=config, journal=journal, hooks=False)))
    gaps: list[float] = []

    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause(1.0)
            beat = asyncio.create_task(heartbeat(gaps))
            started = time.perf_counter()
            command = f"exec -a claude {sys.executable} -S {REPO / 'benchmarks' / 'fake_agent.py'} {CORPUS} {results}"
            cwd = str(root)
            for n in range(agents):
                tmux(socket, env, "new-session", "-d", "-s", f"a{n}", "-x", "120", "-y", "40", "-c", cwd, command)
            for line in tmux(socket, env, "list-panes", "-a", "-F", "#{session_name} #{pane_pid}").splitlines():
                name, pid = line.split()
                if not name.startswith("a"):
                    continue
                session_id = str(uuid.uuid4())
                path = transcript_path(config, cwd, session_id)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(history)
                status = {"pid": int(pid), "status": "idle", "sessionId": session_id, "cwd": cwd, "name": name, "updatedAt": int(time.time() * 1000)}
                (config / "sessions" / f"{pid}.json").write_text(json.dumps(status))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                shown = [a for a in app.table.agents.values() if a.session.startswith("a")]
                if len(shown) == agents and all(a.command for a in shown):
                    break
                await asyncio.sleep(0.05)
            ready = time.perf_counter() - started
            await asyncio.sleep(2.0)
            beat.cancel()
            shown = [a for a in app.table.agents.values() if a.session.startswith("a")]
            complete = len(shown) == agents and all(a.command for a in shown)
    finally:
        journal.close()
        socket_path = f"/tmp/tmux-{os.getuid()}/{socket}"
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, env=env)
        if os.path.exists(socket_path):
            os.unlink(socket_path)
    gaps.sort()
    return {
        "agents": agents,
        "transcript_mb": round(len(history) / 1e6, 1),
        "all_shown_with_history": complete,
        "seconds_to_ready": round(ready, 2),
        "worst_stall_ms": round(gaps[-1] * 1000, 1),
        "p99_stall_ms": round(gaps[int(len(gaps) * 0.99)] * 1000, 1),
        "beats": len(gaps),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--megabytes", type=float, default=7.0, help="size of each agent's transcript")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    result = asyncio.run(run(args.agents, int(args.megabytes * 1e6)))
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>24}: {value}")


if __name__ == "__main__":
    main()
