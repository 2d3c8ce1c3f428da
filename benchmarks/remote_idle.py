"""What one remote host costs when nothing happens: 10 idle agents behind a real sshd, watched for a minute.

    python benchmarks/remote_idle.py --panes 10 --seconds 60 --json

The agents are ``fake_agent.py`` (real recorded Claude screens: the idle
screen, drawn once, nothing redrawn) in a private tmux server reached
through a private OpenSSH server on 127.0.0.1 (``tests/harness/sshd.py``).
Each fake agent runs with ``CLAUDE_CONFIG_DIR`` set, and this script writes
the status file a real idle Claude keeps there (``sessions/<pid>.json``,
``status: idle``), so the probe watches a real status folder for every
agent, and the hook spool, as it does for real Claude.  Real Claude was not
used: ten of them at their prompt keep two shared cores busy on their own,
which would drown the fractions of a percent measured here; what headspace
does for an idle Claude (its status file and pid watched, its pane's
control client silent) is the same.

A ``Monitor`` watches the host (``RemoteHost``, hooks on) in this process.
After every agent is reported and a settle time, CPU is read from /proc over
``--seconds`` (each live process's threads from ``schedstat``, in ns; what
it reaped from its ended children from ``cutime``/``cstime``, in clock
ticks: 10 ms, 0.017% of a minute) and reported as percent of one core:

* **ours**: this process (the monitor, every thread) and what it started
  (the ssh master, the multiplexed ssh clients of the control clients, the
  probe and each ``list-panes``);
* **far side**, every descendant of the sshd listener, split by kind:
  ``sshd`` (the per-connection sshd and its session processes), ``probe``
  (the probe's python3), ``tmux -C`` (the remote control clients) and
  ``other`` (the shells and ``tmux list-panes`` each discovery runs, as far
  as they are still alive: ended ones count in their sshd's reaped time);
* **tmux server**: the agents' own server, shown apart: it is theirs, not
  the watcher's, though it answers the control clients.  ``tmux_server_unwatched``
  is the same server over the same length of time with nothing watching.

``total`` = ours + far side, the number issue 27 bounds at 0.2% of a core.
The link is loopback; the machine is shared, so run it twice and read both.
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from remote import BoxFarm, process_table  # noqa: E402
from scale import TICK  # noqa: E402

from headspace_tui.events import AgentChanged  # noqa: E402
from headspace_tui.model import AgentState  # noqa: E402
from headspace_tui.remote.host import RemoteHost  # noqa: E402
from headspace_tui.service.watching.monitor import Monitor  # noqa: E402
from headspace_tui.shared.config import HostSpec  # noqa: E402
from tests.harness.sshd import running_sshd  # noqa: E402


def _run_seconds(pid: int) -> float | None:
    """CPU time of every thread of ``pid`` in ns precision (schedstat), or None where the kernel has none."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as handle:
                total += int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e9


def _seconds(pid: int, fields: list[str], *, own: bool = True) -> float:
    """CPU seconds of ``pid`` (schedstat's ns where it can, else clock ticks) plus what it reaped (ticks: all there is)."""
    reaped = (int(fields[13]) + int(fields[14])) / TICK  # cutime, cstime
    if not own:
        return reaped
    run = _run_seconds(pid)
    return reaped + (run if run is not None else (int(fields[11]) + int(fields[12])) / TICK)  # utime, stime


def _comm_and_args(pid: int) -> tuple[str, str]:
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        args = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return "", ""
    return comm, args


def kind_of(pid: int) -> str:
    comm, args = _comm_and_args(pid)
    if comm.startswith("sshd"):
        return "sshd"
    if comm.startswith("python"):
        return "probe"  # the only python3 the sshd runs here is the probe
    if comm == "tmux" and " -C" in args:
        return "tmux -C"
    return "other"


