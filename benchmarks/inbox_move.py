"""Key to selection move: how long after ``y`` the inbox puts the next waiting agent under your finger.

    python benchmarks/inbox_move.py --prompts 7

Two real Claude Code sessions (the pinned binary, scripted local API,
private tmux server, throwaway HOMEs), each asking a chain of Bash
permissions, one after another (``touch A01``, then ``touch A02`` ...; the
API answers each agent by what its last tool printed, so the two chains do
not depend on the order they run in).  The app runs under Textual's pilot.
With both agents waiting, ``y`` is pressed on the selected one; the time is
from the key to ``table.selected_pane_id`` naming the other agent.  The
answered agent then asks its next permission, and ``y`` goes to the agent
now selected: so every key but the last moves the selection, and each is
timed (2 x prompts - 1 moves).

Between two keys the bench waits as a person would: both prompts on screen
for longer than a reaction time, and the last move older than one too.
Not part of the tests.
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

from headspace_tui.answering.policy import REACTION_TIME  # noqa: E402
from headspace_tui.model import AgentState  # noqa: E402
from tests.harness import fake_api as api  # noqa: E402
from tests.harness.claude import find_claude  # noqa: E402
from tests.harness.fake_api import FakeAnthropicAPI  # noqa: E402
from tests.harness.session import NUMBERED_MENU, ClaudeSession  # noqa: E402
from tests.harness.tmux import PrivateTmux  # noqa: E402
from tests.ui.apps import make_app  # noqa: E402

NAMES = ("A", "B")


def marker(name: str, n: int) -> str:
    """What the n-th command of agent ``name`` prints: the needle its next request is answered by."""
    return f"chain-{name}-out-{n:02d}-end"


def chain(name: str, prompts: int) -> list[api.Step]:
    """Agent ``name``'s steps: ``prompts`` Bash permissions in a row, each answered by the previous one's output; then done."""
    steps = [api.when(f"start chain {name}", api.bash(f"touch {name}01 && echo {marker(name, 1)}", f"Create {name}01"))]
    for n in range(1, prompts):
        steps.append(api.when(marker(name, n), api.bash(f"touch {name}{n + 1:02d} && echo {marker(name, n + 1)}", f"Create {name}{n + 1:02d}")))
    steps.append(api.when(marker(name, prompts), api.text(f"Chain {name} done.")))
    return steps


async def until(predicate, what: str, timeout: float = 60.0, step: float = 0.005) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(step)


def run(root: Path, claude: str, prompts: int) -> list[float]:
    """Seconds from each ``y`` to the selection's move to the other agent."""
    tmux = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"})
    with FakeAnthropicAPI([*chain("A", prompts), *chain("B", prompts)]) as fake:
        sessions = {name: ClaudeSession(tmux, fake, claude, root / name, name=name) for name in NAMES}
        try:
            for session in sessions.values():
                session.launch()

            async def scenario() -> list[float]:
                app = make_app(tmux.name, root, claude_home=sessions["A"].home)
                moves: list[float] = []
                said: list[str] = []  # the answers' reports and the app's notices: what a failure message shows
                app.service.on_answer_report(lambda r: said.append(f"{r.pane_id}: {r.text} (final={r.final}, move_on={r.move_on})"))
                original_notify = app.notify

                def notify(message, *args, **kwargs):
                    said.append(f"notice: {message}")
                    return original_notify(message, *args, **kwargs)

                app.notify = notify  # type: ignore[method-assign]
                async with app.run_test(size=(160, 48)) as pilot:
                    table = app.table
                    panes = {name: s.pane_id for name, s in sessions.items()}
                    await until(lambda: all(p in table.agents for p in panes.values()), "both agents in the table")
                    for name, session in sessions.items():
                        await asyncio.to_thread(session.submit, f"start chain {name}")
                        await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30, what=f"{name}'s first permission")

                    def readable(pane_id: str) -> bool:
                        agent = table.agents.get(pane_id)
                        return agent is not None and agent.state is AgentState.PERMISSION and bool(agent.observation.option_labels) and app.clock() - agent.prompt_since >= REACTION_TIME + 0.05

                    await until(lambda: all(readable(p) for p in panes.values()), "both permissions readable")
                    table.select(panes["A"])
                    await pilot.pause()
                    moved_at = time.monotonic()
                    for _ in range(2 * prompts - 1):
                        here = table.selected_pane_id
                        other = next(p for p in panes.values() if p != here)
                        await until(lambda here=here, other=other: readable(here) and readable(other), "both agents waiting, readable")
                        await until(lambda moved_at=moved_at: time.monotonic() - moved_at >= REACTION_TIME + 0.1, "a reaction time after the last move")
                        pressed = time.monotonic()
                        await pilot.press("y")
                        try:
                            await until(lambda other=other: table.selected_pane_id == other, "the selection to move to the other agent", timeout=30)
                        except TimeoutError as exc:
                            raise TimeoutError(f"{exc}; said: {said}") from None
                        moved_at = time.monotonic()
                        moves.append(moved_at - pressed)
                        print(f"key {len(moves)}: {(moved_at - pressed) * 1000:.0f} ms", file=sys.stderr)
                return moves

            return asyncio.run(scenario())
        finally:
            for session in sessions.values():
                session.close()
            tmux.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=7, help="permissions each agent asks (2 x prompts - 1 moves are timed)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    claude = find_claude()
    root = Path(tempfile.mkdtemp(prefix="hs-bench-inbox-"))
    try:
        moves = run(root, claude, args.prompts)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ordered = sorted(moves)
    summary = {
        "keys": len(moves),
        "p50_ms": round(statistics.median(moves) * 1000),
        "p90_ms": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] * 1000),
        "min_ms": round(ordered[0] * 1000),
        "max_ms": round(ordered[-1] * 1000),
    }
    print(json.dumps(summary) if args.json else ", ".join(f"{k}: {v}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
