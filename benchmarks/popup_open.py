"""Popup open to full table: from starting ``headspace -L SERVER`` in a terminal to its screen showing the whole table, N fake agents.

    python benchmarks/popup_open.py --panes 100 --opens 10 --json

N fake agents (``fake_agent.py``: real recorded Claude screens, each in its
own session of a private tmux server, as ``scale.py`` makes them), all idle.
The terminal is a pane of a second private tmux server (the viewer, 120x40,
as a popup is a pane of the user's server): each open is one
``new-session`` there running headspace, its screen read with
``capture-pane`` every ``--poll`` seconds until

* the first frame: a header line (``headspace  looking…`` or ``headspace  N agents``);
* the full table: the header says ``headspace  N agents`` (N = ``--panes``)
  and the first row (``a0:0.0``) is drawn.

Both are timed from the ``new-session`` command.  Then ``q``, the process
waited for, the viewer session killed, a pause (``--gap``) as between two
popup opens, and the next open.  Each open also counts the control clients
attached to the agents' server (tmux's ``client-attached`` hook) from just
before it until its headspace has ended.  Three modes, in this order:

* ``service``: ``headspace -L SERVER``, a client of the resident service,
  which is started first (``headspace serve``) and left to settle (every
  session's control client attached) so that each open measures a popup,
  not the service's start.  Expected: 0 attaches per open.  A headspace
  that says ``watching from this headspace alone: …`` did not use the
  service: that text is reported (``service_notice``).
* ``warm``: ``headspace -L SERVER popup``, what the popup key runs now
  (docs/popup.md): the launcher attaches the viewer's pane to the warm UI
  in headspace's private tmux server, started by the first open (a warm-up
  open, not counted: its time is reported as ``first_open_ms``); ``q``
  detaches it.  Expected: 0 attaches per open.  Then the warm UI's idle
  cost: CPU (% of one core) and RSS of the UI process and of its private
  tmux server over ``--idle`` seconds with no popup open, and whether both
  ended with the service (``ended_with_service``).
* ``own``: ``headspace -L SERVER --no-service``, no service running: a
  monitor of its own each open.  Expected: N attaches per open (one per
  session, paced).

``--warmup`` opens (default 1) before the first measured mode are not
counted: they load the imports into the page cache (and ``__pycache__``).
Reported per mode: full table and first frame p50 / p90 / max (ms),
attaches per open.  Throwaway HOME and XDG folders; the service is stopped,
both tmux servers killed and the folders removed at the end, on Ctrl-C or
an error too.  Not part of the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.scale import Farm, percentile  # noqa: E402
from headspace_tui.shared.proctree import process_exists  # noqa: E402
from headspace_tui.shared.resident_place import place_of, read_card  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402

WIDTH, HEIGHT = 120, 40
FIRST_FRAME = re.compile(r"headspace  \S")  # the header, whatever it says yet
FULL_HEADER = re.compile(r"headspace  (\d+) agents?\b")
FIRST_ROW = re.compile(r"(?<![\w:.])a0:0\.0(?![\w.])")
ALONE = "watching from this headspace alone"


class Viewer:
    """A private tmux server standing for the user's terminal: one session per open."""

    def __init__(self, env: dict[str, str]) -> None:
        self.socket = f"hs-viewer-{os.getpid()}"
        self.env = env
        # A session that holds the server up between opens (so each open is a new-session, not a
        # server start), and remain-on-exit so that a headspace that ends on its own leaves its screen.
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "hold", "-x", str(WIDTH), "-y", str(HEIGHT), "cat")
        self.tmux("set-option", "-g", "remain-on-exit", "on")

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=self.env, check=check)

    def screen(self, session: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", f"={session}:", check=False).stdout

    def dead(self, session: str) -> bool | None:
        """True once the pane's process has ended (None: no such session)."""
        said = self.tmux("display-message", "-p", "-t", f"={session}:", "#{pane_dead}", check=False)
        return None if said.returncode != 0 else said.stdout.strip() == "1"

    def close(self) -> None:
        socket = self.tmux("display-message", "-p", "#{socket_path}", check=False).stdout.strip()
        self.tmux("kill-server", check=False)
        if os.path.basename(socket) == self.socket and os.path.exists(socket):
            os.unlink(socket)  # tmux 3.3a leaves its socket file behind


def attaches(path: Path) -> int:
    return path.read_text().count("x") if path.exists() else 0


def settled_attaches(path: Path, quiet: float = 0.5, limit: float = 10.0) -> int:
    """The hook's count once it has not moved for ``quiet`` seconds (its run-shell -b lines land late)."""
    count, since, deadline = attaches(path), time.monotonic(), time.monotonic() + limit
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = attaches(path)
        if now != count:
            count, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
    return count


def open_once(viewer: Viewer, argv: list[str], panes: int, name: str, *, poll: float, timeout: float) -> dict:
    """One open: ms to the first frame and to the full table, then quit; what the screen said if it went wrong."""
    command = "exec " + shlex.join(argv)
    started = time.perf_counter()
    viewer.tmux("new-session", "-d", "-s", name, "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(REPO), command)
    first = full = None
    notice = None
    shown = ""
    deadline = time.monotonic() + timeout
    try:
        while full is None:
            shown = viewer.screen(name)
            now = (time.perf_counter() - started) * 1000
            if ALONE in shown and notice is None:
                notice = next(line.strip() for line in shown.splitlines() if ALONE in line)
            if first is None and FIRST_FRAME.search(shown):
                first = now
            header = FULL_HEADER.search(shown)
            if header and int(header.group(1)) == panes and FIRST_ROW.search(shown):
                full = now
                break
            if viewer.dead(name):
                raise RuntimeError(f"{name}: headspace ended before its full table; its screen:\n{viewer.screen(name)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}: no full table within {timeout:g} s; its screen:\n{shown}")
            time.sleep(poll)
        time.sleep(0.2)  # a notice is drawn with the first frame; look once more for one
        shown = viewer.screen(name)
        if ALONE in shown and notice is None:
            notice = next(line.strip() for line in shown.splitlines() if ALONE in line)
        viewer.tmux("send-keys", "-t", f"={name}:", "q", check=False)
        quit_by = time.monotonic() + 20
        while viewer.dead(name) is False and time.monotonic() < quit_by:
            time.sleep(0.05)
        quit_ok = viewer.dead(name) is not False
        status = viewer.tmux("display-message", "-p", "-t", f"={name}:", "#{pane_dead_status}", check=False).stdout.strip()
    finally:
        viewer.tmux("kill-session", "-t", f"={name}", check=False)  # ends it (SIGHUP) if q did not
    return {"first_ms": first if first is not None else full, "full_ms": full, "notice": notice, "quit": quit_ok, "exit": status}


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of ``pid`` so far (/proc/PID/stat: utime and stime, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def idle_cost(pids: dict[str, int], seconds: float) -> dict[str, dict[str, float]]:
    """Each process's CPU (% of one core) over ``seconds`` of idling, and its RSS (MiB) at the end."""
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    started = time.monotonic()
    time.sleep(seconds)
    took = time.monotonic() - started
    return {name: {"cpu_pct": round(100 * (cpu_seconds(pid) - before[name]) / took, 2), "rss_mib": rss_mib(pid)} for name, pid in pids.items()}


def warm_pids(env: dict[str, str], socket: str) -> dict[str, int]:
    """The warm UI's pid and its private tmux server's (read from that server: our own, by its socket)."""
    from headspace_tui.cli.popup import SESSION, tmux_socket, ui_place

    place = ui_place(TmuxServer(socket_name=socket).identity, env)
    said = subprocess.run(["tmux", "-S", str(tmux_socket(place)), "display-message", "-p", "-t", f"={SESSION}:", "#{pane_pid} #{pid}"], capture_output=True, text=True, env=env).stdout.split()
    return {"warm_ui": int(said[0]), "private_tmux": int(said[1])} if len(said) == 2 else {}


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values)), "p90": round(percentile(values, 90)), "max": round(max(values))}