def parts(listener: int, tmux_pid: int) -> dict[str, float]:
    """CPU seconds so far, by part (see the module's docstring)."""
    table = process_table()
    me = os.getpid()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    totals = {"monitor": _seconds(me, table[me][1]) - _seconds(me, table[me][1], own=False)}
    totals["our_children"] = _seconds(me, table[me][1], own=False)  # reaped ssh clients
    stack = [p for p in children.get(me, []) if p != listener]
    while stack:
        pid = stack.pop()
        if pid in table:
            totals["our_children"] += _seconds(pid, table[pid][1])
            stack.extend(children.get(pid, []))
    for kind in ("sshd", "probe", "tmux -C", "other"):
        totals[f"far_{kind}"] = 0.0
    stack = [listener]
    while stack:
        pid = stack.pop()
        if pid not in table:
            continue
        totals[f"far_{kind_of(pid)}"] += _seconds(pid, table[pid][1])
        stack.extend(children.get(pid, []))
    totals["tmux_server"] = _seconds(tmux_pid, table[tmux_pid][1]) if tmux_pid in table else 0.0
    return totals


def per_process(roots: list[int]) -> dict[int, tuple[str, float]]:
    """CPU seconds so far of every live descendant of ``roots`` (with what it reaped), with its command line."""
    table = process_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, tuple[str, float]] = {}
    stack = list(roots)
    while stack:
        pid = stack.pop()
        if pid in found or pid not in table:
            continue
        comm, args = _comm_and_args(pid)
        found[pid] = (f"{comm}: {args[:90]}", _seconds(pid, table[pid][1]))
        stack.extend(children.get(pid, []))
    return found


async def window(listener: int, tmux_pid: int, seconds: float) -> dict:
    """Percent of one core per part over ``seconds``; pids that end mid-window are in their parent's reaped time.

    ``top`` lists the processes that used any CPU in the window (percent, command line).
    """
    first = per_process([os.getpid(), listener])  # outside the window: reading /proc is this script's cost, not headspace's
    start, began = parts(listener, tmux_pid), time.monotonic()
    await asyncio.sleep(seconds)
    end, wall = parts(listener, tmux_pid), time.monotonic() - began
    last = per_process([os.getpid(), listener])
    used: dict = {name: round((end[name] - start.get(name, 0.0)) / wall * 100, 3) for name in end}
    top = [(round((cpu - first.get(pid, ("", 0.0))[1]) / wall * 100, 3), pid, name) for pid, (name, cpu) in last.items() if pid != os.getpid()]
    used["top"] = sorted((t for t in top if t[0] > 0), reverse=True)[:12]
    used["ours"] = round(used["monitor"] + used["our_children"], 3)
    used["far_side"] = round(sum(v for k, v in used.items() if k.startswith("far_") and k != "far_side"), 3)  # type: ignore[misc]
    used["total"] = round(used["ours"] + used["far_side"], 3)
    return used


class IdleFarm(BoxFarm):
    """remote.py's farm, with ``CLAUDE_CONFIG_DIR`` in the tmux server's (so every agent's) environment."""

    def __init__(self, panes: int, results: Path, tmux_tmpdir: str, config_dir: Path) -> None:
        self.config_dir = config_dir
        super().__init__(panes, results, tmux_tmpdir)

    def tmux(self, *args: str) -> str:
        self.env["CLAUDE_CONFIG_DIR"] = str(self.config_dir)
        return super().tmux(*args)


SPAWNED: list[tuple[float, str]] = []  # (when, what) for every process this one started


def count_spawns() -> None:
    """Record every process headspace starts (``subprocess.run`` for tmux commands, asyncio's for ssh and control clients)."""
    import subprocess

    def words(argv) -> str:
        argv = [str(a) for a in argv]
        rest = argv[argv.index("--") + 2 :] if "--" in argv else argv[1:]  # ssh ... -- DEST <command>
        return " ".join(rest)[:60]

    real_run, real_exec = subprocess.run, asyncio.create_subprocess_exec

    def run(argv, *a, **k):
        SPAWNED.append((time.monotonic(), words(argv)))
        return real_run(argv, *a, **k)

    async def create_exec(*argv, **k):
        SPAWNED.append((time.monotonic(), words(argv)))
        return await real_exec(*argv, **k)

    subprocess.run = run  # type: ignore[assignment]
    asyncio.create_subprocess_exec = create_exec  # type: ignore[assignment]


