"""Where the test suite's CPU goes: each test charged what it and everything it started spent.

    python benchmarks/suite_cpu.py [--top N] [--out FILE] -- [pytest arguments]

Default arguments are the live stage as tests/run runs it (``-m "e2e and not soak" -n 4
--dist loadgroup``). CI's time on two cores is bound by CPU, not by waits, so the wall time a
test reports says little about what it costs the others beside it: this says what it burns.

How a process is charged: every 0.2 s each process's user+system time is read from /proc.
A process belongs to the xdist worker it descends from, or whose private tmux server it
runs under, or to the test its environment names (PYTEST_CURRENT_TEST, for one that left
its parent with the test's environment: a resident service) (the harness names each server ``headspace-test-<worker pid>-…``; a tmux server
leaves its parent when it starts). It is charged to the test its worker was running when it
was first seen; the worker's own time to the test running at each sample. Processes that
lived less than one sample are charged to their parent (its children's time), once reaped; a
child that was seen is charged once, as itself, and taken out of its parent's children's time
(a shell reaps its Claude, a worker its ``headspace status``: counted in both, the total could
exceed what two cores give).

Last, the machine's cores in use over the run (``--bucket`` seconds a line) beside the tests
running then: idle cores while tests run are time a better order could take back. Run it on
a quiet machine: every process of the machine counts there, and any test's process anywhere
that names its test in its environment is charged to it.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
LIVE_STAGE = ["-m", "e2e and not soak", "-n", "4", "--dist", "loadgroup", "-p", "no:randomly", "-q"]
SOCKET = re.compile(r"headspace-test-(\d+)-")


@dataclass
class Seen:
    start: int  # /proc starttime: tells a reused pid from the one we saw
    ppid: int
    cmd: str
    first: float
    test: str = ""  # PYTEST_CURRENT_TEST in its environment: a process that left its parent still says whose it is
    cpu: int = 0  # own ticks, last read
    waited: int = 0  # its reaped children's ticks, last read
    last: float = 0.0  # when it was last seen alive


def read(pid: int) -> tuple[int, int, int, int] | None:
    """(ppid, own ticks, reaped children's ticks, starttime), or None once it has gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes().decode(errors="replace")
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]), int(fields[19])


def command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "?"


def test_in_environment(pid: int) -> str:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return ""
    for entry in environ.split(b"\0"):
        if entry.startswith(b"PYTEST_CURRENT_TEST="):
            return entry.split(b"=", 1)[1].decode(errors="replace").rsplit(" (", 1)[0]
    return ""


def program(cmd: str) -> str:
    """A short name for what a process runs: its program, or the module a python runs."""
    words = cmd.split()
    if not words:
        return "?"
    name = words[0].rsplit("/", 1)[-1]
    if name.startswith("python") and len(words) > 2 and words[1] == "-m":
        return f"python -m {words[2]}"
    if name.startswith("python") and len(words) > 1:
        return f"python {words[1].rsplit('/', 1)[-1]}"
    return name


def sample(procs: dict[int, Seen], workers: dict[int, list[tuple[float, int]]], runner: int) -> None:
    now = time.time()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        state = read(pid)
        if state is None:
            continue
        ppid, cpu, waited, start = state
        seen = procs.get(pid)
        if seen is None or seen.start != start:
            seen = procs[pid] = Seen(start, ppid, command(pid), now, test_in_environment(pid))
        if ppid == runner:  # an xdist worker: its own time goes to the test it runs at each sample
            workers.setdefault(pid, []).append((now, cpu + waited - seen.cpu - seen.waited))
        seen.cpu, seen.waited, seen.last = cpu, waited, now


