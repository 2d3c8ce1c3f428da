"""The churn soak: a busy day for the tmux server headspace watches, in a few minutes.

    python benchmarks/soak.py [--minutes 20] [--panes 40] [--mode {service,own}] [--no-budgets] [--json]

What it runs, all in private tmux servers under a private TMUX_TMPDIR, with a
throwaway HOME and XDG folders (never the user's tmux, ~/.claude or ~/.config;
every process of the run shares them, so the clients find the run's service
in its own $XDG_RUNTIME_DIR/headspace/service/):

* the **agents' server**: ``--panes`` short-lived fake agents
  (``churn_agent.py``: real recorded Claude screens, 3-40 s lives) in
  windows of eight sessions, coming and going as the agents end and new
  ones start; output floods (about 2 MB/s of lines in 5 s bursts) in three
  panes; a real tmux
  client in a pty attached to it, as the user's own terminal is; and every
  15 s a new session with a **second headspace** in it, the previous one
  killed with its headspace inside;
* ``--mode service`` (the default, as users run headspace): first the
  **resident service** of the agents' server (``python -m headspace_tui -L
  <agents> serve --foreground``, what ``headspace serve`` and a first
  ``headspace`` start in the background), waited for until it has attached
  every session; then **headspace under test**, the real program as its
  client (``python -m headspace_tui -L <agents>``) in a pane of a second
  private server (the user's terminal), and the second headspaces as its
  clients too.  A headspace that says "watching from this headspace alone"
  (the service could not be used) fails the run at once: it would measure
  the other mode;
* ``--mode own``: no service; headspace under test and the second
  headspaces with ``--no-service`` (each its own monitor, attaching every
  session itself), as before the service existed.

What it measures (exit 1 when a check fails):

The harm checks, always counted:

* the agents' tmux server survives: the same pid answering at the end, and
  no tmux segfault in the kernel log (when the kernel log can be read);
* headspace runs throughout, and so does the service (the process started
  here, not one a client started again after it died);
* control-client attaches, counted by tmux itself (a ``client-attached``
  hook, which also names the attaching process): in service mode one per
  session by the service and none by any headspace client, in own mode one
  per session for each headspace that ran; at most ``--attach-limit`` (3)
  more per session, i.e. no re-attach storms;
* nothing of a killed headspace stays attached: at the end, at most one
  control client per session for each process that watches (the service;
  in own mode headspace and the last second headspace);
* every key press reaches the screen within 5 s.

The budgets, counted unless ``--no-budgets`` (then only reported, in
``over_budget``: timing and memory are this machine's, under this load):

* RSS: headspace's (``headspace_rss_*``, the UI) and the service's
  (``service_rss_*``) at the end each within ``--rss-limit`` MB (15) of
  their RSS at minute 2 (of the last third's start in runs shorter than 3
  minutes), and, with ``--rss-rate``, growth an hour after it;
* key to screen: ``?`` typed into the user's terminal (a real tmux client in
  a pty showing headspace's pane) until tmux sends that terminal the help's
  frame, ``?`` again until it sends the main screen's, every 2 s; the p95 of each
  minute under ``--key-limit`` ms (150).

The tests run 1.5 minutes of the service mode with ``--no-budgets``
(``tests/e2e/test_soak.py``): they assert the harm checks only, since they
run beside other tests.  The budgets are this script's:
``nice python benchmarks/soak.py --minutes 5`` (or the 20-minute default).

``soak.py --storm ...`` runs the session storm instead (storm.py: sessions
made and killed every second or two, clients attaching all the time).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.harness.terminal import Terminal  # noqa: E402

CORPUS = REPO / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "120x40"
AGENT = REPO / "benchmarks" / "churn_agent.py"
HELP_MARK = b"headspace keys"  # the help screen's title: drawn when the help opens
MAIN_MARK = b"Waiting for"  # the table's column heading: drawn again when the help closes (the help never says it)
ESCAPES = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[^\[\]()])")
# A flood: bursts of a verbose build's worth of output (about 2 MB a second of lines), 5 s on, 10 s off.
# (A bare ``yes`` is tested on its own, tests/e2e/test_tmux_harmless.py: on 2 cores it would take one whole
# core here with the tmux server, and the soak would measure the machine, not headspace.)
FLOOD_PROGRAM = (
    "import sys, time\n"
    "line = ('soak-flood ' * 12 + '\\n').encode()\n"
    "while True:\n"
    "    end = time.time() + {on}\n"
    "    while time.time() < end:\n"
    "        sys.stdout.buffer.write(line * 160); sys.stdout.flush(); time.sleep(0.01)\n"
    "    time.sleep({off})\n"
)
WORK_SESSIONS = 8  # the agents' sessions (the second headspace's session comes and goes besides)
ALONE = "watching from this headspace alone"  # what a headspace says when it could not use the service (cli/launch.py)
ALONE_LOGGED = "the resident service could not be used"  # what it logs then


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def service_err(work: Path) -> str:
    """The end of the service's stderr (``work/service.err``): what a benchmark says when the service failed it."""
    try:
        return (work / "service.err").read_text(errors="replace")[-2000:]
    except OSError:
        return ""


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def rss_parts_mb(pid: int) -> dict[str, float]:
    """The resident set split as the kernel counts it: anonymous (the heap, stacks), file-backed
    (library and code pages faulted in as code paths first run) and shared memory.  A climb in the
    file-backed part is pages of the program read in, not memory kept; the split says which."""
    parts: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("RssAnon", "RssFile", "RssShmem"):
                parts[name[3:].lower()] = int(value.split()[0]) / 1024
    except (OSError, ValueError, IndexError):
        return {}
    return parts


def cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def kernel_segfaults() -> list[str] | None:
    """tmux segfault lines in the kernel log, or None when it cannot be read here."""
    proc = subprocess.run(["dmesg"], capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    return [line for line in proc.stdout.splitlines() if "tmux" in line and "segfault" in line]


def private_env(work: Path, pythonpath: str) -> dict[str, str]:
    """The environment every process of a soak runs in: a throwaway HOME, XDG folders and TMUX_TMPDIR under ``work``.

    Never the user's tmux, ~/.claude or ~/.config; storm.py uses it too.
    """
    home = work / "home"
    runtime = work / "run"
    for folder in (home, runtime, work / "tmux"):
        folder.mkdir(mode=0o700)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_RUNTIME_DIR": str(runtime),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "TMUX_TMPDIR": str(work / "tmux"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "PYTHONPATH": pythonpath,
    }


def start_hogs(count: int, env: dict[str, str], nice: int = 0) -> list[subprocess.Popen]:
    """``count`` CPU-bound processes: the machine loaded on purpose (headspace falling behind is what is measured).

    ``nice``: their niceness; at 19 they take only what nothing else wants (a machine
    kept busy whatever runs beside it, at almost no cost to what does).

    Each is a session of its own, and where the kernel groups the processes of
    a session for scheduling (``sched_autogroup_enabled``) a niceness counts
    only inside that group: the group itself then takes a full share beside
    everything else.  So the group is given the same niceness
    (``/proc/PID/autogroup``, sched(7)); without it a nice-19 hog took half of
    a two-core machine from the tests running beside the storm.
    """
    prefix = ["nice", "-n", str(nice)] if nice else []
    hogs = [subprocess.Popen([*prefix, sys.executable, "-S", "-c", "while True: pass"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True) for _ in range(count)]
    for hog in hogs if nice else ():
        try:
            Path(f"/proc/{hog.pid}/autogroup").write_text(str(nice))
        except OSError:
            pass  # no autogroups (a kernel without them, or turned off): the niceness alone holds it back
    return hogs


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for hog in hogs:
        hog.kill()
        hog.wait()


def slope_per_hour(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, MB) points, in MB per hour (robust to one sample's allocator noise)."""
    if len(points) < 3:
        return None
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return None
    return sum((t - mean_t) * (v - mean_v) for t, v in points) / var * 3600


def control_attaches(log: Path) -> dict[str, int]:
    """Control-mode attaches per session, as tmux's own ``client-attached`` hook wrote them to ``log`` ("<session> <control mode> [<client pid>]" lines)."""
    counts: dict[str, int] = {}
    for session, _ in control_attach_lines(log):
        counts[session] = counts.get(session, 0) + 1
    return counts


def control_attach_lines(log: Path) -> list[tuple[str, int | None]]:
    """Each control-mode attach in ``log``: (session id, the attaching process's pid, when the hook wrote it).

    headspace attaches its control clients itself and identifies them with
    its own pid (tmux/direct_attach.py), so the pid says which headspace, or
    the service, attached.
    """
    try:
        text = log.read_text()
    except OSError:
        return []
    attaches: list[tuple[str, int | None]] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) in (2, 3) and parts[1] == "1":  # control-mode clients: headspaces
            attaches.append((parts[0], int(parts[2]) if len(parts) == 3 and parts[2].isdigit() else None))
    return attaches


def segfaults_of(lines: list[str] | None, *pids: int) -> list[str] | None:
    """The segfault lines of the tmux servers with these pids (the kernel names each ``server[PID]:``)."""
    return None if lines is None else [line for line in lines if any(f"[{pid}]:" in line for pid in pids)]


class Server:
    """One private tmux server (``-L name`` under the soak's own TMUX_TMPDIR)."""

    def __init__(self, name: str, env: dict[str, str]) -> None:
        self.name = name
        self.env = env

    def run(self, *args: str, check: bool = False) -> str:
        proc = subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True, env=self.env, timeout=20)
        if check and proc.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def pid(self) -> int | None:
        out = self.run("display-message", "-p", "#{pid}").strip()
        return int(out) if out.isdigit() else None

    def kill(self) -> None:
        socket = Path(self.env["TMUX_TMPDIR"]) / f"tmux-{os.getuid()}" / self.name
        self.run("kill-server")
        socket.unlink(missing_ok=True)  # tmux 3.3a leaves it behind


