"""The resident service: its idle CPU and memory at N agents, and how fast ``status`` answers through it.

    python benchmarks/service.py --panes 100 --json

N fake agents (``fake_agent.py``: real recorded Claude screens, each in its
own session of a private tmux server, as ``scale.py`` makes them), all idle.
Measured, in this order:

* ``status --json`` read by a look of its own (no service), wall time p50
  over ``--asks`` runs;
* ``headspace serve`` started; the seconds until ``status --json``
  through it lists every agent (``listed_after_s``); once every
  session's control client has attached (``attached_after_s``; at most
  ``client_cap`` of them, the sessions beyond read through those: they go one
  at a time), its CPU (the service, its control clients, its forks and the
  tmux server) over ``--seconds`` with every agent idle, and its peak
  memory (VmHWM, the service alone);
* ``status --json`` answered by the service, wall time p50;
* as the terminal UI runs, a client of the service over its socket
  (``ServiceClient``, what ``headspace`` uses): a fifth of the agents set
  working, the CPU of the service and tmux then (``busy_cpu_pct``), and a
  permission menu drawn in every pane, ``--spacing`` s apart; the delay
  from each menu's drawing to the client being told the agent waits
  (``menu_p50_ms`` / ``menu_p95_ms``; a menu never told counts as
  missed);
* the service's own count of control-client attaches (tmux's
  ``client-attached`` hook): one per session, up to the cap;
* in the same idle window, the wakes per second (context switches, from
  /proc) of each thread of the service by its name, of its children by
  program (its control clients are ``tmux`` processes), and of the tmux
  server (``wakes_per_s``): who is woken while nothing changes.
  ``--status-off`` turns the status line off on the benchmark's own
  server: tmux runs a status timer for every client, control clients
  too, every ``status-interval`` seconds (15 by default), so that share
  of tmux's idle is the user's option, not headspace's.

Then, the service stopped, the peers' way on the same agents beside it
(``--no-poller`` leaves it out): ``poller.py``, which forks ``tmux
capture-pane`` for every pane every 500 ms; the seconds until it has read
every agent (``poller_listed_after_s``) and its idle CPU with the tmux
server's (``poller_idle_cpu_pct``) over the same window.

Throwaway HOME and XDG folders; the service is stopped and the tmux server
killed at the end.  Not part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.scale import Farm, live_children, menus, percentile, proc_cpu, rss_mb  # noqa: E402
from headspace_tui.api.facade import AgentChanged  # noqa: E402
from headspace_tui.model import AgentState  # noqa: E402
from headspace_tui.resident.facade_client import ServiceClient  # noqa: E402
from headspace_tui.service.watching.sessions import client_cap  # noqa: E402
from headspace_tui.shared.config import Config  # noqa: E402
from headspace_tui.shared.resident_place import place_of, read_card  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402


def switches(pid: int) -> dict[str, int]:
    """Context switches of each thread of ``pid`` so far, summed by the thread's name: each is a wake (a switch away is a sleep, or a preemption)."""
    by_name: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            name = (task / "comm").read_text().strip()
            counts = [int(line.split()[1]) for line in (task / "status").read_text().splitlines() if line.endswith("ctxt_switches") or "ctxt_switches:" in line]
        except (OSError, ValueError, IndexError):
            continue
        by_name[name] = by_name.get(name, 0) + sum(counts)
    return by_name


def wakes(service: int, tmux: int) -> dict[str, int]:
    """Every wake so far of the service (``service:<thread>``), its children (``child:<program>``) and the tmux server."""
    found = {f"service:{name}": count for name, count in switches(service).items()}
    for child in live_children(service):
        for name, count in switches(child).items():
            found[f"child:{name}"] = found.get(f"child:{name}", 0) + count
    found["tmux server"] = sum(switches(tmux).values())
    return found


def headspace(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "headspace_tui", *args], capture_output=True, text=True, env=env, timeout=120, cwd=REPO)


