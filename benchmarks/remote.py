"""Remote-host benchmark: one host watched through SSH against the same host watched locally.

    python benchmarks/remote.py --panes 10 --seconds 30 --json

N fake agents (``fake_agent.py``: real recorded Claude screens, a spinner
redrawn in bursts, a permission menu drawn at an instant it records, as in
``scale.py``) run in a private tmux server whose socket lives in the
``TMUX_TMPDIR`` of a private, real OpenSSH server on 127.0.0.1
(``tests/harness/sshd.py``), so a login through that sshd finds them.  Two
phases on the same panes, one after the other so their CPU can be told apart:

* **local**: a ``Monitor`` on the tmux server's socket, in this process;
* **remote**: a ``Monitor`` with ``RemoteHost(HostSpec("box", "box", ...))``:
  its ControlMaster, one control client per session and the probe all go
  through the sshd.

Each phase reports:

* **setup**: seconds from ``Monitor.run()`` to the first discovery done
  (``on_problem(None)``) and to every agent reported;
* **CPU** (percent of one core) with all panes idle and with 20% busy,
  split into this process (the monitor), the processes it started (tmux
  control clients locally; the ssh master, ssh sessions and the probe's ssh
  remotely), the far side (every descendant of the sshd listener: the
  per-connection sshds, the remote ``tmux -C`` clients and the probe's
  python3, with their reaped children) and the tmux server (shared by both
  phases, shown apart);
* **latency**: from the menu being drawn in a pane to ``on_change`` saying
  ``permission``, over ``--rounds`` rounds of one menu per pane (drawn
  ``--spacing`` seconds apart, with 20% of the panes busy), p50/p95/max.

The link is loopback: there is no network delay in these numbers, only
ssh's own cost (encryption, multiplexing, the extra processes).  Not part of
the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from scale import CORPUS, TICK, Farm, menus, percentile  # noqa: E402

from headspace_tui.events import AgentChanged, ProblemChanged  # noqa: E402
from headspace_tui.model import AgentState  # noqa: E402
from headspace_tui.remote.host import RemoteHost  # noqa: E402
from headspace_tui.service.watching.monitor import Monitor  # noqa: E402
from headspace_tui.shared.config import HostSpec  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402
from tests.harness.sshd import Sshd, running_sshd  # noqa: E402

# -- CPU accounting over process trees ----------------------------------------------


def _stat(pid: int) -> tuple[int, list[str]] | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), fields


def process_table() -> dict[int, tuple[int, list[str]]]:
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            row = _stat(int(entry.name))
            if row is not None:
                table[int(entry.name)] = row
    return table


def tree_cpu(table: dict[int, tuple[int, list[str]]], root: int, *, skip: frozenset[int] = frozenset(), own: bool = True) -> float:
    """CPU seconds of ``root`` and its live descendants, each with its reaped children.

    A child that ends between two readings moves from "live" into its
    parent's cutime/cstime when reaped, so differences stay right.  Subtrees
    rooted at ``skip`` are left out; ``own=False`` leaves out root's own
    utime/stime (but keeps what it reaped).
    """
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        if pid in skip or pid not in table:
            continue
        fields = table[pid][1]
        ticks = int(fields[13]) + int(fields[14])  # cutime, cstime
        if own or pid != root:
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        total += ticks / TICK
        stack.extend(children.get(pid, []))
    return total


def tree_names(root: int, skip: frozenset[int] = frozenset()) -> list[str]:
    """The command names (``comm``) of root's live descendants, e.g. what runs under the sshd."""
    table = process_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    names, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        if pid in skip:
            continue
        try:
            names.append(Path(f"/proc/{pid}/comm").read_text().strip())
        except OSError:
            continue
        stack.extend(children.get(pid, []))
    return sorted(names)


