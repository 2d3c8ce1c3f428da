"""Fleet benchmark: ten real sshd hosts with a real round trip added, against the same agents watched locally.

    python benchmarks/fleet.py --hosts 10 --agents 20 --rtt 0,50 --json

Each host is a private OpenSSH server on 127.0.0.1 (``tests/harness/sshd.py``)
with its own private tmux server in that sshd's ``TMUX_TMPDIR``, running
``--agents`` fake agents (``fake_agent.py``: real recorded Claude screens, a
spinner redrawn in bursts, a permission menu drawn at an instant it
records; ``remote.py``'s ``BoxFarm``).  The same agents are watched in
phases, one after another, each by a fresh headspace (``fleet_watch.py``,
its own process, so what is measured is headspace alone):

* **local**: one service per tmux server, on its socket, as if every host's
  agents ran on this machine;
* **remote, rtt R** (one phase per ``--rtt``): one service with all hosts in
  its fleet and no local server.  At R = 0 ssh reaches each sshd directly
  over loopback.  Otherwise ssh reaches it through a **userspace delaying
  TCP relay** (``tests/harness/delay_relay.py``, in its own process) that
  holds every chunk R/2 in each direction, preserving order: this kernel
  has no ``tc netem`` and no iptables, so that is how the round trip is
  added.  No loss, jitter or bandwidth limit.

Per phase it reports:

* **time to the first full table**: from the services starting to the last
  agent's first row (every host's), and per host; and to the first row;
* **state latency** per host: from a permission menu being drawn in a pane
  to headspace's row for it saying ``permission`` (the moment the service
  tells the table), ``--rounds`` rounds of one menu per pane, hosts
  interleaved ``--spacing`` s apart, with ``--busy`` of the agents working;
  p50/p95/max, and whether each host's p95 is within R + 50 ms of its local
  p95 (issue 27's bound); and headspace's event-loop stalls of 100 ms or
  more meanwhile (a late menu during one was late in headspace, not on the
  wire);
* **CPU** (percent of one core) over ``--seconds`` idle and busy: headspace's
  process, the processes below it (ssh clients; tmux control clients
  locally), and per host the far side (everything under that host's sshd
  listener: per-connection sshds, remote tmux control clients, the probe),
  each per host; the relay and the tmux servers are shown apart (they are
  the network and the watched machines, not headspace);
* **memory**: headspace's RSS and peak; its children's and each host's
  far side's PSS (shared pages counted once, so 22 ssh clients do not count
  libc 22 times);
* **connections and channels per host**, counted, not assumed:
  established TCP connections on the sshd's port, ssh client processes
  below headspace naming that host's config (masters and sessions), and
  the session commands sshd runs (one per channel: the non-sshd children of
  the per-connection sshds, e.g. ``tmux`` control clients or ``python3``).
  Whether a host uses one channel or one per session, the counts say so.

Needs tmux, ssh and sshd (openssh-server).  The CI smoke run is
tests/e2e/test_fleet_benchmark.py; the full run is not part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from remote import BoxFarm, process_table, tree_cpu  # noqa: E402
from scale import TICK, percentile  # noqa: E402

from tests.harness.delay_relay import relay_process  # noqa: E402
from tests.harness.sshd import Sshd, running_sshd  # noqa: E402

WATCHER = REPO / "benchmarks" / "fleet_watch.py"
BOUND_SLACK_MS = 50.0  # issue 27: p95 within the added round trip plus 50 ms of local


@dataclass
class Host:
    name: str
    box: Sshd
    farm: BoxFarm

    @property
    def listener(self) -> int:
        return self.box.process.pid if self.box.process is not None else -1


# -- the process tree ------------------------------------------------------------------


Table = dict[int, tuple[int, list[str]]]


def descendants(table: Table, root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def memory_kb(pid: int, key: str = "VmRSS", table: str = "status") -> int:
    """One line of /proc/PID/status (VmRSS, VmHWM) or of smaps_rollup (``Pss``), in kB; 0 for a gone process."""
    try:
        for line in Path(f"/proc/{pid}/{table}").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def pss_mb(pids: list[int]) -> float:
    """Memory of several processes, shared pages counted once (PSS): 22 ssh clients' RSS would count libc 22 times."""
    return round(sum(memory_kb(pid, "Pss", "smaps_rollup") for pid in pids) / 1024, 1)