def timed(env: dict[str, str], args: list[str], times: int) -> tuple[float, int]:
    """Median wall seconds of ``headspace args`` over ``times`` runs, and the rows the last one printed."""
    took, rows = [], 0
    for _ in range(times):
        started = time.perf_counter()
        done = headspace(env, *args)
        took.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"headspace {' '.join(args)} failed: {done.stderr}")
        rows = len(done.stdout.splitlines())
    return statistics.median(took), rows


def client_phase(place, farm: Farm, pid: int, seconds: float, spacing: float) -> dict:
    """A client of the service, as the terminal UI is one: the CPU while a fifth of the agents work, then how soon it is told of each menu."""
    client = ServiceClient(place, config=Config(), restart=None)
    client.connect()
    told: dict[str, float] = {}

    def heard(event) -> None:
        agent = getattr(event, "agent", None)
        if isinstance(event, AgentChanged) and agent.state is AgentState.PERMISSION and agent.pane_id not in told:
            told[agent.pane_id] = time.time()

    client.subscribe(heard)

    async def run() -> dict:
        following = asyncio.create_task(client.run())
        try:
            for pane in list(farm.pids)[: max(1, len(farm.pids) // 5)]:
                farm.signal(pane, signal.SIGUSR1)
            await asyncio.sleep(2.0)
            cpu = lambda: proc_cpu(pid, children=True) + sum(proc_cpu(k) for k in live_children(pid)) + proc_cpu(farm.server_pid)  # noqa: E731
            before, at = cpu(), time.monotonic()
            await asyncio.sleep(seconds)
            busy = round((cpu() - before) / (time.monotonic() - at) * 100, 2)
            told.clear()
            delays = await menus(farm, told.get, spacing)
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            await client.stop()
        return {"busy_cpu_pct": busy, "menu_p50_ms": round(percentile(delays, 50), 1), "menu_p95_ms": round(percentile(delays, 95), 1), "menus_missed": sum(d == float("inf") for d in delays)}

    return asyncio.run(run())


def poller_phase(farm: Farm, seconds: float) -> dict:
    """The 500 ms capture poller on the same agents: when it has read them all, and its CPU (with the tmux server's) while they idle."""
    lines: queue.Queue[str] = queue.Queue()
    started = time.perf_counter()
    poller = subprocess.Popen([sys.executable, str(REPO / "benchmarks" / "poller.py"), farm.socket, "0.5"], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    out = poller.stdout
    assert out is not None

    def read() -> None:
        for line in out:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        seen: set[str] = set()
        deadline = time.monotonic() + 300
        while len(seen) < len(farm.pids) and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                seen.add(json.loads(lines.get(timeout=1.0))["pane"])  # its first line for each pane: that pane read
        listed_after = round(time.perf_counter() - started, 1) if len(seen) >= len(farm.pids) else None
        cpu = lambda: proc_cpu(poller.pid, children=True) + proc_cpu(farm.server_pid)  # noqa: E731
        before, at = cpu(), time.monotonic()
        time.sleep(seconds)
        return {"poller_listed_after_s": listed_after, "poller_idle_cpu_pct": round((cpu() - before) / (time.monotonic() - at) * 100, 2)}
    finally:
        poller.kill()  # our own child
        poller.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panes", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0, help="the idle CPU window")
    parser.add_argument("--asks", type=int, default=5, help="status runs timed each way")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds after the last attach before the idle window")
    parser.add_argument("--status-off", action="store_true", help="tmux's status line off on the benchmark's server: tmux then has no timer per client (status-interval)")
    parser.add_argument("--spacing", type=float, default=0.05, help="seconds between two menus (the client's phase)")
    parser.add_argument("--status-interval", type=int, help="tmux's status-interval on the benchmark's server (15 s by default): each client's status timer (control clients too) wakes tmux so often")
    parser.add_argument("--no-poller", action="store_true", help="leave out the 500 ms capture poller's phase")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hs-bench-service-"))
    (root / "drawn").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        folder = root / name.lower()
        folder.mkdir(mode=0o700)
        env[name] = str(folder)
    env["HOME"] = str(root)
    farm = Farm(args.panes, root / "drawn")
    attaches = root / "attaches"
    farm.tmux("set-hook", "-g", "client-attached", f'run-shell -b "echo x >> {attaches}"')
    if args.status_off:  # the benchmark's own server: a user's status line is theirs, never changed by headspace
        farm.tmux("set-option", "-g", "status", "off")
    if args.status_interval is not None:
        farm.tmux("set-option", "-g", "status-interval", str(args.status_interval))
    status = ["-L", farm.socket, "status", "--json"]
    result: dict = {"panes": args.panes}
    pid = None
    try:
        time.sleep(2.0)  # the fake agents draw
        result["status_by_look_s"], result["rows_by_look"] = timed(env, status, args.asks)
        started = time.perf_counter()
        if headspace(env, "-L", farm.socket, "serve").returncode != 0:
            raise SystemExit("the service did not start")
        result["serve_start_s"] = round(time.perf_counter() - started, 2)
        place = place_of(TmuxServer(socket_name=farm.socket).identity, env)
        card = read_card(place) or {}
        pid = card.get("pid")
        # Every agent listed: ``status --json`` through the service (it waits for the first look to be whole), asked until it lists them all.
        listed, deadline = 0, time.monotonic() + 300
        while listed < args.panes and time.monotonic() < deadline:
            done = headspace(env, *status)
            listed = len(done.stdout.splitlines()) if done.returncode == 0 else 0
            if listed < args.panes:
                time.sleep(0.5)
        result["listed_after_s"] = round(time.perf_counter() - started, 1) if listed >= args.panes else None
        result["listed"] = listed
        # ...and then for every session's control client: they attach one at a time, each in a
        # quiet moment, and that start is not idle (measured: 9.5% at 100 agents 2 s after the first look).
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and (len(attaches.read_text().split()) if attaches.exists() else 0) < min(args.panes, client_cap(args.panes)):
            time.sleep(0.5)
        result["attached_after_s"] = round(time.perf_counter() - started, 1)
        time.sleep(args.settle)  # the first reads' follow-ups (each agent's records, the idle grace's looks) end first
        service_cpu = lambda: proc_cpu(pid, children=True) + sum(proc_cpu(k) for k in live_children(pid))  # noqa: E731
        woken = wakes(pid, farm.server_pid)
        before, tmux_before, at = service_cpu(), proc_cpu(farm.server_pid), time.monotonic()
        time.sleep(args.seconds)
        took = time.monotonic() - at
        woken_after = wakes(pid, farm.server_pid)
        rates = {name: round((count - woken.get(name, 0)) / took, 2) for name, count in woken_after.items()}
        result["wakes_per_s"] = dict(sorted(((name, rate) for name, rate in rates.items() if rate > 0), key=lambda item: -item[1]))
        service_spent, tmux_spent = service_cpu() - before, proc_cpu(farm.server_pid) - tmux_before
        result["idle_cpu_pct"] = round((service_spent + tmux_spent) / took * 100, 2)
        result["idle_service_pct"], result["idle_tmux_pct"] = round(service_spent / took * 100, 2), round(tmux_spent / took * 100, 2)
        result["rss_mb"] = round(rss_mb(pid), 1)
        result["status_by_service_s"], result["rows_by_service"] = timed(env, status, args.asks)
        result["status_by_look_s"] = round(result["status_by_look_s"], 3)
        result["status_by_service_s"] = round(result["status_by_service_s"], 3)
        result["attaches"] = len(attaches.read_text().split()) if attaches.exists() else 0
        result.update(client_phase(place, farm, pid, args.seconds, args.spacing))
        headspace(env, "-L", farm.socket, "serve", "--stop")
        if not args.no_poller:
            result.update(poller_phase(farm, args.seconds))
    finally:
        headspace(env, "-L", farm.socket, "serve", "--stop")
        farm.close()
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(result) if args.json else ", ".join(f"{k}: {v}" for k, v in result.items()))


if __name__ == "__main__":
    main()
