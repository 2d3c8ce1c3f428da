"""Key to tool result: the answer hook against guarded keystrokes, with the real Claude Code.

    python benchmarks/answer_latency.py --rounds 5

Each round starts a real Claude (the pinned binary, scripted local API,
private tmux server and HOME) with the answer hook installed, runs the app
(Textual's pilot), brings Claude to a Bash permission dialog and presses
``y`` once the row is answerable; the time is from the key press to the
tool result arriving at the API.  "hook": the request waits in the answer
channel and ``y`` answers through it.  "keys": the same, but the hook's wait
is 1 s, so by the time ``y`` is pressed only keys can answer (the row has
fallen back).  Not part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from headspace_tui.model import AgentState  # noqa: E402
from tests.e2e.test_answer_channel import app_for, ask, ready_to_answer, record_keys, start  # noqa: E402
from tests.harness import fake_api as api  # noqa: E402
from tests.harness.claude import find_claude  # noqa: E402
from tests.harness.fake_api import FakeAnthropicAPI  # noqa: E402
from tests.harness.session import ClaudeSession  # noqa: E402
from tests.harness.tmux import PrivateTmux  # noqa: E402


def one_round(channel: str, root: Path, claude: str) -> tuple[float, int]:
    """Seconds from ``y`` to the tool result, and how many keys headspace sent."""
    tmux = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"})
    with FakeAnthropicAPI() as fake:
        sessions: list[ClaudeSession] = []

        def factory(script=(), *, launch=True, name=None, **options):
            if script:
                fake.set_script(script)
            session = ClaudeSession(tmux, fake, claude, root / (name or "agent"), name=name or "agent", **options)
            sessions.append(session)
            session.launch() if launch else session.start_shell()
            return session

        try:
            session, runtime = start(factory, root, [api.bash("touch bench.txt", "Create a file"), api.text("Done.")], wait=30 if channel == "hook" else 1)

            async def scenario() -> tuple[float, int]:
                app = app_for(tmux, session, runtime)
                async with app.run_test(size=(160, 48)) as pilot:
                    sent = record_keys(app)
                    await ask(pilot, app, session, "create the file")
                    if channel == "keys":
                        await asyncio.sleep(1.5)  # the hook's 1 s wait is over: keys only
                    await ready_to_answer(pilot, app, session.pane_id, AgentState.PERMISSION, channel="hook" if channel == "hook" else "")
                    pressed = time.monotonic()
                    await pilot.press("y")
                    await asyncio.to_thread(fake.wait_for, lambda r: bool(r.tool_results()), 30)
                    return time.monotonic() - pressed, len(sent)

            return asyncio.run(scenario())
        finally:
            for session in sessions:
                session.close()
            tmux.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    claude = find_claude()
    results: dict[str, list[float]] = {"hook": [], "keys": []}
    keys_sent: dict[str, list[int]] = {"hook": [], "keys": []}
    for n in range(args.rounds):
        for channel in ("hook", "keys"):
            root = Path(tempfile.mkdtemp(prefix=f"hs-bench-{channel}-"))
            try:
                seconds, sent = one_round(channel, root, claude)
            finally:
                shutil.rmtree(root, ignore_errors=True)
            results[channel].append(seconds)
            keys_sent[channel].append(sent)
            print(f"round {n + 1} {channel}: {seconds * 1000:.0f} ms, {sent} key(s) sent", file=sys.stderr)
    summary = {
        channel: {
            "p50_ms": round(statistics.median(times) * 1000),
            "min_ms": round(min(times) * 1000),
            "max_ms": round(max(times) * 1000),
            "keys_sent": keys_sent[channel],
        }
        for channel, times in results.items()
    }
    print(json.dumps(summary) if args.json else "\n".join(f"{c}: {v}" for c, v in summary.items()))


if __name__ == "__main__":
    main()