def established(port: int) -> int:
    """Established TCP connections whose local end is ``port`` (the sshd's side of each connection)."""
    count = 0
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                count += 1
    return count


def links(table: Table, watcher: int, host: Host) -> dict:
    """One host's connections and channels, as the process tree and the kernel show them."""
    config = str(host.box.client_config)
    ssh = [pid for pid in descendants(table, watcher) if comm(pid) == "ssh" and config in cmdline(pid)]
    masters = [pid for pid in ssh if "ControlMaster=yes" in cmdline(pid)]
    far = descendants(table, host.listener)
    per_connection = [pid for pid in far if table[pid][0] == host.listener]
    sessions = [pid for pid in far if not comm(pid).startswith("sshd") and comm(table[pid][0]).startswith("sshd")]
    return {
        "tcp_connections": established(host.box.port),
        "sshd_connections": len(per_connection),
        "ssh_clients": len(ssh),
        "ssh_masters": len(masters),
        "channels": len(sessions),
        "channel_commands": dict(Counter(comm(pid) for pid in sessions)),
    }


def cpu_seconds(watcher: int, hosts: list[Host], others: list[int]) -> dict:
    table = process_table()
    own = table.get(watcher)
    return {
        "headspace": (int(own[1][11]) + int(own[1][12])) / TICK if own else 0.0,
        "children": tree_cpu(table, watcher, own=False) if own else 0.0,  # ssh clients (tmux -C locally), live and reaped
        "far": [tree_cpu(table, h.listener) if h.listener in table else 0.0 for h in hosts],
        "tmux_servers": sum(((int(table[h.farm.server_pid][1][11]) + int(table[h.farm.server_pid][1][12])) / TICK) for h in hosts if h.farm.server_pid in table),
        "relay": sum(tree_cpu(table, pid) for pid in others if pid in table),
    }


async def measure(watcher: int, hosts: list[Host], others: list[int], seconds: float) -> dict:
    """Percent of one core over ``seconds``: in total, and per host (headspace's side shared evenly)."""
    start, started = cpu_seconds(watcher, hosts, others), time.monotonic()
    await asyncio.sleep(seconds)
    end, wall = cpu_seconds(watcher, hosts, others), time.monotonic() - started

    def pct(a: float, b: float) -> float:
        return round((b - a) / wall * 100, 2)

    far = [pct(a, b) for a, b in zip(start["far"], end["far"], strict=True)]
    headspace, children = pct(start["headspace"], end["headspace"]), pct(start["children"], end["children"])
    n = len(hosts)
    return {
        "headspace": headspace,
        "children": children,
        "far_side_per_host": far,
        "per_host_headspace_side": round((headspace + children) / n, 2),
        "per_host_far_side": round(sum(far) / n, 2),
        "per_host_total": round((headspace + children + sum(far)) / n, 2),
        "tmux_servers": pct(start["tmux_servers"], end["tmux_servers"]),
        "relay": pct(start["relay"], end["relay"]),
    }


def memory(watcher: int, hosts: list[Host]) -> dict:
    table = process_table()
    far = [pss_mb(descendants(table, h.listener)) for h in hosts]  # the connections' sshds and what they run, not the listener
    return {
        "headspace_rss_mb": round(memory_kb(watcher) / 1024, 1),
        "headspace_peak_mb": round(memory_kb(watcher, "VmHWM") / 1024, 1),
        "children_pss_mb": pss_mb(descendants(table, watcher)),
        "far_side_pss_mb_per_host": round(sum(far) / len(far), 1),
    }


# -- what headspace says --------------------------------------------------------------


