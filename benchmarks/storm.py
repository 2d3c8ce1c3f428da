"""The session storm: tmux 3.3a survives headspace where plain ``tmux -C`` clients kill it.

    python benchmarks/storm.py --arm {service,plain,direct,none} [--minutes 10] [--hogs 3] [--seed N] [--json]
    python benchmarks/soak.py --storm --arm ...          (the same)

Why: tmux before 3.7 crashes its server ("segfault at 20", ``control_write``
on a NULL control state) when a session or window notification reaches a
control client that is still identifying.  The stock ``tmux -C`` client
identifies in three socket writes and the server goes round its event loop
between them; headspace attaches its control clients itself, in one write
after the two descriptors (headspace_tui/tmux/direct_attach.py), which
leaves no such moment.  This storm makes sessions come and go as fast as a
busy user's scripts do, on a loaded machine, with clients attaching all the
time, and says whether the server lived.

The world, all in one private tmux server (``-L agents`` under a private
TMUX_TMPDIR, started with ``-f /dev/null``; a throwaway HOME, XDG folders and
CLAUDE_CONFIG_DIR; never the user's tmux, ~/.claude or ~/.config):

* 5 base sessions of 4 windows, each running a fake Claude (churn_agent.py,
  real recorded screens; each agent lives 3-40 s and another starts in its
  window);
* the storm, one thread: a new session every 0.7-2.3 s running ``sleep 30``,
  killed 0.5-1.5 s later (from a timer); every 10th event a window of a base
  session is killed and another made there instead; every 20th a base
  session is killed and made again (same name, 4 fresh agents);
* a "popup" every 10 s: a session running the arm's popup command, whose
  process is SIGKILLed 5-8 s later and the session killed (a popup opened and
  closed);
* ``--hogs`` CPU-bound processes beside it (the machine loaded on purpose); ``--hog-nice``
  their niceness.

The arms, i.e. what is attached to the agents' server:

* ``service``: headspace's resident service (``python -m headspace_tui -L
  agents serve --foreground``); the popup is headspace's full-screen UI (a
  thin client of the service).  Its RSS is sampled every 5 s.
* ``plain``: no headspace; a stock ``tmux -C attach-session -f ignore-size``
  client per session, each closed and attached again every second.  Popup:
  ``sleep 30``.  This is the comparison: it is expected to kill tmux 3.3a.
* ``direct``: as ``plain``, but every client attached with headspace's
  ``open_direct`` (the one-write identify).
* ``none``: no client at all (tmux alone under the storm).

It reports whether the server survived (same pid answering at the end; when
it died, after how many seconds, the kernel's segfault line and the storm's
last events), what the storm did, tmux's own count of control-client
attaches (a ``client-attached`` hook), the service's RSS by minute, growth
per hour after minute 2 and CPU, and the load average.  Exit status 1 when
tmux died in the ``service``, ``direct`` or ``none`` arm or the service died;
the ``plain`` arm exits 0 either way.

headspace runs from a copy of headspace_tui/ taken at the start (so edits in
the working tree during a long run change nothing); ``--live-code`` runs the
working tree itself.  CI runs 1 minute of the ``service`` arm, with one hog
(tests/e2e/test_storm.py).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from soak import AGENT, CORPUS, Server, control_attaches, cpu_seconds, kernel_segfaults, percentile, private_env, rss_mb, segfaults_of, service_err, slope_per_hour, start_hogs, stop_hogs  # noqa: E402

ARMS = ("service", "plain", "direct", "none")
SERVER = "agents"  # the -L name: private, since TMUX_TMPDIR is ours
BASE_SESSIONS, BASE_WINDOWS = 5, 4
STORM_GAP = (0.7, 2.3)  # s between storm events
STORM_LIFE = (0.5, 1.5)  # s a storm session lives
POPUP_EVERY, POPUP_LIFE = 10.0, (5.0, 8.0)
REATTACH_EVERY = 1.0  # plain and direct: each session's client closed and attached again
SAMPLE_EVERY = 5.0
TMUX_ERRORS = (OSError, subprocess.SubprocessError, RuntimeError)


def alive(pid: int | None) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    if not pid:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


class Storm:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.storm_rng = random.Random(args.seed)
        self.popup_rng = random.Random(args.seed * 7919 + 1)
        self.agent_rng = random.Random(args.seed * 104729 + 2)
        self.rng_lock = threading.Lock()
        self.work = Path(tempfile.mkdtemp(prefix="headspace-storm-"))
        self.code = REPO
        if not args.live_code:  # a copy of the code as it is now: the working tree may change under a long run
            self.code = self.work / "code"
            # With its compiled modules (copy2 keeps each source's time, so they stay valid): the service and every
            # popup would otherwise compile the whole package again, PYTHONDONTWRITEBYTECODE below keeping none.
            shutil.copytree(REPO / "headspace_tui", self.code / "headspace_tui")
            if (REPO / "themes").is_dir():
                shutil.copytree(REPO / "themes", self.code / "themes")  # found beside the package (shared/theme_files.py)
        self.env = private_env(self.work, os.pathsep.join(dict.fromkeys([str(self.code), str(REPO)])))
        self.env["SHELL"] = shutil.which("bash") or "/bin/sh"  # the agents' windows use bash's ``exec -a``, as soak.py's do
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        if args.arm == "service" and args.attach != "auto":
            self.env["HEADSPACE_TMUX_ATTACH"] = args.attach
        self.marker = f"TMUX_TMPDIR={self.env['TMUX_TMPDIR']}"  # every process of ours carries it: the last sweep finds them by it
        self.agents = Server(SERVER, self.env)
        self.socket = str(self.work / "tmux" / f"tmux-{os.getuid()}" / SERVER)
        self.attach_log = self.work / "attaches"
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.timers: list[threading.Timer] = []
        self.timers_lock = threading.Lock()
        self.events: collections.deque[tuple[float, str]] = collections.deque(maxlen=60)
        self.started = time.monotonic()
        self.seq = 0
        self.counts = {"sessions_made": 0, "storm_sessions_killed": 0, "popups_opened": 0, "popups_closed": 0, "base_sessions_remade": 0, "windows_remade": 0, "tmux_errors": 0}
        self.clients_attached = 0
        self.attach_failures = 0
        self.samples: list[dict] = []
        self.hogs: list[subprocess.Popen] = []
        self.service: subprocess.Popen | None = None
        self.plain: dict[str, subprocess.Popen] = {}
        self.closing: list[tuple[float, subprocess.Popen]] = []
        self.server_pid: int | None = None
        self.died_at: float | None = None
        self.service_ended_at: float | None = None
        self.interrupted = False

    # -- small helpers -----------------------------------------------------------------------
    def now(self) -> float:
        return round(time.monotonic() - self.started, 2)

    def note(self, text: str) -> None:
        self.events.append((self.now(), text))

    def tmux(self, *args: str) -> str:
        """A tmux command against the agents' server; "" when it fails (the storm goes on)."""
        try:
            return self.agents.run(*args)
        except TMUX_ERRORS:
            self.counts["tmux_errors"] += 1
            return ""

    def later(self, delay: float, fn) -> None:
        timer = threading.Timer(delay, fn)
        timer.daemon = True
        with self.timers_lock:
            self.timers = [t for t in self.timers if t.is_alive()]
            self.timers.append(timer)
        timer.start()

    def session_ids(self) -> list[str]:
        return self.tmux("list-sessions", "-F", "#{session_id}").split()

    def progress(self, text: str) -> None:
        print(f"storm[{self.args.arm} seed {self.args.seed}] {text}", file=sys.stderr, flush=True)

    # -- the world -------------------------------------------------------------------------
    def agent_command(self) -> str:
        """A window's fake Claude: an agent that lives 3-40 s, and another after it, in the same window."""
        with self.rng_lock:
            self.seq += 1
            seq, life = self.seq, self.agent_rng.uniform(3.0, 40.0)
        return f"n={seq}; while :; do (exec -a claude {sys.executable} -S {AGENT} {CORPUS} $n {life:.1f}); n=$((n+100000)); sleep 0.2; done"

    def make_base(self, k: int) -> None:
        name = f"base-{k}"
        self.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", self.agent_command())
        for _ in range(BASE_WINDOWS - 1):
            self.tmux("new-window", "-d", "-t", f"={name}:", self.agent_command())

    def start_world(self) -> None:
        a = self.agents
        a.run("-f", "/dev/null", "new-session", "-d", "-s", "base-0", "-x", "120", "-y", "40", self.agent_command(), check=True)
        a.run("set-option", "-g", "status", "off")
        a.run("set-option", "-g", "exit-empty", "off")
        # tmux counts every client that attaches; the control-mode ones are ours
        a.run("set-hook", "-g", "client-attached", f"run-shell -b \"echo '#{{session_id}} #{{client_control_mode}}' >> {self.attach_log}\"", check=True)
        for _ in range(BASE_WINDOWS - 1):
            self.tmux("new-window", "-d", "-t", "=base-0:", self.agent_command())
        for k in range(1, BASE_SESSIONS):
            self.make_base(k)
        self.server_pid = a.pid()
        if not self.server_pid:
            raise RuntimeError("the agents' tmux server did not start")

    # -- the storm -------------------------------------------------------------------------
    def storm(self) -> None:
        n = 0
        while not self.stop.wait(self.storm_rng.uniform(*STORM_GAP)):
            n += 1
            if n % 20 == 0:
                k = self.storm_rng.randrange(BASE_SESSIONS)
                self.note(f"kill-session base-{k} (remade)")
                self.tmux("kill-session", "-t", f"=base-{k}")
                self.make_base(k)
                self.note(f"made base-{k} again")
                self.counts["base_sessions_remade"] += 1
                self.counts["sessions_made"] += 1
            elif n % 10 == 0:
                k = self.storm_rng.randrange(BASE_SESSIONS)
                windows = self.tmux("list-windows", "-t", f"=base-{k}:", "-F", "#{window_id}").split()
                if windows:
                    victim = self.storm_rng.choice(windows)
                    self.note(f"kill-window {victim} of base-{k}")
                    self.tmux("kill-window", "-t", victim)
                self.tmux("new-window", "-d", "-t", f"=base-{k}:", self.agent_command())
                self.note(f"new-window in base-{k}")
                self.counts["windows_remade"] += 1
            else:
                made = self.tmux("new-session", "-d", "-P", "-F", "#{session_id}", "-s", f"storm-{n}", "-x", "120", "-y", "40", "sleep 30").strip()
                if not made:
                    continue
                self.counts["sessions_made"] += 1
                self.note(f"new-session storm-{n} {made}")
                self.later(self.storm_rng.uniform(*STORM_LIFE), lambda made=made, n=n: self.kill_storm_session(made, n))

    def kill_storm_session(self, session_id: str, n: int) -> None:
        if self.stop.is_set():
            return
        self.note(f"kill-session storm-{n} {session_id}")
        self.tmux("kill-session", "-t", session_id)
        self.counts["storm_sessions_killed"] += 1

    def popup_command(self) -> str:
        if self.args.arm == "service":
            return f"exec {sys.executable} -m headspace_tui -L {SERVER}"
        return "sleep 30"

    def popups(self) -> None:
        n = 0
        while not self.stop.wait(0 if n == 0 else POPUP_EVERY):
            n += 1
            made = self.tmux("new-session", "-d", "-P", "-F", "#{session_id} #{pane_pid}", "-s", f"popup-{n}", "-x", "120", "-y", "40", self.popup_command()).split()
            if len(made) != 2:
                continue
            self.counts["popups_opened"] += 1
            self.note(f"popup-{n} {made[0]} opened")
            self.later(self.popup_rng.uniform(*POPUP_LIFE), lambda made=made, n=n: self.close_popup(made[0], int(made[1]), n))

    def close_popup(self, session_id: str, pid: int, n: int) -> None:
        """What a popup closed does: its process killed (SIGKILL), then its session."""
        if self.stop.is_set():
            return
        self.note(f"popup-{n} {session_id} closed (SIGKILL {pid}, kill-session)")
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        self.tmux("kill-session", "-t", session_id)
        self.counts["popups_closed"] += 1

    # -- the arms ----------------------------------------------------------------------------
    def start_service(self) -> None:
        with open(self.work / "service.err", "wb") as err:  # the child keeps its own copy
            self.service = subprocess.Popen(
                [sys.executable, "-m", "headspace_tui", "-L", SERVER, "serve", "--foreground"],
                env=self.env,
                cwd=str(self.work),
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
                start_new_session=True,
            )
        # started before the storm: wait until it has attached the base sessions (tmux's own count)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.service.poll() is None:
            if len(control_attaches(self.attach_log)) >= BASE_SESSIONS:
                return
            time.sleep(0.2)
        if self.service.poll() is not None:
            raise RuntimeError(f"the service ended at once ({self.service.returncode}): {self.service_err()}")
        self.progress("the service attached fewer than 5 sessions in 60 s; going on")

    def service_err(self) -> str:
        return service_err(self.work)

    def plain_clients(self) -> None:
        while not self.stop.is_set():
            sessions = self.session_ids()
            for sid in list(self.plain):
                if sid not in sessions:
                    self.close_plain(self.plain.pop(sid))
            for sid in sessions:
                if self.stop.is_set():
                    break
                old = self.plain.pop(sid, None)
                if old is not None:
                    self.close_plain(old)
                try:
                    proc = subprocess.Popen(
                        ["tmux", "-L", SERVER, "-C", "attach-session", "-f", "ignore-size", "-t", sid],
                        env=self.env,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                except OSError:
                    self.attach_failures += 1
                    continue
                threading.Thread(target=self.drain, args=(proc,), daemon=True).start()
                self.plain[sid] = proc
                self.clients_attached += 1
            self.reap()
            self.stop.wait(REATTACH_EVERY)

    @staticmethod
    def drain(proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        try:
            while proc.stdout.read1(65536):
                pass
        except (OSError, ValueError):
            pass

    def close_plain(self, proc: subprocess.Popen) -> None:
        try:
            assert proc.stdin is not None
            proc.stdin.close()  # tmux detaches a control client whose input ends
        except OSError:
            pass
        self.closing.append((time.monotonic(), proc))

    def reap(self, grace: float = 5.0) -> None:
        keep = []
        for since, proc in self.closing:
            if proc.poll() is not None:
                continue
            if time.monotonic() - since > grace:
                proc.kill()
                proc.wait()
                continue
            keep.append((since, proc))
        self.closing = keep

    def direct_clients(self) -> None:
        asyncio.run(self._direct_clients())

    async def _direct_clients(self) -> None:
        from headspace_tui.tmux.direct_attach import open_direct  # from the copy of the code (or the working tree)

        pipes: dict = {}
        tasks: set[asyncio.Task] = set()

        def track(coro) -> None:
            task = asyncio.ensure_future(coro)
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        async def drain(pipe) -> None:
            try:
                while await pipe.stdout.read(65536):
                    pass
            except (OSError, ValueError):
                pass

        try:
            while not self.stop.is_set():
                sessions = await asyncio.to_thread(self.session_ids)
                for sid in list(pipes):
                    if sid not in sessions:
                        track(pipes.pop(sid).end(2.0))
                for sid in sessions:
                    if self.stop.is_set():
                        break
                    old = pipes.pop(sid, None)
                    if old is not None:
                        track(old.end(2.0))
                    try:
                        pipe = await open_direct(self.socket, ["attach-session", "-f", "ignore-size", "-t", sid])
                    except OSError:
                        self.attach_failures += 1
                        continue
                    pipes[sid] = pipe
                    track(drain(pipe))
                    self.clients_attached += 1
                await asyncio.to_thread(self.stop.wait, REATTACH_EVERY)
        finally:
            for pipe in pipes.values():
                track(pipe.end(1.0))
            if tasks:
                await asyncio.wait(list(tasks), timeout=5)
            for pipe in pipes.values():
                pipe.abort()

    # -- measuring -------------------------------------------------------------------------
    def attaches_all(self) -> int:
        try:
            return len(self.attach_log.read_text().splitlines())
        except OSError:
            return 0

    def sample(self) -> None:
        pid = self.service.pid if self.service is not None else 0
        running = self.service is not None and self.service.poll() is None
        self.samples.append(
            {
                "t": self.now(),
                "service_rss_mb": rss_mb(pid) if running else None,
                "service_cpu_s": cpu_seconds(pid) if running else None,
                "tmux_rss_mb": rss_mb(self.server_pid or 0),
                "load": os.getloadavg()[0],
            }
        )

    def run(self) -> dict:
        before = kernel_segfaults()
        self.hogs = start_hogs(self.args.hogs, self.env, self.args.hog_nice)
        self.start_world()
        self.progress(f"world up: tmux pid {self.server_pid}, {self.args.hogs} hogs, code from {self.code}")
        if self.args.arm == "service":
            self.start_service()
            self.progress(f"service up: pid {self.service.pid if self.service else None}")
        loops = [self.storm, self.popups]
        if self.args.arm == "plain":
            loops.append(self.plain_clients)
        elif self.args.arm == "direct":
            loops.append(self.direct_clients)
        self.started = time.monotonic()
        self.events.clear()
        self.sample()
        for fn in loops:
            thread = threading.Thread(target=fn, name=fn.__name__, daemon=True)
            thread.start()
            self.threads.append(thread)
        duration = self.args.minutes * 60
        next_sample = SAMPLE_EVERY
        next_minute = 60.0
        try:
            while time.monotonic() - self.started < duration:
                time.sleep(0.25)
                if not alive(self.server_pid):
                    self.died_at = self.now()
                    self.note("the tmux server is gone")
                    self.progress(f"the tmux server died after {self.died_at:.1f} s")
                    break
                if self.service is not None and self.service.poll() is not None:
                    self.service_ended_at = self.now()
                    self.progress(f"the service ended ({self.service.returncode}) after {self.service_ended_at:.1f} s")
                    break
                if time.monotonic() - self.started >= next_sample:
                    next_sample += SAMPLE_EVERY
                    self.sample()
                if time.monotonic() - self.started >= next_minute:
                    next_minute += 60.0
                    s = self.samples[-1]
                    self.progress(
                        f"minute {int(s['t'] // 60)}: sessions {self.counts['sessions_made']}, popups {self.counts['popups_opened']}, "
                        f"control attaches {sum(control_attaches(self.attach_log).values())}, service RSS {s['service_rss_mb'] and round(s['service_rss_mb'], 1)} MB, load {s['load']:.1f}"
                    )
        except KeyboardInterrupt:
            self.interrupted = True
            self.progress("interrupted")
        ran = self.now()
        self.sample()
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=15)
        end_pid = self.agents.pid() if alive(self.server_pid) else None
        return self.result(ran, before, end_pid)

    def result(self, ran: float, before: list[str] | None, end_pid: int | None) -> dict:
        after = kernel_segfaults()
        new = None if before is None or after is None else after[len(before) :]
        ours = segfaults_of(new, self.server_pid)
        survived = self.died_at is None and end_pid == self.server_pid
        attaches = control_attaches(self.attach_log)
        service_samples = [s for s in self.samples if s["service_rss_mb"] is not None]
        mark = 120.0 if self.args.minutes >= 4 else self.args.minutes * 30.0
        after_mark = [(s["t"], s["service_rss_mb"]) for s in service_samples if s["t"] >= mark]
        growth = slope_per_hour(after_mark)
        cpu = None
        if len(service_samples) >= 2 and service_samples[0]["service_cpu_s"] is not None and service_samples[-1]["service_cpu_s"] is not None:
            span = max(1.0, service_samples[-1]["t"] - service_samples[0]["t"])
            cpu = round(100 * (service_samples[-1]["service_cpu_s"] - service_samples[0]["service_cpu_s"]) / span, 1)
        loads = [s["load"] for s in self.samples]
        service_running = None
        if self.args.arm == "service":
            service_running = self.service is not None and self.service.poll() is None and self.service_ended_at is None
        result = {
            "arm": self.args.arm,
            "seed": self.args.seed,
            "minutes": self.args.minutes,
            "ran_s": ran,
            "interrupted": self.interrupted,
            "hogs": self.args.hogs,
            "hog_nice": self.args.hog_nice,
            "attach": self.env.get("HEADSPACE_TMUX_ATTACH", "auto") if self.args.arm == "service" else ("client" if self.args.arm == "plain" else self.args.arm),
            "code": "live" if self.args.live_code else "snapshot",
            "tmux_version": subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip(),
            "tmux_pid": self.server_pid,
            "tmux_survived": survived,
            "tmux_died_after_s": self.died_at,
            "dmesg_readable": new is not None,
            "tmux_segfaults": new,  # every new tmux segfault line (other tmux servers on this machine too)
            "tmux_segfaults_ours": ours,  # those of this run's server (by pid)
            "sessions_made": self.counts["sessions_made"],
            "storm_sessions_killed": self.counts["storm_sessions_killed"],
            "popups_opened": self.counts["popups_opened"],
            "popups_closed": self.counts["popups_closed"],
            "base_sessions_remade": self.counts["base_sessions_remade"],
            "windows_remade": self.counts["windows_remade"],
            "tmux_command_errors": self.counts["tmux_errors"],
            "control_attaches": sum(attaches.values()),  # counted by tmux (client-attached hook), control-mode clients
            "control_attaches_sessions": len(attaches),
            "control_attaches_max_per_session": max(attaches.values(), default=0),
            "attaches_all": self.attaches_all(),
            "clients_attached_by_us": self.clients_attached if self.args.arm in ("plain", "direct") else None,
            "attach_failures": self.attach_failures if self.args.arm in ("plain", "direct") else None,
            "service_running_at_end": service_running,
            "service_ended_after_s": self.service_ended_at,
            "service_rss_mb_start": round(service_samples[0]["service_rss_mb"], 1) if service_samples else None,
            "service_rss_mb_end": round(service_samples[-1]["service_rss_mb"], 1) if service_samples else None,
            "service_rss_mb_by_minute": {str(int(s["t"] // 60)): round(s["service_rss_mb"], 1) for s in service_samples},
            "service_rss_growth_mb_per_hour": None if growth is None else round(growth, 1),
            "service_rss_growth_after_s": mark,
            "service_cpu_pct": cpu,
            "tmux_rss_mb": [None if s["tmux_rss_mb"] is None else round(s["tmux_rss_mb"], 1) for s in (self.samples[0], self.samples[-1])] if self.samples else None,
            "load_avg_mean": round(sum(loads) / len(loads), 2) if loads else None,
            "load_avg_p95": round(percentile(loads, 95), 2) if loads else None,
            "load_avg_end": [round(x, 2) for x in os.getloadavg()],
        }
        if not survived:
            cut = (self.died_at or ran) - 10.0
            result["last_events"] = [f"{t:8.2f}s {text}" for t, text in self.events if t >= cut]
        if self.args.arm == "service" and not service_running:
            result["service_err_tail"] = self.service_err()
        fails = []
        if not survived:
            fails.append(f"the agents' tmux server died after {self.died_at} s" if self.died_at is not None else "the agents' tmux server does not answer with its pid")
        if ours:
            fails.append(f"tmux segfaulted: {ours}")
        if self.args.arm == "service" and not service_running:
            fails.append("the service is not running at the end")
        result["failures"] = fails
        result["exit_status"] = 1 if fails and self.args.arm != "plain" else 0
        return result

    # -- cleanup -------------------------------------------------------------------------------
    def close(self) -> None:
        self.stop.set()
        with self.timers_lock:
            for timer in self.timers:
                timer.cancel()
        for thread in self.threads:
            thread.join(timeout=10)
        for proc in self.plain.values():
            self.close_plain(proc)
        self.plain.clear()
        self.reap(grace=0.0)
        self.reap(grace=0.0)
        if self.service is not None and self.service.poll() is None:
            try:
                os.killpg(self.service.pid, signal.SIGTERM)
                self.service.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.service.pid, signal.SIGKILL)
                except OSError:
                    pass
                self.service.wait(5)
        stop_hogs(self.hogs)
        try:
            self.agents.kill()
        except TMUX_ERRORS:
            pass
        if alive(self.server_pid):
            try:
                os.kill(self.server_pid or 0, signal.SIGKILL)
            except OSError:
                pass
        Path(self.socket).unlink(missing_ok=True)
        self.sweep()
        log = self.work / "home" / ".local" / "state" / "headspace" / "service.log"
        if self.args.keep_log and log.exists():
            shutil.copy(log, self.args.keep_log)
        shutil.rmtree(self.work, ignore_errors=True)

    def sweep(self) -> None:
        """Whatever of ours still runs (a crashed server's panes, a popup's UI): found by our TMUX_TMPDIR in its environment."""
        me = os.getpid()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if self.marker.encode() in environ.split(b"\0"):
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except OSError:
                    pass


def table(result: dict) -> str:
    rows = [
        ("arm / seed", f"{result['arm']} / {result['seed']} ({result['attach']}, code {result['code']}, {result['tmux_version']})"),
        ("ran", f"{result['ran_s']:.0f} s of {result['minutes'] * 60:.0f}"),
        ("tmux survived", "yes" if result["tmux_survived"] else f"NO, died after {result['tmux_died_after_s']} s"),
        ("tmux segfaults (ours / all new)", "dmesg unreadable" if not result["dmesg_readable"] else f"{len(result['tmux_segfaults_ours'])} / {len(result['tmux_segfaults'])}"),
        ("sessions made", result["sessions_made"]),
        ("popups opened", result["popups_opened"]),
        ("base sessions remade / windows remade", f"{result['base_sessions_remade']} / {result['windows_remade']}"),
        ("control attaches (tmux's count)", f"{result['control_attaches']} in {result['control_attaches_sessions']} sessions, at most {result['control_attaches_max_per_session']} per session"),
    ]
    if result["arm"] == "service":
        rows += [
            ("service running at the end", result["service_running_at_end"]),
            ("service RSS start -> end (MB)", f"{result['service_rss_mb_start']} -> {result['service_rss_mb_end']}"),
            ("service RSS by minute (MB)", result["service_rss_mb_by_minute"]),
            (f"service RSS growth after {result['service_rss_growth_after_s']:.0f} s", f"{result['service_rss_growth_mb_per_hour']} MB/h"),
            ("service CPU", f"{result['service_cpu_pct']} %"),
        ]
    rows.append(("load average mean / p95", f"{result['load_avg_mean']} / {result['load_avg_p95']}"))
    for line in result.get("tmux_segfaults_ours") or []:
        rows.append(("kernel", line))
    for event in result.get("last_events") or []:
        rows.append(("event", event))
    for failure in result["failures"]:
        rows.append(("FAIL", failure))
    return "\n".join(f"{name:>40}  {value}" for name, value in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="storm.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--arm", choices=ARMS, required=True, help="what is attached to the agents' server")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--hogs", type=int, default=3, help="CPU-bound processes beside the storm")
    parser.add_argument("--hog-nice", type=int, default=0, help="the hogs' niceness (19: they fill only the time nothing else wants)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the result as one line of JSON")
    parser.add_argument("--live-code", action="store_true", help="run headspace from the working tree, not from a copy taken at the start")
    parser.add_argument("--attach", choices=("auto", "client", "direct"), default="auto", help="service arm: HEADSPACE_TMUX_ATTACH for the service (auto: headspace decides)")
    parser.add_argument("--keep-log", metavar="FILE", help="copy the service's log file here at the end")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        print("storm.py: tmux is not installed", file=sys.stderr)
        return 1
    storm = Storm(args)
    if not args.live_code:
        sys.path.insert(0, str(storm.code))  # the direct arm's open_direct, from the copy
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *a: sys.exit(1))
    try:
        result = storm.run()
    finally:
        storm.close()
    print(json.dumps(result) if args.json else table(result), flush=True)
    return result["exit_status"]


if __name__ == "__main__":
    sys.exit(main())