def write_statuses(farm: BoxFarm, config_dir: Path) -> None:
    """The status file each idle Claude keeps (``sessions/<pid>.json``), written as Claude does (a new file renamed over)."""
    folder = config_dir / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000)
    for pane, pid in farm.pids.items():
        record = {"pid": pid, "status": "idle", "sessionId": f"bench-{pid}", "cwd": str(farm.results), "kind": "interactive", "updatedAt": now, "tmux": f"a:@0.{pane}"}
        temporary = folder / f".{pid}.json.tmp"
        temporary.write_text(json.dumps(record))
        os.replace(temporary, folder / f"{pid}.json")


async def main_async(args) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="headspace-bench-idle-"))
    results = workdir / "drawn"
    results.mkdir()
    config_dir = workdir / "claude-config"
    with running_sshd(workdir) as box:
        assert box.process is not None
        listener = box.process.pid
        farm = IdleFarm(args.panes, results, box.remote_env["TMUX_TMPDIR"], config_dir)
        write_statuses(farm, config_dir)
        result: dict = {"panes": args.panes, "seconds": args.seconds, "agents": "fake_agent.py (recorded idle screens) + idle status files", "cores": os.cpu_count()}
        try:
            await asyncio.sleep(1.0)
            if args.unwatched:
                result["unwatched"] = await window(listener, farm.server_pid, args.unwatched)
            host = RemoteHost(HostSpec("box", box.alias, socket_name=farm.socket, ssh_config=str(box.client_config)))
            monitor = Monitor(host.server, host=host, config_dir=None, hooks=True)
            states: dict[str, AgentState] = {}
            monitor.subscribe(lambda e: states.__setitem__(e.agent.pane_id, e.agent.state) if isinstance(e, AgentChanged) else None)
            task = asyncio.create_task(monitor.run())
            try:
                began = time.monotonic()
                while (len(states) < args.panes or any(s is not AgentState.IDLE for s in states.values())) and time.monotonic() - began < 60:
                    await asyncio.sleep(0.1)
                result["all_idle_after_s"] = round(time.monotonic() - began, 2)
                result["idle_agents"] = sum(1 for s in states.values() if s is AgentState.IDLE)
                result["status_folders_watched"] = sorted(host._status_folders)
                await asyncio.sleep(args.settle)
                began = time.monotonic()
                result["watched"] = await window(listener, farm.server_pid, args.seconds)
                result["spawned_in_window"] = [what for at, what in SPAWNED if at >= began]
                result["idle_agents_after"] = sum(1 for s in states.values() if s is AgentState.IDLE)
            finally:
                await monitor.stop()
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        finally:
            farm.close()
    shutil.rmtree(workdir, ignore_errors=True)
    return result


def table(result: dict) -> str:
    watched = result["watched"]
    rows = [(name, watched[name]) for name in ("total", "ours", "monitor", "our_children", "far_side", "far_sshd", "far_probe", "far_tmux -C", "far_other", "tmux_server")]
    if "unwatched" in result:
        rows.append(("tmux_server_unwatched", result["unwatched"]["tmux_server"]))
    lines = [f"| {result['panes']} idle agents, {result['seconds']:g} s | % of one core |", "|---|---:|"]
    lines += [f"| {name} | {value:.3f} |" for name, value in rows]  # percent of one core
    lines += ["", "processes that used CPU in the window (% of one core):"]
    lines += [f"  {cpu:6.3f}  {pid:>7}  {name}" for cpu, pid, name in watched["top"]]
    lines += ["", f"processes headspace started in the window: {len(result['spawned_in_window'])}"]
    lines += [f"  {what}" for what in result["spawned_in_window"]]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panes", type=int, default=10, help="idle agents (default 10)")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the measured window (default 60)")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds after every agent is idle before measuring (default 10)")
    parser.add_argument("--unwatched", type=float, default=0.0, help="first measure the tmux server this long with nothing watching (default: skip)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    for tool in ("tmux", "ssh"):
        if shutil.which(tool) is None:
            print(f"remote_idle.py: {tool} is not installed", file=sys.stderr)
            return 1
    count_spawns()
    result = asyncio.run(main_async(args))
    print(json.dumps(result) if args.json else table(result) + f"\nall idle after {result['all_idle_after_s']} s; idle agents {result['idle_agents']} -> {result['idle_agents_after']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