@dataclass
class Watch:
    """The watcher's lines, as they come: each row's state, when each was first seen, when each said permission."""

    started: float | None = None
    states: dict[tuple[str, str], str] = field(default_factory=dict)
    first_seen: dict[tuple[str, str], float] = field(default_factory=dict)
    permission_at: dict[tuple[str, str], float] = field(default_factory=dict)
    problems: list[tuple[float, str | None]] = field(default_factory=list)
    stalls: list[tuple[float, float]] = field(default_factory=list)  # (when, ms) the watcher's loop woke late
    missed: list[dict] = field(default_factory=list)  # each menu never seen: whether the agent drew it, the row's state then

    async def read(self, stream: asyncio.StreamReader) -> None:
        async for line in stream:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            at = float(message["t"])
            if "started" in message:
                self.started = at
            elif "stall_ms" in message:
                self.stalls.append((at, float(message["stall_ms"])))
            elif "problem" in message:
                self.problems.append((at, message["problem"]))
            elif "state" in message:
                key = (message["host"], message["pane"])
                self.states[key] = message["state"]
                self.first_seen.setdefault(key, at)
                if message["state"] == "permission":
                    self.permission_at.setdefault(key, at)


async def wait_until(condition, timeout: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(step)
    return True


async def latency_rounds(hosts: list[Host], watch: Watch, args) -> dict[str, list[float]]:
    """Menus drawn in every pane, hosts interleaved; the delays per host (inf: never seen)."""
    delays: dict[str, list[float]] = {h.name: [] for h in hosts}
    longest = max(len(h.farm.pids) for h in hosts)
    order = [(h, pane) for i in range(longest) for h in hosts for pane in list(h.farm.pids)[i : i + 1]]
    for n in range(args.rounds):
        if n:
            for h in hosts:
                h.farm.reset()  # all idle again; wait until headspace agrees
            await wait_until(lambda: "permission" not in watch.states.values(), 20)
            for h in hosts:
                h.farm.busy(args.busy)
            # Every agent just changed state at once, which no fleet does: each row is looked at
            # again 0.5, 2 and 5 s later (monitor.TRANSCRIPT_LOOKS), 200 looks in step, and a menu
            # drawn just after its pane's look waits out CAPTURE_GAP.  Let them pass first.
            await asyncio.sleep(args.round_gap)
        watch.permission_at.clear()
        for h, pane in order:
            h.farm.signal(pane, signal.SIGUSR2)
            await asyncio.sleep(args.spacing)
        await wait_until(lambda: all((h.name, p) in watch.permission_at for h, p in order), 15)
        for h, pane in order:
            drawn, seen = h.farm.drawn_at(pane), watch.permission_at.get((h.name, pane))
            delays[h.name].append(max(0.0, seen - drawn) * 1000 if drawn is not None and seen is not None else float("inf"))
            if drawn is None or seen is None:  # say which side lost it: the agent never drew it, or headspace never read it
                watch.missed.append({"host": h.name, "pane": pane, "round": n, "drawn": drawn is not None, "seen": seen is not None, "state": watch.states.get((h.name, pane))})
    return delays


def stats(values: list[float]) -> dict:
    return {
        "p50_ms": round(percentile(values, 50), 1),
        "p95_ms": round(percentile(values, 95), 1),
        "max_ms": round(max(values), 1),
        "samples": len(values),
        "missed": sum(1 for v in values if v == float("inf")),
    }


# -- one phase ----------------------------------------------------------------------------


def watcher_env(home: Path) -> dict[str, str]:
    """headspace's environment: a private HOME and XDG dirs (its config, state and ~/.ssh are never the user's)."""
    for sub in ("config", "state", "data", "cache"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(REPO),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }


async def phase(label: str, spec: dict, hosts: list[Host], args, workdir: Path, rtt_ms: float | None, others: list[int]) -> dict:
    expected = {(h.name, pane) for h in hosts for pane in h.farm.pids}
    errors = (workdir / f"watch-{label}.log").open("wb")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(WATCHER), json.dumps(spec),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=errors,
        env=watcher_env(workdir / f"home-{label}"),
    )  # fmt: skip
    errors.close()
    watch = Watch()
    assert proc.stdout is not None and proc.stdin is not None
    reader = asyncio.create_task(watch.read(proc.stdout))
    result: dict = {"phase": label, "rtt_ms": rtt_ms, "expected": len(expected)}
    try:
        await wait_until(lambda: proc.returncode is not None or (watch.started is not None and expected <= watch.first_seen.keys()), args.start_timeout)
        result["found"] = len(expected & watch.first_seen.keys())
        if watch.started is not None and result["found"]:
            per_host = {h.name: max((t for (name, _), t in watch.first_seen.items() if name == h.name), default=float("nan")) - watch.started for h in hosts}
            result["first_full_table_s"] = round(max(per_host.values()), 3) if result["found"] == len(expected) else None
            result["host_full_s"] = {name: round(s, 3) for name, s in per_host.items()}
            result["first_row_s"] = round(min(watch.first_seen.values()) - watch.started, 3)
            ok = next((at for at, problem in watch.problems if problem is None), None)
            result["all_hosts_reached_s"] = round(ok - watch.started, 3) if ok is not None else None
        if result["found"] < len(expected):
            result["error"] = f"only {result['found']} of {len(expected)} agents within {args.start_timeout:g}s; last problem: {watch.problems[-1][1] if watch.problems else None}"
            return result
        await asyncio.sleep(args.settle)  # first reads, transcripts, the first statuses
        result["cpu_idle"] = await measure(proc.pid, hosts, others, args.seconds)
        for h in hosts:
            h.farm.busy(args.busy)
        await asyncio.sleep(1.0)
        result["cpu_busy"] = await measure(proc.pid, hosts, others, args.seconds)
        table = process_table()
        result["links"] = {h.name: links(table, proc.pid, h) for h in hosts}
        result["memory"] = memory(proc.pid, hosts)
        measuring = time.time()
        delays = await latency_rounds(hosts, watch, args)
        during = [ms for at, ms in watch.stalls if at >= measuring]
        result["loop_stalls"] = {"count": len(during), "max_ms": max(during, default=0.0), "total_ms": round(sum(during), 1)}
        result["latency"] = {name: stats(values) for name, values in delays.items()}
        result["latency_all"] = stats([v for values in delays.values() for v in values])
        result["delays_ms"] = {name: [round(v, 1) for v in values] for name, values in delays.items()}
        result["missed_why"] = [{**miss, "problems": [problem for _, problem in watch.problems if problem][-3:]} for miss in watch.missed]
    finally:
        proc.stdin.close()  # the watcher stops its services
        try:
            await asyncio.wait_for(proc.wait(), 30)
        except TimeoutError:
            proc.kill()  # our own child, by its handle
            await proc.wait()
            result["watcher_killed"] = True
        await asyncio.gather(reader, return_exceptions=True)
        for h in hosts:
            h.farm.reset()
        # A stopped headspace leaves nothing on the hosts: every channel it opened ends.
        await wait_until(lambda: not any(links(process_table(), proc.pid, h)["channels"] for h in hosts), 10, 0.2)
        table = process_table()
        result["left_on_hosts"] = {h.name: links(table, proc.pid, h)["channel_commands"] for h in hosts if links(table, proc.pid, h)["channels"]}
        if "error" in result or result.get("watcher_killed"):
            result["watcher_stderr"] = (workdir / f"watch-{label}.log").read_text(errors="replace")[-2000:]
    return result