def cpu_parts(box: Sshd, tmux_pid: int) -> dict[str, float]:
    table = process_table()
    me = os.getpid()
    listener = box.process.pid if box.process is not None else -1
    fields = table[me][1]
    return {
        "monitor": (int(fields[11]) + int(fields[12])) / TICK,  # this process, every thread
        "children": tree_cpu(table, me, skip=frozenset({listener}), own=False),  # tmux -C / ssh we started
        "far_side": tree_cpu(table, listener) if listener in table else 0.0,  # sshd sessions, tmux -C and the probe there
        "tmux_server": (int(table[tmux_pid][1][11]) + int(table[tmux_pid][1][12])) / TICK if tmux_pid in table else 0.0,  # the server alone
    }


async def measure(box: Sshd, tmux_pid: int, seconds: float) -> dict[str, float]:
    """Percent of one core per part over ``seconds``."""
    start, started = cpu_parts(box, tmux_pid), time.monotonic()
    await asyncio.sleep(seconds)
    end, wall = cpu_parts(box, tmux_pid), time.monotonic() - started
    used = {name: round((end[name] - start[name]) / wall * 100, 2) for name in start}
    used["total_watching"] = round(used["monitor"] + used["children"] + used["far_side"], 2)  # without the shared tmux server
    return used


# -- the panes, in the remote login's TMUX_TMPDIR ------------------------------------


class BoxFarm(Farm):
    """scale.py's Farm, with its tmux server where a login through the sshd finds it."""

    def __init__(self, panes: int, results: Path, tmux_tmpdir: str) -> None:
        self.socket = f"headspace-bench-remote-{os.getpid()}"
        self.results = results
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(results),
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
            "TMUX_TMPDIR": tmux_tmpdir,
        }
        agent = REPO / "benchmarks" / "fake_agent.py"
        command = f"exec -a claude {sys.executable} -S {agent} {CORPUS} {results}"
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "a0", "-x", "120", "-y", "40", command)
        for n in range(1, panes):
            self.tmux("new-session", "-d", "-s", f"a{n}", "-x", "120", "-y", "40", command)
        self.pids = {}
        for line in self.tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_pid}").split("\n"):
            if line.strip():
                pane, pid = line.split()
                self.pids[pane] = int(pid)
        self.server_pid = int(self.tmux("display-message", "-p", "#{pid}").strip())
        self.socket_path = self.tmux("display-message", "-p", "#{socket_path}").strip()

    def busy(self, fraction: float = 0.2) -> list[str]:
        panes = list(self.pids)[: max(1, round(len(self.pids) * fraction))]
        for pane in panes:
            self.signal(pane, signal.SIGUSR1)
        return panes


# -- one phase ---------------------------------------------------------------------------


async def phase(kind: str, farm: BoxFarm, box: Sshd, args) -> dict:
    host = None
    if kind == "remote":
        host = RemoteHost(HostSpec("box", box.alias, socket_name=farm.socket, ssh_config=str(box.client_config)))
        server = host.server
    else:
        server = TmuxServer(socket_path=farm.socket_path)
    states: dict[str, AgentState] = {}
    permission_at: dict[str, float] = {}
    problems: list[tuple[float, str | None]] = []

    def changed(event) -> None:
        if isinstance(event, ProblemChanged):
            problems.append((time.monotonic(), event.problem))
        if not isinstance(event, AgentChanged):
            return
        agent = event.agent
        pane = agent.pane_id.split("@")[0]  # %3@box -> %3, as the fake agent names its file
        states[pane] = agent.state
        if agent.state is AgentState.PERMISSION and pane not in permission_at:
            permission_at[pane] = time.time()

    monitor = Monitor(
        server,
        host=host,
        config_dir=None,
        hooks=False,
    )
    monitor.subscribe(changed)
    started = time.monotonic()
    task = asyncio.create_task(monitor.run())
    result: dict = {"kind": kind}
    try:
        deadline = started + 60
        while len(states) < len(farm.pids) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        result["found"] = len(states)
        result["setup_all_agents_s"] = round(time.monotonic() - started, 3)
        first_ok = next((at for at, problem in problems if problem is None), None)
        result["setup_first_discovery_s"] = round(first_ok - started, 3) if first_ok is not None else None
        await asyncio.sleep(3.0)  # settle: first reads, transcript lags, the ask-claude window
        result["cpu_idle"] = await measure(box, farm.server_pid, args.seconds)
        farm.busy()
        await asyncio.sleep(1.0)
        result["cpu_busy"] = await measure(box, farm.server_pid, args.seconds)
        result["our_children"] = tree_names(os.getpid(), skip=frozenset({box.process.pid}) if box.process else frozenset())
        result["far_side_processes"] = tree_names(box.process.pid) if box.process is not None else []
        delays: list[float] = []
        for n in range(args.rounds):
            if n:
                farm.reset()  # all idle again; wait until the model agrees
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline and any(s is AgentState.PERMISSION for s in states.values()):
                    await asyncio.sleep(0.05)
                farm.busy()
                await asyncio.sleep(1.5)
            permission_at.clear()
            delays += await menus(farm, permission_at.get, args.spacing)
        result["delays_ms"] = [round(d, 1) for d in delays]
        result["latency_p50_ms"] = round(percentile(delays, 50), 1)
        result["latency_p95_ms"] = round(percentile(delays, 95), 1)
        result["latency_max_ms"] = round(max(delays), 1)
        result["missed"] = sum(1 for d in delays if d == float("inf"))
    finally:
        await monitor.stop()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        farm.reset()
    return result


