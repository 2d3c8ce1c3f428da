"""How long the app's loop stalls while jumps whose tmux takes 0.5 s run, in process and over HTTP to a real service.

    python benchmarks/jump_stall.py --jumps 10 --tmux 0.5 --json

The demo table (recorded Claude screens) runs headless (Textual's test
driver) in both modes a front end reaches its service
(tests/ui/held_jump.py): with the service in the app's process
(``--no-service``), and as a client of a real service in its own process
over its Unix socket.  The jump's tmux is stood in for by a call that takes
``--tmux`` seconds; the jumps go one after another, each started by Enter as
a user would.  A heartbeat on the app's loop wakes every 5 ms; the longest
gap between two beats beyond the 5 ms asked for, while the jumps ran, is
how long a key would have waited.  Before the service's calls left the
loop, a 0.5 s tmux stalled it 0.5 s per jump.

Not part of the tests.  Prints one JSON line per mode (``--json``) or a
short report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.ui_stall import heartbeat  # noqa: E402
from tests.ui.apps import asked_all, settle  # noqa: E402
from tests.ui.held_jump import in_process, over_http  # noqa: E402

BEAT = 0.005


async def _measure(app, held, jumps: int) -> dict:
    gaps: list[float] = []

    async with app.run_test(size=(120, 40)) as pilot:
        await held.load(pilot)
        await settle(pilot)
        beat = asyncio.create_task(heartbeat(gaps, BEAT))
        started = time.perf_counter()
        for n in range(jumps):
            await pilot.press("enter")
            deadline = time.monotonic() + 60
            # Until tmux answered this jump, then until the app has its answer (no question of it out).
            while len(held.jumps()) <= n or not asked_all(app):
                if time.monotonic() > deadline:
                    raise SystemExit(f"jump {n + 1} did not land within 60 s")
                await asyncio.sleep(0.01)
        took = time.perf_counter() - started
        beat.cancel()
    gaps.sort()
    return {
        "jumps": len(held.jumps()),
        "seconds": round(took, 2),
        "worst_stall_ms": round(gaps[-1] * 1000, 1),
        "p99_stall_ms": round(gaps[int(len(gaps) * 0.99)] * 1000, 1),
        "beats": len(gaps),
    }


def run(mode: str, jumps: int, seconds: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="hs-jump-stall-") as folder:
        os.chmod(folder, 0o700)
        with in_process(seconds) if mode == "in_process" else over_http(Path(folder), seconds) as (app, held):
            result = asyncio.run(_measure(app, held, jumps))
    return {"mode": mode, "tmux_seconds": seconds, **result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jumps", type=int, default=10)
    parser.add_argument("--tmux", type=float, default=0.5, help="seconds the jump's tmux takes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for mode in ("in_process", "over_http"):
        result = run(mode, args.jumps, args.tmux)
        if args.json:
            print(json.dumps(result))
        else:
            print(f"{mode:>10}: {result['jumps']} jumps of {args.tmux:g} s in {result['seconds']} s; loop's worst stall {result['worst_stall_ms']} ms, p99 {result['p99_stall_ms']} ms")


if __name__ == "__main__":
    main()
