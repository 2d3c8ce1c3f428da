"""What a flooding pane costs headspace: CPU, and how fast tmux still answers it.

    python benchmarks/flood.py [--seconds 20] [--floods 1] [--json]

A private tmux server with one session: a fake agent (``fake_agent.py``,
real recorded Claude screens) and ``--floods`` panes running ``yes`` (the
worst a pane can do: tens of MB a second).  A ``Monitor`` (the one the app
runs) watches it, in this process.  Over the window:

* CPU of this process and of its tmux control client, in percent of one core;
* the round trip of a command through the control client (what a key and
  a capture wait for), sampled every 100 ms: p50 and p95;
* bytes of pane output the control client was sent (tmux counts nothing;
  we add up the ``%output`` sizes the client reports).

Not part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.scale import live_children, percentile, proc_cpu, self_cpu  # noqa: E402
from headspace_tui.service.records.journal import Journal  # noqa: E402
from headspace_tui.service.watching.monitor import Monitor  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402

CORPUS = REPO / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "120x40"


async def run(args: argparse.Namespace, work: Path) -> dict:
    socket = f"headspace-flood-{os.getpid()}"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "LANG": "C.UTF-8", "TERM": "xterm-256color", "TMUX_TMPDIR": str(work)}
    os.environ["TMUX_TMPDIR"] = str(work)  # the monitor's tmux finds the private server there

    def tmux(*a: str) -> str:
        return subprocess.run(["tmux", "-L", socket, *a], capture_output=True, text=True, env=env, check=True).stdout

    agent = f"exec -a claude {sys.executable} -S {REPO / 'benchmarks' / 'fake_agent.py'} {CORPUS} {work}"
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "s", "-x", "120", "-y", "40", agent)
    tmux("set-option", "-g", "status", "off")
    for _ in range(args.floods):
        tmux("new-window", "-d", "-t", "s", "yes soak-flood")
    server_pid = int(tmux("display-message", "-p", "#{pid}").strip())
    monitor = Monitor(TmuxServer(socket_name=socket), journal=Journal(None), hooks=False, config_dir=work / "none")
    task = asyncio.create_task(monitor.run())
    try:
        deadline = time.monotonic() + 20
        while not monitor.store.agents and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await asyncio.sleep(2.0)
        client = next(iter(monitor.sessions.clients.values()))
        sizes = [0]
        original = client.on_output

        def counting(pane: str, size: int) -> None:
            sizes[0] += size
            original(pane, size)

        client.on_output = counting
        kids = [k for k in live_children(os.getpid())]
        cpu0 = self_cpu()
        server0 = proc_cpu(server_pid)
        started = time.monotonic()
        trips: list[float] = []
        while time.monotonic() - started < args.seconds:
            t = time.perf_counter()
            try:
                await client.command("display-message", "-p", "x")
                trips.append((time.perf_counter() - t) * 1000)
            except Exception:  # noqa: BLE001 - a lost client is counted as a miss
                trips.append(float("inf"))
            await asyncio.sleep(0.1)
        wall = time.monotonic() - started
        cpu = (self_cpu() - cpu0) / wall * 100
        return {
            "floods": args.floods,
            "seconds": round(wall, 1),
            "headspace_cpu_pct": round(cpu, 1),
            "tmux_server_cpu_pct": round((proc_cpu(server_pid) - server0) / wall * 100, 1),
            "command_ms_p50": round(percentile(trips, 50), 1),
            "command_ms_p95": round(percentile(trips, 95), 1),
            "output_mb_per_s": round(sizes[0] / wall / 1e6, 2),
            "control_clients": len(kids),
        }
    finally:
        await monitor.stop()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, env=env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--floods", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="headspace-flood-"))
    try:
        result = asyncio.run(run(args, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result) if args.json else "\n".join(f"{k:>22}  {v}" for k, v in result.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