async def main_async(args) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="headspace-bench-remote-"))
    results = workdir / "drawn"
    results.mkdir()
    phases: list[dict] = []
    with running_sshd(workdir) as box:
        farm = BoxFarm(args.panes, results, box.remote_env["TMUX_TMPDIR"])
        try:
            await asyncio.sleep(2.0)  # the fake agents start and draw
            order = ["local", "remote"] if not args.remote_first else ["remote", "local"]
            for kind in order:
                phases.append(await phase(kind, farm, box, args))
                await asyncio.sleep(2.0)
            children = [pid for pid, (ppid, _) in process_table().items() if ppid == os.getpid() and pid != box.process.pid]
        finally:
            farm.close()
    shutil.rmtree(workdir, ignore_errors=True)
    return {
        "panes": args.panes,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "spacing": args.spacing,
        "link": "loopback 127.0.0.1 (no network delay)",
        "cores": os.cpu_count(),
        "leftover_children": children,
        **{p["kind"]: p for p in phases},
    }


def table(result: dict) -> str:
    local, remote = result["local"], result["remote"]
    rows = [
        ("setup: first discovery (s)", local["setup_first_discovery_s"], remote["setup_first_discovery_s"]),
        ("setup: all agents reported (s)", local["setup_all_agents_s"], remote["setup_all_agents_s"]),
        ("latency p50 (ms)", local["latency_p50_ms"], remote["latency_p50_ms"]),
        ("latency p95 (ms)", local["latency_p95_ms"], remote["latency_p95_ms"]),
        ("latency max (ms)", local["latency_max_ms"], remote["latency_max_ms"]),
        ("transitions (missed)", f"{len(local['delays_ms'])} ({local['missed']})", f"{len(remote['delays_ms'])} ({remote['missed']})"),
    ]
    for load in ("idle", "busy"):
        for part in ("total_watching", "monitor", "children", "far_side", "tmux_server"):
            rows.append((f"CPU {load}: {part} (% core)", local[f"cpu_{load}"][part], remote[f"cpu_{load}"][part]))
    lines = [f"| {result['panes']} panes, {result['seconds']:g} s windows | local | remote (ssh, loopback) |", "|---|---:|---:|"]
    lines += [f"| {name} | {a} | {b} |" for name, a, b in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panes", type=int, default=10, help="number of agent panes (default 10)")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each CPU window (default 30)")
    parser.add_argument("--rounds", type=int, default=2, help="menu rounds per phase, one menu per pane each (default 2)")
    parser.add_argument("--spacing", type=float, default=0.25, help="seconds between two menus (default 0.25)")
    parser.add_argument("--remote-first", action="store_true", help="run the remote phase before the local one")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    for tool in ("tmux", "ssh"):
        if shutil.which(tool) is None:
            print(f"remote.py: {tool} is not installed", file=sys.stderr)
            return 1
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result))
    else:
        print(table(result))
        print(f"leftover children: {result['leftover_children']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