def remote_spec(hosts: list[Host], alias: str) -> dict:
    return {"kind": "remote", "hosts": [{"name": h.name, "destination": alias, "socket_name": h.farm.socket, "ssh_config": str(h.box.client_config)} for h in hosts]}


def local_spec(hosts: list[Host]) -> dict:
    return {"kind": "local", "hosts": [{"name": h.name, "socket_path": h.farm.socket_path} for h in hosts]}


def bounds(result: dict) -> None:
    """Issue 27's bound, per host and pooled: remote p95 ≤ local p95 + rtt + 50 ms."""
    local = result["phases"].get("local")
    if not local or "latency" not in local:
        return
    for label, ph in result["phases"].items():
        if label == "local" or "latency" not in ph:
            continue
        extra = ph["rtt_ms"] + BOUND_SLACK_MS
        per_host = {name: {"p95_ms": s["p95_ms"], "bound_ms": round(local["latency"][name]["p95_ms"] + extra, 1)} for name, s in ph["latency"].items()}
        for row in per_host.values():
            row["within"] = row["p95_ms"] <= row["bound_ms"]
        pooled_bound = round(local["latency_all"]["p95_ms"] + extra, 1)
        ph["bound"] = {
            "hosts_within": sum(1 for row in per_host.values() if row["within"]),
            "hosts": len(per_host),
            "pooled_p95_ms": ph["latency_all"]["p95_ms"],
            "pooled_bound_ms": pooled_bound,
            "pooled_within": ph["latency_all"]["p95_ms"] <= pooled_bound,
            "per_host": per_host,
        }