class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.work = Path(tempfile.mkdtemp(prefix="headspace-soak-"))
        self.env = private_env(self.work, str(REPO))
        self.hogs: list[subprocess.Popen] = []
        for name in ("TEXTUAL_FPS", "PYTHONASYNCIODEBUG", "HS_GCLOG", "HS_GCMODE"):  # to compare frame rates, to find slow callbacks
            if name in os.environ:
                self.env[name] = os.environ[name]
        tag = f"{os.getpid()}"
        self.agents = Server(f"soak-agents-{tag}", self.env)
        self.ui = Server(f"soak-ui-{tag}", self.env)
        self.attach_log = self.work / "attaches"
        self.stop = threading.Event()
        self.seq = 0
        self.sessions_seen: set[str] = set()
        self.keys: list[tuple[float, float]] = []  # (at, ms)
        self.key_misses = 0
        self.samples: list[dict] = []
        self.second: list[str] = []  # sessions made for a second headspace
        self.second_pids: list[int] = []  # their headspaces (``exec``: the pane's own process)
        self.service: subprocess.Popen | None = None  # the resident service (service mode)
        self.service_settled_s: float | None = None  # how long it took to attach every session
        self.alone: list[str] = []  # headspaces that watched on their own in service mode: the run measures the wrong mode
        self.failures: list[str] = []
        self.terminal: Terminal | None = None
        self.user: Terminal | None = None  # the user's terminal showing headspace: keys are typed into it
        self.headspace_pid: int | None = None
        self.clients_at_end = self.sessions_at_end = 0
        self.server_pid = self.ui_pid = 0  # the two tmux servers' pids (their segfaults are this run's)

    # -- the agents' world ---------------------------------------------------------------
    def agent_command(self) -> str:
        self.seq += 1
        life = self.rng.uniform(3.0, 40.0)
        return f"exec -a claude {sys.executable} -S {AGENT} {CORPUS} {self.seq} {life:.1f}"

    def start_world(self) -> None:
        a = self.agents
        a.run("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "120", "-y", "40", check=True)
        a.run("set-option", "-g", "status", "off")
        a.run("set-option", "-g", "exit-empty", "off")
        # tmux counts every client that attaches, ours and the second headspace's.
        # The client's pid: headspace's direct attach identifies with its own, which says which process attached.
        a.run("set-hook", "-g", "client-attached", f"run-shell -b \"echo '#{{session_id}} #{{client_control_mode}} #{{client_pid}}' >> {self.attach_log}\"", check=True)
        for n in range(3 if not self.args.no_floods else 0):  # output floods: bursts of yes, staggered
            on, off = 5, 10
            a.run("new-window", "-d", "-t", "main", f"sleep {n * 5}; exec {sys.executable} -S -c {shlex.quote(FLOOD_PROGRAM.format(on=on, off=off))}")
        for n in range(WORK_SESSIONS):  # where the agents come and go; a shell-like first window keeps each open
            a.run("new-session", "-d", "-s", f"w-{n}", "-x", "120", "-y", "40", "sleep 100000")
        # the user's own terminal, attached to the agents' server
        if not self.args.no_terminal:
            self.terminal = Terminal(_Named(a), "main", 120, 40, keep=False)
        for _ in range(self.args.panes):
            self.spawn_agent()

    def agent_sessions(self) -> list[str]:
        return [s for s in self.agents.run("list-sessions", "-F", "#{session_name}").split() if s.startswith("w-")]

    def spawn_agent(self) -> None:
        """A new agent in a window of one of the work sessions (agents come and go; the sessions stay)."""
        self.agents.run("new-window", "-d", "-t", f"w-{self.rng.randrange(WORK_SESSIONS)}", self.agent_command())

    def agent_panes(self) -> int:
        out = self.agents.run("list-panes", "-a", "-F", "#{session_name}")
        return sum(1 for name in out.split() if name.startswith("w-"))

    def churn(self) -> None:
        while not self.stop.wait(0.5):
            for _ in range(max(0, self.args.panes - self.agent_panes())):
                self.spawn_agent()
            for line in self.agents.run("list-sessions", "-F", "#{session_id}").split():
                self.sessions_seen.add(line)

    def second_headspace(self) -> None:
        """Every 15 s: kill the last second headspace's session (it inside), start a new one."""
        n = 0
        while not self.stop.wait(0 if n == 0 else 15.0):
            if self.second:
                self.agents.run("kill-session", "-t", self.second[-1])
            n += 1
            name = f"hs2-{n}"
            self.second.append(name)
            pid = self.agents.run("new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", name, "-x", "100", "-y", "30", self.args.second_command).strip()
            if pid.isdigit():
                self.second_pids.append(int(pid))

    # -- the resident service (service mode) -------------------------------------------------
    def start_service(self) -> None:
        """The agents' server's resident service, as ``headspace serve`` runs it (``serve --foreground``, here our child so
        that its pid, RSS and end are known); waited for until it has attached every session (tmux's own count)."""
        with open(self.work / "service.err", "wb") as err:  # the child keeps its own copy
            self.service = subprocess.Popen(
                [sys.executable, "-m", "headspace_tui", "-L", self.agents.name, "serve", "--foreground"],
                env=self.env,
                cwd=str(self.work),
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
                start_new_session=True,
            )
        began = time.monotonic()
        while time.monotonic() - began < 60 and self.service.poll() is None:
            attached = {session for session, pid in control_attach_lines(self.attach_log) if pid == self.service.pid}
            sessions = set(self.agents.run("list-sessions", "-F", "#{session_id}").split())
            if sessions and sessions <= attached:
                self.service_settled_s = round(time.monotonic() - began, 1)
                time.sleep(2.0)  # its first reads of every pane done, before anything is measured
                return
            time.sleep(0.2)
        if self.service.poll() is not None:
            raise RuntimeError(f"the service ended at once ({self.service.returncode}): {self.service_err()}")
        raise RuntimeError(f"the service did not attach every session in 60 s: {self.service_err()}")

    def service_err(self) -> str:
        return service_err(self.work)

    def service_running(self) -> bool:
        return self.service is not None and self.service.poll() is None

    def logged_alone(self) -> list[str]:
        """The lines of headspace's log (its rotated copies too) where a headspace could not use the service."""
        log = self.work / "home" / ".local" / "state" / "headspace" / "headspace.log"
        lines: list[str] = []
        for path in sorted(log.parent.glob("headspace.log*")) if log.parent.is_dir() else []:
            try:
                lines += [line.strip() for line in path.read_text(errors="replace").splitlines() if ALONE_LOGGED in line]
            except OSError:
                pass
        return lines

    # -- headspace under test -------------------------------------------------------------
    def start_headspace(self) -> None:
        self.ui.run("-f", "/dev/null", "new-session", "-d", "-s", "ui", "-x", "100", "-y", "30", f"exec {self.args.headspace_command} -L {self.agents.name}", check=True)
        self.ui.run("set-option", "-g", "status", "off")
        self.ui_pid = self.ui.pid() or 0
        pid = self.ui.run("display-message", "-p", "-t", "ui", "#{pane_pid}").strip()
        self.headspace_pid = int(pid)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "need you" not in self.screen() and "agents" not in self.screen():
            time.sleep(0.2)
        self.user = Terminal(_Named(self.ui), "ui", 100, 30, keep=True)
        if self.args.mode == "service":
            # It says so in a notice for 15 s (a toast, its lines wrapped anywhere) and in its log.
            time.sleep(1.0)
            seen = " ".join(self.screen().replace("▌", " ").replace("▐", " ").split())
            if ALONE in seen or self.logged_alone():
                self.alone.append(f"headspace under test: {ALONE} ({'; '.join(self.logged_alone()) or seen[:300]})")

    def key_to_screen(self, key: bytes, mark: bytes) -> float | None:
        """Type ``key`` into the user's terminal; ms until what tmux sends that terminal draws ``mark``, or None after 5 s.

        As the user meets it: the key goes in where they type it, through their
        tmux client, and the time ends when their terminal is sent the frame
        (Textual writes a frame in one piece).  Nothing is forked per sample:
        a fork of tmux per key and per look, as before, put the machine's fork
        time under load into every sample (about 10 ms of the p50 here).
        Escape sequences are taken out before looking, so a mark that tmux
        drew in two runs (a cursor move between them) is still found.
        """
        assert self.user is not None
        self.user.take()
        started = time.perf_counter()
        self.user.type(key)
        seen = b""
        while time.perf_counter() - started < 5.0:
            data = self.user.take()
            if data:
                seen += data
                if mark in ESCAPES.sub(b"", seen):
                    return (time.perf_counter() - started) * 1000
            time.sleep(0.002)
        return None

    def screen(self) -> str:
        return self.ui.run("capture-pane", "-p", "-t", "ui")

    def press_keys(self) -> None:
        while not self.stop.wait(2.0):
            # ``?`` opens the help and closes it again (Esc would add the terminal parser's wait
            # for the rest of an escape sequence to every second sample).
            for key, mark in ((b"?", HELP_MARK), (b"?", MAIN_MARK)):
                ms = self.key_to_screen(key, mark)
                if ms is None:
                    self.key_misses += 1
                    self.ui.run("send-keys", "-t", "ui", "Escape")
                    break
                self.keys.append((time.monotonic(), ms))

    # -- measuring -------------------------------------------------------------------------
    def sample(self, started: float) -> None:
        pid = self.headspace_pid or 0
        cpu = cpu_seconds(pid)
        service = self.service.pid if self.service_running() else 0  # type: ignore[union-attr]
        self.samples.append(
            {
                "t": round(time.monotonic() - started, 1),
                "headspace_rss_mb": rss_mb(pid),
                "headspace_rss_parts_mb": rss_parts_mb(pid),
                "headspace_cpu_s": cpu,
                "service_rss_mb": rss_mb(service) if service else None,
                "service_rss_parts_mb": rss_parts_mb(service) if service else {},
                "service_cpu_s": cpu_seconds(service) if service else None,
                "tmux_pid": self.agents.pid(),
                "tmux_rss_mb": rss_mb(self.server_pid),
                "agents": self.agent_panes(),
            }
        )

    def part_slopes(self, mark: float, who: str = "headspace") -> dict[str, float | None]:
        """Growth an hour after the mark of each part of the resident set (anonymous, file-backed,
        shared) of ``who`` (headspace or service), so that a failing total says where it grew."""
        slopes: dict[str, float | None] = {}
        for part in ("anon", "file", "shmem"):
            points = [(x["t"], x[f"{who}_rss_parts_mb"][part]) for x in self.samples if x["t"] >= mark and part in x.get(f"{who}_rss_parts_mb", {})]
            slope = slope_per_hour(points)
            slopes[part] = slope if slope is None else round(slope, 2)
        return slopes

    def run(self) -> dict:
        before = kernel_segfaults()
        self.start_world()
        self.server_pid = self.agents.pid() or 0
        if self.args.mode == "service":
            self.start_service()
        if not self.args.no_headspace:
            self.start_headspace()
        self.hogs = start_hogs(self.args.hogs, self.env)
        started = time.monotonic()
        loops = [self.churn] + ([] if self.args.no_second else [self.second_headspace]) + ([] if self.args.no_headspace else [self.press_keys])
        threads = [threading.Thread(target=f, daemon=True) for f in loops]
        for thread in threads:
            thread.start()
        duration = 0 if self.alone else self.args.minutes * 60  # a headspace on its own measures the other mode: fail at once
        while True:
            time.sleep(5.0)
            self.sample(started)
            if self.samples[-1]["tmux_pid"] != self.server_pid or (self.headspace_pid and self.samples[-1]["headspace_rss_mb"] is None):
                break  # the server died, or headspace did: nothing more to learn
            if self.service is not None and not self.service_running():
                break  # the service died
            if time.monotonic() - started >= duration:
                break
        self.stop.set()
        for thread in threads:
            thread.join(timeout=10)
        self.clients_at_end = self.agents.run("list-clients", "-F", "#{client_control_mode}").split().count("1")
        self.sessions_at_end = len(self.agents.run("list-sessions", "-F", "#{session_id}").split())
        return self.result(started, before)

    def cpu_pct(self, who: str) -> float | None:
        first, end = (self.samples[0], self.samples[-1]) if self.samples else ({}, {})
        if first.get(f"{who}_cpu_s") is None or end.get(f"{who}_cpu_s") is None:
            return None
        return round(100 * (end[f"{who}_cpu_s"] - first[f"{who}_cpu_s"]) / max(1.0, end["t"] - first["t"]), 1)

    def rss_report(self, who: str, mark: float) -> dict:
        """``<who>_rss_*``: the RSS of headspace (the UI) or of the service at the mark and the end, by minute, and growth after the mark."""
        key = f"{who}_rss_mb"
        at_mark = next((s for s in self.samples if s["t"] >= mark), {})
        growth = slope_per_hour([(x["t"], x[key]) for x in self.samples if x["t"] >= mark and x.get(key)])
        return {
            f"{key}_at_mark": at_mark.get(key),
            f"{key}_end": self.samples[-1].get(key) if self.samples else None,
            f"{key}_by_minute": {str(int(x["t"] // 60)): round(x[key], 1) for x in self.samples if x.get(key)},
            f"{key}_per_hour": growth if growth is None else round(growth, 1),
            f"{who}_rss_parts_mb_per_hour": self.part_slopes(mark, who),
            f"{who}_rss_anon_mb_by_minute": {str(int(x["t"] // 60)): round(x[f"{who}_rss_parts_mb"]["anon"], 1) for x in self.samples if "anon" in x.get(f"{who}_rss_parts_mb", {})},
        }

    def result(self, started: float, before: list[str] | None) -> dict:
        after = kernel_segfaults()
        new_segfaults = None if before is None or after is None else after[len(before) :]
        # This run's servers only: another soak beside it (the loaded pair) ends its own servers with kill-server,
        # and tmux 3.3a now and then segfaults in that teardown, which says nothing of this run.
        ours = segfaults_of(new_segfaults, self.server_pid, self.ui_pid)
        end = self.samples[-1] if self.samples else {}
        service_mode = self.args.mode == "service"
        mark = 120.0 if self.args.minutes >= 3 else self.args.minutes * 40.0
        per_minute: dict[int, list[float]] = {}
        for at, ms in self.keys:
            per_minute.setdefault(int((at - started) // 60), []).append(ms)
        minute_p95 = {str(m): round(percentile(v, 95), 1) for m, v in sorted(per_minute.items())}
        attaches = control_attaches(self.attach_log)
        # Who attached, by the pid each control client identified with.
        by_pid: dict[int | None, int] = {}
        for _, pid in control_attach_lines(self.attach_log):
            by_pid[pid] = by_pid.get(pid, 0) + 1
        service_pid = self.service.pid if self.service is not None else None
        by_service = by_pid.get(service_pid, 0) if service_pid else None
        by_ui = by_pid.get(self.headspace_pid, 0) if self.headspace_pid else 0
        by_second = sum(by_pid.get(pid, 0) for pid in self.second_pids)
        by_others = sum(n for pid, n in by_pid.items() if pid not in {service_pid, self.headspace_pid, *self.second_pids})
        alone_logged = self.logged_alone() if service_mode else []
        result = {
            "mode": self.args.mode,
            "budgets": self.args.budgets,
            "minutes": self.args.minutes,
            "ran_s": end.get("t"),
            "tmux_survived": end.get("tmux_pid") == self.server_pid,
            "tmux_segfaults": new_segfaults,  # every new tmux segfault line (other tmux servers on this machine too)
            "tmux_segfaults_ours": ours,  # those of this run's two servers (by pid)
            "tmux_rss_mb": [self.samples[0]["tmux_rss_mb"] if self.samples else None, end.get("tmux_rss_mb")],
            "headspace_running": end.get("headspace_rss_mb") is not None,
            **self.rss_report("headspace", mark),
            "service_running": self.service_running() if service_mode else None,
            "service_settled_s": self.service_settled_s,
            **(self.rss_report("service", mark) if service_mode else {}),
            "rss_mark_s": mark,
            "hogs": self.args.hogs,
            "load_average": [round(x, 1) for x in os.getloadavg()],
            "headspace_cpu_pct": self.cpu_pct("headspace"),
            "service_cpu_pct": self.cpu_pct("service") if service_mode else None,
            "key_ms_p50": round(percentile([ms for _, ms in self.keys], 50), 1),
            "key_ms_p95": round(percentile([ms for _, ms in self.keys], 95), 1),
            "key_ms_p95_by_minute": minute_p95,
            "key_presses": len(self.keys),
            "key_misses": self.key_misses,
            "sessions_seen": len(self.sessions_seen) + len(self.second),
            "second_headspaces": len(self.second),
            "control_attaches": sum(attaches.values()),
            "control_attaches_max_per_session": max(attaches.values(), default=0),
            "control_attaches_by_service": by_service,
            "control_attaches_by_headspace": by_ui,  # the UI under test
            "control_attaches_by_second_headspaces": by_second,
            "control_attaches_by_others": by_others,
            "headspaces_alone": len(self.alone) + len(alone_logged),  # service mode: headspaces that could not use the service
            "agents_started": self.seq,
            "control_clients_at_end": self.clients_at_end,
            "sessions_at_end": self.sessions_at_end,
        }
        fails = []  # harm: counted always
        if not result["tmux_survived"]:
            fails.append("the agents' tmux server died")
        if ours:
            fails.append(f"tmux segfaulted: {ours}")
        if not result["headspace_running"]:
            fails.append("headspace is not running")
        if service_mode and not result["service_running"]:
            fails.append(f"the service is not running (exit status {self.service.returncode if self.service else None}): {self.service_err()[-300:]}")
        fails += self.alone
        if alone_logged:
            fails.append(f"{len(alone_logged)} headspaces watched on their own, not through the service: {alone_logged[-1]}")
        if self.key_misses:
            fails.append(f"{self.key_misses} key presses never reached the screen in 5 s")
        if service_mode:
            # The service attaches each session once; its clients attach nothing.
            if by_ui or by_second or by_others:
                fails.append(f"control clients attached by others than the service: {by_ui} by headspace, {by_second} by second headspaces, {by_others} by other processes")
            watchers = 1
        else:
            watchers = 1 + len(self.second)  # each headspace that ran attaches each session it saw once
        if result["control_attaches_max_per_session"] > watchers + self.args.attach_limit:
            fails.append(f"a session was attached {result['control_attaches_max_per_session']} times by {watchers} watching processes")
        # At the end: a client per session for each process still watching (the service; or headspace and the last
        # second headspace).  More are clients of killed headspaces left attached.
        alive_watchers = 1 if service_mode else 2
        if self.clients_at_end > alive_watchers * self.sessions_at_end:
            fails.append(f"{self.clients_at_end} control clients attached to {self.sessions_at_end} sessions: killed headspaces left theirs")
        over = []  # the budgets: this machine's timing and memory, counted only with --budgets
        for who in ("headspace", "service") if service_mode else ("headspace",):
            at, last, growth = result[f"{who}_rss_mb_at_mark"], result[f"{who}_rss_mb_end"], result[f"{who}_rss_mb_per_hour"]
            if at and last and last - at > self.args.rss_limit:
                over.append(f"{who} grew {last - at:.1f} MB after minute {mark / 60:g} (limit {self.args.rss_limit})")
            if self.args.rss_rate is not None and (growth is None or growth > self.args.rss_rate):
                over.append(f"{who}'s RSS grew {growth} MB an hour after minute {mark / 60:g} (limit {self.args.rss_rate})")
        worst = max((v for v in minute_p95.values()), default=float("nan"))
        if not worst <= self.args.key_limit:
            over.append(f"key to screen p95 {worst} ms in some minute (limit {self.args.key_limit})")
        result["over_budget"] = over
        result["failures"] = fails + (over if self.args.budgets else [])
        return result

    def close(self) -> None:
        self.stop.set()
        stop_hogs(self.hogs)
        for terminal in (self.terminal, self.user):
            if terminal is not None:
                terminal.close()
        for server in (self.ui, self.agents):
            try:
                server.kill()
            except (OSError, subprocess.SubprocessError):
                pass
        if self.service is not None and self.service.poll() is None:  # it ends with its tmux server; if not, ours to end
            try:
                self.service.wait(10)
            except subprocess.TimeoutExpired:
                self.service.kill()
                self.service.wait(5)
        log = self.work / "home" / ".local" / "state" / "headspace" / "headspace.log"
        if self.args.keep_log and log.exists():
            shutil.copy(log, self.args.keep_log)
        shutil.rmtree(self.work, ignore_errors=True)


class _Named:
    """What ``Terminal`` needs of a server: its -L name and environment."""

    def __init__(self, server: Server) -> None:
        self.name = server.name
        self.env = server.env


def main() -> int:
    if sys.argv[1:2] == ["--storm"]:  # the session storm (storm.py): ``soak.py --storm --arm ...``
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import storm

        return storm.main(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--panes", type=int, default=40)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--rss-limit", type=float, default=15.0)
    parser.add_argument("--rss-rate", type=float, help="MB an hour headspace's RSS may grow after minute 2 (least squares over the samples); off by default")
    parser.add_argument("--hogs", type=int, default=0, help="CPU-bound processes beside the churn (a loaded machine, where headspace falls behind)")
    parser.add_argument("--key-limit", type=float, default=150.0)
    parser.add_argument("--attach-limit", type=int, default=3, help="control attaches per session beyond one per headspace that saw it")
    parser.add_argument("--mode", choices=("service", "own"), default="service", help="service: the resident service watches, the headspaces are its clients; own: each with --no-service")
    parser.add_argument("--budgets", action=argparse.BooleanOptionalAction, default=True, help="count the key-to-screen and RSS limits as failures (--no-budgets: report them only)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep-log", metavar="FILE", help="copy headspace's log file here at the end")
    # to find what provokes a tmux crash: leave one part of the world out
    parser.add_argument("--no-headspace", action="store_true", help="no headspace under test")
    parser.add_argument("--no-second", action="store_true", help="no second headspace started and killed")
    parser.add_argument("--no-terminal", action="store_true", help="no user client attached")
    parser.add_argument("--no-floods", action="store_true", help="no output floods")
    parser.add_argument("--headspace-command", help="the headspace under test (e.g. under a memory tracer); -L <server> is added (default: python -m headspace_tui, with --no-service in own mode)")
    parser.add_argument("--second-command", help="what runs in the session killed every 15 s (default: exec python -m headspace_tui, with --no-service in own mode)")
    args = parser.parse_args()
    own = " --no-service" if args.mode == "own" else ""
    args.headspace_command = args.headspace_command or f"{sys.executable} -m headspace_tui{own}"
    args.second_command = args.second_command or f"exec {sys.executable} -m headspace_tui{own}"
    if shutil.which("tmux") is None:
        print("soak.py: tmux is not installed", file=sys.stderr)
        return 1
    soak = Soak(args)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    try:
        result = soak.run()
    finally:
        soak.close()
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>34}  {value}")
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