def machine_busy() -> tuple[int, int]:
    """(busy, all) ticks of the whole machine since boot, from /proc/stat: the cores' use between two reads."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


def busy_over_time(marks: list[tuple[float, int, int]], runs: dict[int, list[tuple[float, float, str]]], bucket: float) -> list[str]:
    """Per ``bucket`` seconds of the run: the cores in use (of the machine's) and the tests running, on average.

    Where a stage leaves cores idle (tests all waiting at once, a tail with one
    test left) is time a faster order or more workers could take back; where
    the cores are full, only less work can.
    """
    if len(marks) < 2:
        return []
    began = marks[0][0]
    cores = len(os.sched_getaffinity(0))
    spans = [(start, end) for tests in runs.values() for start, end, _ in tests]
    lines = []
    at = 0
    while at < len(marks) - 1:
        first = marks[at]
        end = at
        while end < len(marks) - 1 and marks[end][0] - first[0] < bucket:
            end += 1
        last = marks[end]
        used = (last[1] - first[1]) / max(1, last[2] - first[2]) * cores
        middle = [first[0] + (last[0] - first[0]) * k / 10 for k in range(10)]
        running = sum(sum(1 for start, stop in spans if start <= when <= stop) for when in middle) / len(middle)
        lines.append(f"  {first[0] - began:5.0f}-{last[0] - began:5.0f} s  cores in use {used:4.2f} of {cores}  tests running {running:4.1f}")
        at = end
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--out", help="also write every test's CPU seconds here, tab-separated")
    parser.add_argument("--bucket", type=float, default=30.0, help="seconds per line of the cores' use over time")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    with tempfile.NamedTemporaryFile(prefix="hs-timeline-", suffix=".tsv", delete=False) as handle:
        timeline_path = Path(handle.name)
    env = {**os.environ, "HEADSPACE_SUITE_TIMELINE": str(timeline_path)}
    if not args.pytest_args:
        env["HEADSPACE_LIVE_ONLY"] = "1"  # as tests/run collects the live stage
    began = time.time()
    runner = subprocess.Popen([sys.executable, "-m", "pytest", *(args.pytest_args or LIVE_STAGE)], cwd=REPO, env=env)
    procs: dict[int, Seen] = {}
    workers: dict[int, list[tuple[float, int]]] = {}
    marks: list[tuple[float, int, int]] = []  # (when, the machine's busy ticks, all ticks)
    while runner.poll() is None:
        sample(procs, workers, runner.pid)
        marks.append((time.time(), *machine_busy()))
        time.sleep(0.2)
    wall = time.time() - began
    runs: dict[int, list[tuple[float, float, str]]] = collections.defaultdict(list)
    for line in timeline_path.read_text(encoding="utf-8").splitlines():
        pid, test, start, end = line.split("\t")
        runs[int(pid)].append((float(start), float(end), test))
    timeline_path.unlink()

    def test_at(worker: int, when: float) -> str:
        last = "(between tests)"
        for start, end, test in sorted(runs.get(worker, [])):
            if start <= when:
                last = test if when <= end + 0.5 else "(between tests)"
        return last

    def owner(pid: int) -> int | None:
        hops = 0
        while pid in procs and hops < 64:
            if pid in runs:
                return pid
            found = SOCKET.search(procs[pid].cmd)
            if found and int(found.group(1)) in runs:
                return int(found.group(1))
            pid, hops = procs[pid].ppid, hops + 1
        return pid if pid in runs else None

    # A child seen on its own and gone by the end was reaped into its parent's children's time: charged as itself,
    # it comes out of the parent's (for a worker, at the sample it went, from the test it was reaped in).
    ended = max((seen.last for seen in procs.values()), default=0.0)
    reaped: dict[int, int] = collections.Counter()
    for seen in procs.values():
        parent = procs.get(seen.ppid)
        if seen.last < ended and parent is not None and seen.first >= parent.first:
            reaped[seen.ppid] += seen.cpu + seen.waited
            if seen.ppid in workers:
                workers[seen.ppid].append((seen.last, -(seen.cpu + seen.waited)))

    charged: dict[str, float] = collections.Counter()
    unowned: dict[str, float] = collections.Counter()
    programs: dict[str, float] = collections.Counter()  # what the charged time ran: claude, chromium, tmux, headspace …
    ran: dict[str, dict[str, float]] = collections.defaultdict(collections.Counter)  # each test's time by program
    for pid, seen in procs.items():
        if pid in runs:
            continue
        ticks = seen.cpu + max(0, seen.waited - reaped[pid])
        if seen.first <= began + 0.3:
            continue  # there before the run: not the suite's
        worker = owner(pid)
        if seen.test or worker is not None:
            programs[program(seen.cmd)] += ticks / TICK
        if seen.test:  # started in a test's environment: that test, exactly
            charged[seen.test] += ticks / TICK
            ran[seen.test][program(seen.cmd)] += ticks / TICK
        elif worker is not None:
            charged[test_at(worker, seen.first)] += ticks / TICK
            ran[test_at(worker, seen.first)][program(seen.cmd)] += ticks / TICK
        else:
            unowned[program(seen.cmd)] += ticks / TICK
    for worker, deltas in workers.items():
        for when, ticks in deltas:
            charged[test_at(worker, when)] += ticks / TICK
            programs["the pytest workers (pilot apps, harness)"] += ticks / TICK
            ran[test_at(worker, when)]["its worker"] += ticks / TICK
    modules: dict[str, float] = collections.Counter()
    for test, seconds in charged.items():
        modules[test.split("::")[0]] += seconds
    total = sum(charged.values())
    print(f"wall {wall:.0f} s; CPU charged to tests {total:.0f} s; not traced to a worker {sum(unowned.values()):.0f} s")
    print("\nby module:")
    for module, seconds in modules.most_common(args.top):
        print(f"  {seconds:7.1f} s  {module}")
    print("\nby test:")
    for test, seconds in collections.Counter(charged).most_common(args.top):
        print(f"  {seconds:7.1f} s  {test}")
        print("             " + ", ".join(f"{name} {spent:.1f}" for name, spent in collections.Counter(ran[test]).most_common(3)))
    print("\ncharged, by program:")
    for name, seconds in collections.Counter(programs).most_common(15):
        print(f"  {seconds:7.1f} s  {name}")
    print("\nnot traced, by program:")
    for name, seconds in collections.Counter(unowned).most_common(10):
        print(f"  {seconds:7.1f} s  {name}")
    print(f"\nthe machine's cores in use, every {args.bucket:g} s (the sampler's own time included):")
    print("\n".join(busy_over_time(marks, runs, args.bucket)))
    if args.out:
        Path(args.out).write_text("".join(f"{s:.2f}\t{t}\n" for t, s in sorted(charged.items(), key=lambda kv: -kv[1])), encoding="utf-8")
    return runner.returncode


if __name__ == "__main__":
    sys.exit(main())