def stop_service(env: dict[str, str], socket: str, pid: int | None) -> None:
    subprocess.run([sys.executable, "-m", "headspace_tui", "-L", socket, "serve", "--stop"], env=env, cwd=REPO, capture_output=True, timeout=60)
    if pid is None:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)  # the service this benchmark started, which --stop did not end
    except ProcessLookupError:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panes", type=int, default=100)
    parser.add_argument("--opens", type=int, default=10, help="opens timed per mode")
    parser.add_argument("--modes", default="service,warm,own", help="which of service, warm, own to measure, in this order (default all three)")
    parser.add_argument("--idle", type=float, default=60.0, help="seconds the warm UI's idle cost is measured over (0: not measured)")
    parser.add_argument("--warmup", type=int, default=1, help="opens before the first measured mode, not counted")
    parser.add_argument("--poll", type=float, default=0.02, help="seconds between two reads of the screen")
    parser.add_argument("--gap", type=float, default=1.0, help="seconds between two opens")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one open may take to its full table")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.opens < 1:
        parser.error("--opens must be at least 1")
    modes = [m for m in ("service", "warm", "own") if m in args.modes.split(",")]
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # Ctrl-C, or ended from outside (SIGINT too when started with &)
        signal.signal(sig, signal.default_int_handler)

    root = Path(tempfile.mkdtemp(prefix="hs-bench-popup-"))
    (root / "drawn").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        folder = root / name.lower()
        folder.mkdir(mode=0o700)
        env[name] = str(folder)
    env["HOME"] = str(root)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))  # this checkout, also where the warm UI runs (from /)
    farm = viewer = None
    service_pid = None
    result: dict = {"panes": args.panes, "opens": args.opens}
    try:
        farm = Farm(args.panes, root / "drawn")
        counted = root / "attaches"
        farm.tmux("set-hook", "-g", "client-attached", f'run-shell -b "echo x >> {counted}"')
        viewer = Viewer(env)
        time.sleep(2.0)  # the fake agents draw
        headspace = [sys.executable, "-m", "headspace_tui", "-L", farm.socket]
        opened = 0
        for mode in modes:
            argv = {"service": headspace, "warm": [*headspace, "popup"], "own": [*headspace, "--no-service"]}[mode]
            if mode in ("service", "warm") and service_pid is None:
                before = settled_attaches(counted)
                started = time.perf_counter()
                serve = subprocess.run([*headspace, "serve"], env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
                card = read_card(place_of(TmuxServer(socket_name=farm.socket).identity, env)) or {}
                service_pid = card.get("pid")
                if serve.returncode != 0:
                    raise RuntimeError(f"headspace serve failed: {serve.stderr.strip() or serve.stdout.strip()}")
                deadline = time.monotonic() + 300
                while attaches(counted) < before + args.panes:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the service attached {attaches(counted) - before} of {args.panes} sessions in 300 s")
                    time.sleep(0.2)
                result["service_attached_after_s"] = round(time.perf_counter() - started, 1)
                time.sleep(2.0)  # settled
            if mode == "warm":  # the first open starts the warm UI: not counted, said apart
                done = open_once(viewer, argv, args.panes, "warmfirst", poll=args.poll, timeout=args.timeout)
                result["warm_first_open_ms"] = round(done["full_ms"])
                settled_attaches(counted)
                time.sleep(args.gap)
            for n in range(args.warmup if mode == modes[0] else 0):
                done = open_once(viewer, argv, args.panes, f"warmup{n}", poll=args.poll, timeout=args.timeout)
                result.setdefault("warmup_full_ms", []).append(round(done["full_ms"]))
                settled_attaches(counted)
                time.sleep(args.gap)
            fulls, firsts, added, notices, troubles = [], [], [], [], []
            for n in range(args.opens):
                before = attaches(counted)
                done = open_once(viewer, argv, args.panes, f"{mode}{n}", poll=args.poll, timeout=args.timeout)
                opened += 1
                added.append(settled_attaches(counted) - before)
                fulls.append(done["full_ms"])
                firsts.append(done["first_ms"])
                if done["notice"]:
                    notices.append(done["notice"])
                if not done["quit"] or done["exit"] not in ("", "0"):
                    troubles.append(f"open {n}: quit {'ok' if done['quit'] else 'timed out'}, exit status {done['exit'] or '?'}")
                time.sleep(args.gap)
            result[mode] = {
                "full_table_ms": summary(fulls),
                "first_frame_ms": summary(firsts),
                "attaches_per_open": added,
                "full_table_ms_each": [round(v) for v in fulls],
            }
            if notices:
                result[mode]["notice"] = sorted(set(notices))
            if troubles:
                result[mode]["troubles"] = troubles
            if mode == "warm":
                pids = warm_pids(env, farm.socket)
                if not pids:
                    result["warm"]["troubles"] = [*result["warm"].get("troubles", []), "no warm UI after the opens"]
                elif args.idle > 0:
                    result["warm"]["idle"] = idle_cost(pids, args.idle)
                    result["warm"]["idle_seconds"] = args.idle
            if mode in ("service", "warm") and (mode == modes[-1] or modes[modes.index(mode) + 1] == "own"):
                card = read_card(place_of(TmuxServer(socket_name=farm.socket).identity, env)) or {}
                if card.get("pid") != service_pid:
                    result[mode]["troubles"] = [*result[mode].get("troubles", []), f"the service changed under the opens: pid {service_pid} -> {card.get('pid')}"]
                warm = warm_pids(env, farm.socket)
                stop_service(env, farm.socket, service_pid)
                service_pid = None
                if warm:
                    deadline = time.monotonic() + 15
                    while any(process_exists(pid) for pid in warm.values()) and time.monotonic() < deadline:
                        time.sleep(0.1)
                    result["warm"]["ended_with_service"] = not any(process_exists(pid) for pid in warm.values())
                settled_attaches(counted)  # its control clients gone before the next mode counts
    finally:
        ends = []
        if farm is not None:
            ends.append(lambda: stop_service(env, farm.socket, service_pid))
        if viewer is not None:
            ends.append(viewer.close)
        if farm is not None:
            ends.append(farm.close)
        for end in ends:  # each one tried, whatever the one before did
            try:
                end()
            except (OSError, subprocess.SubprocessError) as exc:
                print(f"popup_open: cleaning up: {exc}", file=sys.stderr)
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.panes} agents, {args.opens} opens per mode (ms from the command to the screen)")
    for mode in modes:
        row = result[mode]
        full, first = row["full_table_ms"], row["first_frame_ms"]
        print(
            f"  {mode:8} full table p50 {full['p50']} / p90 {full['p90']} / max {full['max']}"
            f" · first frame p50 {first['p50']} / p90 {first['p90']} / max {first['max']}"
            f" · attaches per open {statistics.mean(row['attaches_per_open']):g} {row['attaches_per_open']}"
        )
        for line in row.get("notice", []) + row.get("troubles", []):
            print(f"           {line}")
        if "idle" in row:
            costs = " · ".join(f"{name} {cost['cpu_pct']}% CPU, {cost['rss_mib']} MiB RSS" for name, cost in row["idle"].items())
            print(f"           idle over {row['idle_seconds']:g} s: {costs}; ended with the service: {row.get('ended_with_service')}")
    if "warm_first_open_ms" in result:
        print(f"  the warm UI's first open (it starts): {result['warm_first_open_ms']} ms")
    if "service_attached_after_s" in result:
        print(f"  the service had every session attached {result['service_attached_after_s']} s after 'serve'")


if __name__ == "__main__":
    main()
