"""Scale benchmark: headspace against a 500 ms capture-pane poller, on N agent-like panes.

    python benchmarks/scale.py --panes 100 --json

N panes, each its own session in a private tmux server, run
``fake_agent.py`` (real recorded Claude screens, a spinner that redraws in
bursts, a permission menu drawn at an instant it records).  Two phases on the
same panes, one after the other so their CPU can be told apart:

* **headspace**: the real app, headless (Textual's test driver), previewing
  one of the busy agents, with its
  control-mode monitor; status files and hooks are off, so this is the screen
  path alone.
* **baseline**: ``poller.py``, which forks ``tmux capture-pane`` for every pane
  every 500 ms (what the peer tools do) and classifies with the same rules.

Each phase first says how long after its start every agent was listed
(``listed_after_s``; headspace's also when every session's control client
had attached, up to the cap of them a server gets, ``attached_after_s``,
and measures from then on: settled),
then measures CPU (the observer plus the tmux server, in percent of one
core) with all panes idle and with 20% busy, then draws the menu in every
pane at recorded instants and measures the delay until the observer's model
says ``permission`` (p50/p95).  Peak memory is the observer's (with its tmux
control clients, for headspace).  headspace's phase also times 40 key
presses reaching the screen during the busy run (after its CPU window, so
typing does not count as the watching cost).

It prints one JSON line (``--json``) or a small table.  Not part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from textual import events  # noqa: E402

from headspace_tui.api.facade import AgentChanged  # noqa: E402
from headspace_tui.app.main import HeadspaceApp  # noqa: E402
from headspace_tui.model import AgentState  # noqa: E402
from headspace_tui.resident.facade_client import ServiceClient  # noqa: E402
from headspace_tui.service.facade import Service  # noqa: E402
from headspace_tui.service.records.journal import Journal  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402

CORPUS = REPO / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "120x40"
TICK = os.sysconf("SC_CLK_TCK")


# -- CPU and memory accounting ------------------------------------------------------


def proc_cpu(pid: int, *, children: bool = False) -> float:
    """CPU seconds of a process (and its reaped children) from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / TICK


def live_children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    kids.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return kids