async def main_async(args) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="headspace-bench-fleet-"))
    phases: dict[str, dict] = {}
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, workdir, True)
        hosts: list[Host] = []
        for i in range(args.hosts):
            box = stack.enter_context(running_sshd(workdir / f"h{i}", max_sessions=args.max_sessions))
            results = workdir / f"h{i}" / "drawn"
            results.mkdir(parents=True)
            farm = BoxFarm(args.agents, results, box.remote_env["TMUX_TMPDIR"])
            stack.callback(farm.close)
            hosts.append(Host(f"h{i}", box, farm))
        await asyncio.sleep(2.0)  # the fake agents start and draw
        phases["local"] = await phase("local", local_spec(hosts), hosts, args, workdir, None, [])
        for rtt_ms in args.rtt:
            label = f"rtt{rtt_ms:g}ms"
            await asyncio.sleep(2.0)
            if rtt_ms == 0:
                phases[label] = await phase(label, remote_spec(hosts, Sshd.alias), hosts, args, workdir, 0.0, [])
                continue
            with relay_process([h.box.port for h in hosts], rtt_ms / 1000) as relay:
                alias = f"box-{label}"
                for h, port in zip(hosts, relay.ports, strict=True):
                    h.box.add_alias(alias, port, HostKeyAlias=f"[127.0.0.1]:{h.box.port}")  # the relay's port, the sshd's host key
                phases[label] = await phase(label, remote_spec(hosts, alias), hosts, args, workdir, rtt_ms, [relay.pid])
    result = {
        "hosts": args.hosts,
        "agents_per_host": args.agents,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "spacing": args.spacing,
        "busy": args.busy,
        "max_sessions": args.max_sessions or 10,
        "cores": os.cpu_count(),
        "load_before": os.getloadavg()[0],
        "link": "loopback 127.0.0.1; rtt > 0 through a userspace delaying TCP relay (no netem on this kernel)",
        "phases": phases,
    }
    bounds(result)
    return result


# -- the report ----------------------------------------------------------------------------


def _range(values: list) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    low, high = min(values), max(values)
    return f"{low:g}" if low == high else f"{low:g}–{high:g}"


