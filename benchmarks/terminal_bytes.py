"""What headspace costs a remote link: bytes per minute a real terminal receives.

    python benchmarks/terminal_bytes.py [--sizes 80x24,120x40] [--seconds 30] [--settle 8] [--json]

Real Claude Code agents (the scripted local API behind them) run in a
private tmux server; headspace runs as a program in a pane of a second
private server, and a real tmux client in a pty is attached to it, counting
every byte it receives (what ssh would carry).  For each terminal size,
after a settle period, over the same window:

* **idle**: every agent (3) idle at its prompt;
* **previewing**: one agent runs a long Bash tool (Claude's spinner and
  timer tick), headspace previews it; at the same time a second client is
  attached straight to that agent's session (**direct**), the cost of
  looking at the pane itself;
* **waiting**: that agent interrupted, two others at a permission menu
  (their rows' time counts seconds), the first of them previewed.

Both servers have the status line off.  Numbers vary with what Claude draws
(its spinner words have different lengths) by some percent.  Not part of the
tests (``tests/e2e/test_terminal_bytes.py`` checks the limits).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.harness.claude import find_claude
from tests.harness.terminal_bytes import Rig, per_minute


def measure(claude: str, width: int, height: int, seconds: float, settle: float, env: dict[str, str]) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="hs-bytes-"))
    try:
        with Rig(claude, root, width, height, agents=3, extra_env=env) as rig:
            assert rig.terminal is not None
            time.sleep(settle)
            (idle,) = per_minute([rig.terminal], seconds)
            rig.work(0)
            direct = rig.attach_direct(0)
            time.sleep(settle)
            previewing, attached = per_minute([rig.terminal, direct], seconds)
            rig.stop_work(0)
            rig.ask_permission([1, 2])
            time.sleep(settle)
            (waiting,) = per_minute([rig.terminal], seconds)
        return {"idle": idle, "waiting": waiting, "previewing": previewing, "direct": attached}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="80x24,120x40")
    parser.add_argument("--seconds", type=float, default=30.0, help="each measuring window (default 30)")
    parser.add_argument("--settle", type=float, default=8.0, help="wait before each window (default 8)")
    parser.add_argument("--ssh", action="store_true", help="run headspace with SSH_CONNECTION set, as over ssh")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    claude = find_claude()
    env = {"SSH_CONNECTION": "192.0.2.1 50000 192.0.2.2 22"} if args.ssh else {}
    rows = []
    for size in args.sizes.split(","):
        width, height = (int(x) for x in size.split("x"))
        result = measure(claude, width, height, args.seconds, args.settle, env)
        rows.append({"size": size, **result})
        if args.json:
            print(json.dumps({"size": size, "seconds": args.seconds, "ssh": args.ssh, **{k: round(v) for k, v in result.items()}}), flush=True)
    if not args.json:
        print(f"bytes per minute ({args.seconds:.0f} s windows{', SSH_CONNECTION set' if args.ssh else ''}):")
        print(f"{'size':>8} {'idle':>10} {'waiting':>10} {'previewing':>11} {'direct':>10} {'ratio':>6}")
        for row in rows:
            ratio = row["previewing"] / row["direct"] if row["direct"] else float("inf")
            print(f"{row['size']:>8} {row['idle']:>10.0f} {row['waiting']:>10.0f} {row['previewing']:>11.0f} {row['direct']:>10.0f} {ratio:>6.1f}")


if __name__ == "__main__":
    main()