def self_cpu() -> float:
    """This process, its reaped children (forked tmux commands) and live ones (control clients)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    live = sum(proc_cpu(kid) for kid in live_children(os.getpid()))
    return usage.ru_utime + usage.ru_stime + reaped.ru_utime + reaped.ru_stime + live


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


# -- the panes ------------------------------------------------------------------


class Farm:
    """N fake agents, each in its own session of a private tmux server."""

    def __init__(self, panes: int, results: Path) -> None:
        self.socket = f"headspace-bench-{os.getpid()}"
        self.results = results
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(results), "LANG": "C.UTF-8", "TERM": "xterm-256color"}
        agent = REPO / "benchmarks" / "fake_agent.py"
        command = f"exec -a claude {sys.executable} -S {agent} {CORPUS} {results}"
        # The agents work in an empty folder of their own, as a user's agent works in its project: not in the
        # benchmark's working directory, whose size would be timed as each agent's first snapshot (changes/).
        folder = results / "work"
        folder.mkdir(exist_ok=True)
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "a0", "-x", "120", "-y", "40", "-c", str(folder), command)
        for n in range(1, panes):
            self.tmux("new-session", "-d", "-s", f"a{n}", "-x", "120", "-y", "40", "-c", str(folder), command)
        self.pids: dict[str, int] = {}
        for line in self.tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_pid}").split("\n"):
            if line.strip():
                pane, pid = line.split()
                self.pids[pane] = int(pid)
        self.server_pid = int(self.tmux("display-message", "-p", "#{pid}").strip())

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=self.env, check=True).stdout

    def signal(self, pane: str, sig: int) -> None:
        os.kill(self.pids[pane], sig)  # only the fake agents this benchmark started

    def drawn_at(self, pane: str) -> float | None:
        path = self.results / (pane.lstrip("%") + ".drawn")
        try:
            return float(path.read_text())
        except (OSError, ValueError):
            return None

    def reset(self) -> None:
        for pane in self.pids:
            self.signal(pane, signal.SIGINT)
        for path in self.results.glob("*.drawn"):
            path.unlink()

    def close(self) -> None:
        socket = self.tmux("display-message", "-p", "#{socket_path}").strip()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, env=self.env)
        if os.path.basename(socket) == self.socket and os.path.exists(socket):
            os.unlink(socket)  # tmux 3.3a leaves its socket file behind


# -- one phase --------------------------------------------------------------------


async def measure_cpu(cpu_of, seconds: float, parts: dict | None = None) -> float:
    """Percent of one core used by ``cpu_of`` (a function, or a dict of named ones) over ``seconds``."""
    funcs = cpu_of if isinstance(cpu_of, dict) else {"all": cpu_of}
    start_cpu = {name: f() for name, f in funcs.items()}
    start = time.monotonic()
    await asyncio.sleep(seconds)
    wall = time.monotonic() - start
    used = {name: (f() - start_cpu[name]) / wall * 100 for name, f in funcs.items()}
    if parts is not None:
        parts.update(used)
    return sum(used.values())


async def menus(farm: Farm, seen_at, spacing: float) -> list[float]:
    """Draw the menu in every pane, one after another; the delays until each is seen."""
    for pane in farm.pids:
        farm.signal(pane, signal.SIGUSR2)
        await asyncio.sleep(spacing)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(seen_at(p) is None for p in farm.pids):
        await asyncio.sleep(0.05)
    delays = []
    for pane in farm.pids:
        drawn, seen = farm.drawn_at(pane), seen_at(pane)
        if drawn is not None and seen is not None:
            delays.append(max(0.0, seen - drawn) * 1000)
        else:
            delays.append(float("inf"))  # never seen: counts as missed
    return delays


async def key_latency(app: HeadspaceApp) -> float:
    """Milliseconds from a key arriving (as the terminal driver delivers it) to its effect.

    The effect of Down is the table's cursor moving; Textual paints the next
    frame within 1/60 s of that, which is added.
    """
    table = app.table
    before, rows = table.cursor_row, max(1, table.row_count)
    key = "down" if before < rows - 1 else "up"
    started = time.perf_counter()
    app._driver.send_message(events.Key(key, None))
    while table.cursor_row == before and time.perf_counter() - started < 2:
        await asyncio.sleep(0.001)
    return (time.perf_counter() - started) * 1000 + 1000 / 60


async def headspace_phase(farm: Farm, args, workdir: Path) -> dict:
    service = Service.build(
        TmuxServer(socket_name=farm.socket),
        config_dir=workdir / "no-claude-config",
        journal=Journal(None),
        hooks=False,
    )
    app = HeadspaceApp(ServiceClient.in_process(service))
    permission_at: dict[str, float] = {}

    async with app.run_test(size=(160, 48)) as pilot:

        def watch(event) -> None:
            # When the service says permission (the app is told at the same moment, by the same call).
            agent = getattr(event, "agent", None)
            if isinstance(event, AgentChanged) and agent.state is AgentState.PERMISSION and agent.pane_id not in permission_at:
                permission_at[agent.pane_id] = time.time()

        app.service.subscribe(watch)
        started = time.monotonic()
        deadline = started + 60
        while len(app.table.agents) < len(farm.pids) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        found = len(app.table.agents)
        listed_after = round(time.monotonic() - started, 2) if found >= len(farm.pids) else None  # every agent in the table (None: not within 60 s)
        # Settled: every session's control client attached (they go one at a time); what follows is measured from there.
        sessions = service._fleet.first.sessions  # the benchmark's look inside: when every client has attached
        deadline = time.monotonic() + 180
        wanted = min(len(sessions.running), sessions.client_cap)  # the sessions beyond the cap are read through these
        while len(sessions.clients) < wanted and time.monotonic() < deadline:
            await pilot.pause(0.2)
        attached_after = round(time.monotonic() - started, 1) if len(sessions.clients) >= wanted else None
        await pilot.pause(2.0)  # settle: initial reads done
        idle = await measure_cpu(lambda: self_cpu() + proc_cpu(farm.server_pid), args.seconds)
        busy_panes = list(farm.pids)[: max(1, len(farm.pids) // 5)]
        for pane in busy_panes:
            farm.signal(pane, signal.SIGUSR1)
        await pilot.pause(1.0)
        app.table.move_cursor(row=0)  # working agents sort first: preview a busy one
        await pilot.pause(0.5)
        previewing_busy = app.selected_agent() is not None and app.selected_agent().state is AgentState.WORKING
        busy_parts: dict = {}
        # CPU while the user watches (the preview on one of the busy agents)...
        busy = await measure_cpu({"headspace": self_cpu, "tmux": lambda: proc_cpu(farm.server_pid)}, args.seconds, busy_parts)
        # ...then keys, still during the busy run: how fast does a key reach the screen?
        keys = []
        for _ in range(40):
            keys.append(await key_latency(app))
            await asyncio.sleep(0.1)
        permission_at.clear()
        delays = await menus(farm, permission_at.get, args.spacing)
    return {
        "found": found,
        "listed_after_s": listed_after,
        "attached_after_s": attached_after,
        "cpu_idle_pct": idle,
        "cpu_busy_pct": busy,
        "delays": delays,
        "rss_mb": rss_mb(os.getpid()),
        "key_p95_ms": percentile(keys, 95),
        "busy_parts": busy_parts,
        "previewing_busy": previewing_busy,
    }


async def baseline_phase(farm: Farm, args) -> dict:
    poller = await asyncio.create_subprocess_exec(
        sys.executable,
        str(REPO / "benchmarks" / "poller.py"),
        farm.socket,
        "0.5",
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    permission_at: dict[str, float] = {}
    states: dict[str, str] = {}

    async def read() -> None:
        assert poller.stdout is not None
        async for line in poller.stdout:
            row = json.loads(line)
            states[row["pane"]] = row["state"]
            if row["state"] == "permission" and row["pane"] not in permission_at:
                permission_at[row["pane"]] = row["at"]

    reader = asyncio.create_task(read())
    try:
        started = time.monotonic()
        deadline = started + 60
        while len(states) < len(farm.pids) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        listed_after = round(time.monotonic() - started, 2) if len(states) >= len(farm.pids) else None
        await asyncio.sleep(2.0)
        cpu_of = lambda: proc_cpu(poller.pid, children=True) + proc_cpu(farm.server_pid)  # noqa: E731
        idle = await measure_cpu(cpu_of, args.seconds)
        for pane in list(farm.pids)[: max(1, len(farm.pids) // 5)]:
            farm.signal(pane, signal.SIGUSR1)
        await asyncio.sleep(1.0)
        busy = await measure_cpu(cpu_of, args.seconds)
        permission_at.clear()
        delays = await menus(farm, permission_at.get, args.spacing)
        memory = rss_mb(poller.pid)
    finally:
        poller.kill()  # our own child
        await poller.wait()
        reader.cancel()
    return {"cpu_idle_pct": idle, "cpu_busy_pct": busy, "delays": delays, "rss_mb": memory, "listed_after_s": listed_after}


def summary(phase: dict, prefix: str = "") -> dict:
    delays = phase["delays"]
    return {
        f"{prefix}p50_ms": round(percentile(delays, 50), 1),
        f"{prefix}p95_ms": round(percentile(delays, 95), 1),
        f"{prefix}cpu_idle_pct": round(phase["cpu_idle_pct"], 2),
        f"{prefix}cpu_busy_pct": round(phase["cpu_busy_pct"], 2),
        f"{prefix}rss_mb": round(phase["rss_mb"], 1),
        f"{prefix}listed_after_s": phase["listed_after_s"],  # every agent listed, seconds after the observer started (None: not within 60 s)
    }


async def main_async(args) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="headspace-bench-"))
    results = workdir / "drawn"
    results.mkdir()
    farm = Farm(args.panes, results)
    try:
        await asyncio.sleep(2.0)  # the fake agents start and draw
        ours = await headspace_phase(farm, args, workdir)
        theirs = None
        if not args.no_baseline:
            farm.reset()
            await asyncio.sleep(1.0)
            theirs = await baseline_phase(farm, args)
    finally:
        farm.close()
        shutil.rmtree(workdir, ignore_errors=True)
    result = {"panes": args.panes, **summary(ours), **(summary(theirs, "baseline_") if theirs else {})}
    result["key_p95_ms"] = round(ours["key_p95_ms"], 1)
    result["cpu_busy_split"] = {name: round(value, 2) for name, value in ours["busy_parts"].items()}
    result["previewing_busy"] = ours["previewing_busy"]
    result["agents_found"] = ours["found"]
    result["attached_after_s"] = ours["attached_after_s"]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panes", type=int, default=10, help="number of agent panes (default 10)")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each CPU window (default 15)")
    parser.add_argument("--spacing", type=float, default=0.05, help="seconds between two menus (default 0.05)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument("--no-baseline", action="store_true", help="headspace's phase only (comparing two versions of it)")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("scale.py: tmux is not installed", file=sys.stderr)
        return 1
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>22}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