def report(result: dict) -> str:
    phases = list(result["phases"].values())
    head = f"| {result['hosts']} hosts × {result['agents_per_host']} agents, {result['seconds']:g} s windows | " + " | ".join(p["phase"] for p in phases) + " |"
    lines = [head, "|---|" + "---:|" * len(phases)]

    def row(name: str, get) -> None:
        cells = []
        for p in phases:
            try:
                cells.append(str(get(p)))
            except (KeyError, TypeError, ValueError):
                cells.append("–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("agents found", lambda p: f"{p['found']}/{p['expected']}")
    row("first row / first full table (s)", lambda p: f"{p['first_row_s']:g} / {p['first_full_table_s']:g}")
    row("hosts' full rows (s)", lambda p: _range(list(p["host_full_s"].values())))
    row("latency p50 / p95 / max (ms)", lambda p: f"{p['latency_all']['p50_ms']:g} / {p['latency_all']['p95_ms']:g} / {p['latency_all']['max_ms']:g}")
    row("hosts' p95 (ms)", lambda p: _range([s["p95_ms"] for s in p["latency"].values()]))
    row("missed menus", lambda p: p["latency_all"]["missed"])
    row("headspace loop stalls ≥ 100 ms while menus drawn (n, max ms)", lambda p: f"{p['loop_stalls']['count']}, {p['loop_stalls']['max_ms']:g}")

    def bound(p: dict) -> str:
        b = p["bound"]
        return f"{b['hosts_within']}/{b['hosts']} hosts; pooled {b['pooled_p95_ms']:g} ≤ {b['pooled_bound_ms']:g}: {'yes' if b['pooled_within'] else 'NO'}"

    row("p95 ≤ local p95 + rtt + 50 ms", bound)
    for load in ("idle", "busy"):
        row(f"CPU {load} per host: headspace + its children (% core)", lambda p, load=load: p[f"cpu_{load}"]["per_host_headspace_side"])
        row(f"CPU {load} per host: far side (% core)", lambda p, load=load: p[f"cpu_{load}"]["per_host_far_side"])
        row(f"CPU {load} per host: total (% core)", lambda p, load=load: p[f"cpu_{load}"]["per_host_total"])
        row(f"CPU {load}: headspace process, all hosts (% core)", lambda p, load=load: p[f"cpu_{load}"]["headspace"])
        row(f"CPU {load}: tmux servers / relay, not headspace (% core)", lambda p, load=load: f"{p[f'cpu_{load}']['tmux_servers']:g} / {p[f'cpu_{load}']['relay']:g}")
    row("memory: headspace RSS / peak (MB)", lambda p: f"{p['memory']['headspace_rss_mb']:g} / {p['memory']['headspace_peak_mb']:g}")
    row("memory: its children, all hosts (MB, PSS)", lambda p: p["memory"]["children_pss_mb"])
    row("memory: far side per host (MB, PSS)", lambda p: p["memory"]["far_side_pss_mb_per_host"])
    row("TCP connections per host", lambda p: _range([link["tcp_connections"] for link in p["links"].values()]))
    row("ssh clients per host (masters)", lambda p: f"{_range([link['ssh_clients'] for link in p['links'].values()])} ({_range([link['ssh_masters'] for link in p['links'].values()])})")
    row("channels per host", lambda p: _range([link["channels"] for link in p["links"].values()]))
    row("left on the hosts after stop", lambda p: p["left_on_hosts"] or "nothing")
    lines.append("")
    lines.append("| host | " + " | ".join(f"{p['phase']} p50 / p95 (ms)" for p in phases) + " |")
    lines.append("|---|" + "---:|" * len(phases))
    for name in result["phases"]["local"].get("latency", {}):
        cells = []
        for p in phases:
            s = p.get("latency", {}).get(name)
            cells.append(f"{s['p50_ms']:g} / {s['p95_ms']:g}" if s else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for p in phases:
        if "error" in p:
            lines.append(f"\n{p['phase']}: {p['error']}\n{p.get('watcher_stderr', '')}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=10, help="sshd hosts (default 10)")
    parser.add_argument("--agents", type=int, default=20, help="fake agents per host (default 20)")
    parser.add_argument("--rtt", default="0,50", help="round trips to add, in ms, one remote phase each (default 0,50)")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each CPU window (default 15)")
    parser.add_argument("--rounds", type=int, default=2, help="menu rounds per phase, one menu per pane each (default 2)")
    parser.add_argument("--spacing", type=float, default=0.05, help="seconds between two menus (default 0.05)")
    parser.add_argument("--round-gap", type=float, default=6.0, help="seconds between resetting every agent and the next round's menus (default 6)")
    parser.add_argument("--busy", type=float, default=0.2, help="fraction of each host's agents working (default 0.2)")
    parser.add_argument("--settle", type=float, default=6.0, help="seconds after the full table before measuring: the last rows' looks at +0.5/2/5 s are startup, not idling (default 6)")
    parser.add_argument("--start-timeout", type=float, default=120.0, help="seconds to wait for the full table (default 120)")
    parser.add_argument("--max-sessions", type=int, default=None, help="sshd MaxSessions (default: OpenSSH's 10)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    args.rtt = [float(x) for x in args.rtt.split(",") if x.strip()]
    for tool in ("tmux", "ssh"):
        if shutil.which(tool) is None:
            print(f"fleet.py: {tool} is not installed", file=sys.stderr)
            return 1
    result = asyncio.run(main_async(args))
    print(json.dumps(result) if args.json else report(result))
    return 0 if all("error" not in p for p in result["phases"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
