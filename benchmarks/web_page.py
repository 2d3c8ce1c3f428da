"""The phone page (``headspace web``) against N agents: dialog to page, bytes to an idle page, the service's idle CPU.

    python benchmarks/web_page.py --agents 10,100 --json

For each size N: N fake agents (``fake_agent.py``: real recorded Claude
screens, each in its own session of a private tmux server, as ``scale.py``
makes them, all idle) plus one more, the probe, in a session of its own.
``headspace -L SERVER web --listen 127.0.0.1:PORT --no-qr`` starts the
resident service and its page; Debian's Chromium opens the printed address
through Playwright in a phone context (390x844, mobile, touch) and waits
for all N+1 agents on the list.  Then, in this order:

* **idle**: nothing changes for ``--window`` seconds (60; 10 with
  ``--quick``) with the page on the list.  Bytes the page received, per
  minute: the event stream counted byte for byte on a second stream this
  script opens with the page's cookie (Chrome's CDP does not report an
  EventSource's data in ``Network.dataReceived``), plus any fetch's body
  (CDP), with the requests the page made and the SSE messages by type.  Over the same window, the service's CPU
  (``/proc/PID/stat``, utime+stime, percent of one core; alone and with its
  live children, the tmux control clients) and its RSS at the end (VmRSS).
  The pid is the one in the service's card.
* **dialog to page** (``--trials``, 20): the probe goes to Claude's working
  screen (SIGUSR1) and the page is waited on to say ``working``; after a
  random 0.3-1.0 s a MutationObserver is armed on the page's list, and the
  probe draws the permission menu (SIGUSR2).  Time zero: the instant the
  probe wrote the screen to its pane (it records ``time.time()`` right after
  its write: ``<results>/<pane>.drawn``).  Time end: the first mutation
  after which ``li.agent[data-pane="%N"][data-state="permission"]`` is in
  the DOM, taken in the page with ``performance.now()`` at the mutation,
  mapped to the wall clock through a ``Date.now()`` / ``performance.now()``
  pair read when armed (1 ms).  The observer is the only thing the
  benchmark adds to the page; Python only waits on its promise.  Reported:
  p50 / p95 / max (ms).  Goal: p95 <= 250 ms on a quiet machine.

Throwaway HOME and XDG_* folders (XDG_RUNTIME_DIR 0700) for this process
and everything it starts (the service, Chromium); private tmux sockets.  On
any exit (Ctrl-C, SIGTERM, an error) the service is stopped (``serve
--stop``, then SIGKILL by its pid), its leftover children killed by pid, the
tmux server killed, Chromium closed and the folders removed.  Not part of
the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.popup_open import stop_service  # noqa: E402
from benchmarks.scale import CORPUS, Farm, live_children, percentile, proc_cpu  # noqa: E402
from headspace_tui.shared.resident_place import place_of, read_card  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}

# Armed before each dialog: resolves to the wall-clock ms of the first mutation after which the selector matches (null on timeout).
ARM = """([selector, timeout]) => {
  const baseDate = Date.now(), basePerf = performance.now();
  const list = document.getElementById("agents");
  window.__hsSeen = new Promise((resolve) => {
    let timer = null;
    const observer = new MutationObserver(() => {
      const at = performance.now();
      if (document.querySelector(selector)) { observer.disconnect(); clearTimeout(timer); resolve(baseDate + (at - basePerf)); }
    });
    observer.observe(list, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-state"] });
    timer = setTimeout(() => { observer.disconnect(); resolve(null); }, timeout);
  });
  return document.querySelector(selector) !== null;
}"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_time(pid: int) -> str | None:
    """A process's start time (field 22 of its stat): tells it from a later process with the same pid."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def rss_now_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def pss_mb(pid: int) -> float:
    """Proportional set size: a process's share of the pages it shares (tmux clients share most of theirs)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 1), "p95": round(percentile(values, 95), 1), "max": round(max(values), 1)}


class Probe:
    """The agent under test: one more fake agent in a session of the farm's server, flipped by signals."""

    def __init__(self, farm: Farm) -> None:
        agent = REPO / "benchmarks" / "fake_agent.py"
        command = f"exec -a claude {sys.executable} -S {agent} {CORPUS} {farm.results}"
        farm.tmux("new-session", "-d", "-s", "probe", "-x", "120", "-y", "40", command)
        pane, pid = farm.tmux("display-message", "-p", "-t", "=probe:", "#{pane_id} #{pane_pid}").split()
        self.farm, self.pane, self.pid = farm, pane, int(pid)
        farm.pids[pane] = self.pid  # so that the farm's signal() may reach it

    def drawn_file(self) -> Path:
        return self.farm.results / (self.pane.lstrip("%") + ".drawn")


class Network:
    """What the page asked for and heard (CDP Network events), from a mark on: requests, their bytes, SSE messages."""

    def __init__(self, cdp) -> None:
        self.fetched = self.requests = self.message_bytes = 0
        self.messages: dict[str, int] = {}
        self.urls: list[str] = []
        self.last_message = time.monotonic()
        cdp.on("Network.loadingFinished", self._finished)
        cdp.on("Network.requestWillBeSent", self._request)
        cdp.on("Network.eventSourceMessageReceived", self._message)
        cdp.send("Network.enable")

    def _finished(self, event: dict) -> None:
        self.fetched += int(event.get("encodedDataLength", 0))  # a fetch's whole response, headers too (the stream never finishes)

    def _request(self, event: dict) -> None:
        self.requests += 1
        self.urls.append(event["request"]["url"].split("?")[0])

    def _message(self, event: dict) -> None:
        try:
            kind = json.loads(event.get("data", "")).get("type", "?")
        except ValueError:
            kind = "?"
        self.messages[kind] = self.messages.get(kind, 0) + 1
        self.message_bytes += len(event.get("data", "")) + 8  # as framed on the stream: "data: …\n\n"
        self.last_message = time.monotonic()

    def mark(self) -> None:
        self.fetched = self.requests = self.message_bytes = 0
        self.messages, self.urls = {}, []


class RawStream:
    """The page's event stream read again from a socket, every byte counted as it arrives (headers, chunk framing, keep-alives).

    CDP reports an EventSource's chunks unreliably (its data messages are not in ``Network.dataReceived``), so
    the stream's bytes are counted here; it gets what the list page gets (no focus: no screens)."""

    def __init__(self, port: int, token: str) -> None:
        self.bytes = 0
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.settimeout(None)
        ask = f"GET /api/events?client=benchmark-raw-{os.getpid()} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: headspace_token={token}\r\nAccept: text/event-stream\r\n\r\n"
        self.sock.sendall(ask.encode())
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while chunk := self.sock.recv(65536):
                self.bytes += len(chunk)
        except OSError:
            pass

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the reader
        self.sock.close()


def web_on(farm: Farm, env: dict[str, str]) -> tuple[str, int]:
    """``headspace -L SERVER web --listen 127.0.0.1:PORT --no-qr``: the printed address and the service's pid."""
    port = free_port()
    argv = [sys.executable, "-m", "headspace_tui", "-L", farm.socket, "web", "--listen", f"127.0.0.1:{port}", "--no-qr"]
    said = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    card = read_card(place_of(TmuxServer(socket_name=farm.socket).identity, env)) or {}
    if said.returncode != 0 or "pid" not in card:
        raise RuntimeError(f"headspace web failed ({said.returncode}): {said.stderr.strip() or said.stdout.strip()}")
    urls = [line for line in said.stdout.splitlines() if line.startswith("http://")]
    if len(urls) != 1:
        raise RuntimeError(f"headspace web printed no address: {said.stdout}")
    return urls[0], int(card["pid"])


def wait_state(page, pane: str, state: str, timeout: float) -> None:
    page.locator(f'li.agent[data-pane="{pane}"][data-state="{state}"]').wait_for(timeout=timeout * 1000)


def idle_window(page, network: Network, raw: RawStream, service: int, seconds: float) -> dict:
    """Nothing changes for ``seconds``: what the page received and what the service spent."""
    kids = live_children(service)
    network.mark()
    raw0 = raw.bytes
    cpu0, kids0, started = proc_cpu(service), sum(proc_cpu(k) for k in kids), time.monotonic()
    page.wait_for_timeout(seconds * 1000)  # Playwright's own wait: the CDP events keep arriving meanwhile
    wall = time.monotonic() - started
    cpu1, kids1 = proc_cpu(service), sum(proc_cpu(k) for k in kids if start_time(k) is not None)
    per_minute, received = 60 / wall, raw.bytes - raw0 + network.fetched
    return {
        "seconds": round(wall, 1),
        "bytes": received,
        "bytes_per_min": round(received * per_minute),
        "sse_data_bytes_per_min": round(network.message_bytes * per_minute),
        "requests": network.requests,
        "request_urls": sorted(set(network.urls)),
        "sse_messages": dict(network.messages),
        "service_cpu_pct": round((cpu1 - cpu0) / wall * 100, 2),
        "children_cpu_pct": round((kids1 - kids0) / wall * 100, 2),
        "service_rss_mb": round(rss_now_mb(service), 1),
        "children": len(kids),
        "children_rss_mb": round(sum(rss_now_mb(k) for k in kids), 1),
        "children_pss_mb": round(sum(pss_mb(k) for k in kids), 1),
        "service_pss_mb": round(pss_mb(service), 1),
    }


def dialog_trials(page, probe: Probe, trials: int, timeout: float) -> tuple[list[float], list[str]]:
    """Working, then the permission menu, ``trials`` times: ms from the menu written to the page showing it."""
    selector = f'li.agent[data-pane="{probe.pane}"][data-state="permission"]'
    delays, troubles = [], []
    rng = random.Random(1)
    for n in range(trials):
        probe.farm.signal(probe.pane, signal.SIGUSR1)  # Claude's working screen, the spinner redrawn every 120 ms
        try:
            wait_state(page, probe.pane, "working", timeout)
        except Exception as exc:  # noqa: BLE001 - Playwright's TimeoutError; say it and go on
            troubles.append(f"trial {n}: the page did not say working: {type(exc).__name__}")
            continue
        time.sleep(rng.uniform(0.3, 1.0))
        probe.drawn_file().unlink(missing_ok=True)
        if page.evaluate(ARM, [selector, timeout * 1000]):
            troubles.append(f"trial {n}: already permission when armed")
            continue
        probe.farm.signal(probe.pane, signal.SIGUSR2)  # the permission menu, its instant written to <pane>.drawn
        seen = page.evaluate("() => window.__hsSeen")
        drawn, wait_by = probe.farm.drawn_at(probe.pane), time.monotonic() + 1.0
        while drawn is None and time.monotonic() < wait_by:  # written right after the screen: there, or nearly
            time.sleep(0.01)
            drawn = probe.farm.drawn_at(probe.pane)
        if seen is None or drawn is None:
            troubles.append(f"trial {n}: {'not seen on the page' if seen is None else 'no drawn time'} within {timeout:g} s")
            continue
        delays.append(seen - drawn * 1000)
    return delays, troubles


def one_size(browser, agents: int, root: Path, env: dict[str, str], args, owned: dict) -> dict:
    drawn = root / f"drawn-{agents}"
    drawn.mkdir()
    farm = owned["farm"] = Farm(agents, drawn)
    probe = Probe(farm)
    time.sleep(2.0)  # the fake agents start and draw
    started = time.monotonic()
    url, service = web_on(farm, env)
    owned["service"] = service
    owned["service_start"] = start_time(service)
    context = owned["context"] = browser.new_context(**PHONE)
    page = context.new_page()
    network = Network(context.new_cdp_session(page))
    page.goto(url)
    page.locator("#live.on").wait_for(timeout=args.timeout * 1000)
    deadline = time.monotonic() + 120
    while page.locator("li.agent").count() < agents + 1:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the page lists {page.locator('li.agent').count()} of {agents + 1} agents after 120 s")
        page.wait_for_timeout(200)
    wait_state(page, probe.pane, "idle", args.timeout)
    listed = time.monotonic() - started
    raw = owned["raw"] = RawStream(int(url.split(":")[2].split("/")[0]), url.split("token=", 1)[1])
    quiet_by = time.monotonic() + 120
    while time.monotonic() - network.last_message < args.settle and time.monotonic() < quiet_by:
        page.wait_for_timeout(200)  # settled: no change heard for --settle seconds (the service's first reads done)
    result = {"agents": agents, "panes": agents + 1, "listed_after_s": round(listed, 1), "quiet_after_s": round(time.monotonic() - started, 1)}
    result["idle"] = idle_window(page, network, raw, service, args.window)
    delays, troubles = dialog_trials(page, probe, args.trials, args.timeout)
    if delays:
        result["dialog_to_page_ms"] = {**summary(delays), "trials": len(delays), "each": [round(d, 1) for d in delays]}
    if troubles:
        result["troubles"] = troubles
    owned["children"] = [(kid, start_time(kid)) for kid in live_children(service)]
    result["loadavg_1min"] = round(os.getloadavg()[0], 2)  # the machine's own load (other work skews every number here)
    return result


def clean_up(owned: dict, env: dict[str, str]) -> None:
    """Everything one size started, each step tried whatever the one before did."""
    farm, service = owned.pop("farm", None), owned.pop("service", None)
    context, children = owned.pop("context", None), owned.pop("children", [])
    if "raw" in owned:
        owned.pop("raw").close()
    if service is not None and start_time(service) == owned.get("service_start"):
        children += [(kid, start_time(kid)) for kid in live_children(service)]
    steps = []
    if context is not None:
        steps.append(context.close)
    if farm is not None:
        steps.append(lambda: stop_service(env, farm.socket, service if service is not None and start_time(service) == owned.get("service_start") else None))
        steps.append(farm.close)
    for step in steps:
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - report and carry on cleaning
            print(f"web_page: cleaning up: {exc}", file=sys.stderr)
    for kid, started in children:  # the service's own children (its control clients), only if still the same processes
        if started is not None and start_time(kid) == started:
            try:
                os.kill(kid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="10,100", help="sizes, comma-separated (fake agents, plus the probe)")
    parser.add_argument("--trials", type=int, default=20, help="dialogs timed per size")
    parser.add_argument("--window", type=float, default=None, help="seconds of the idle window (default 60; 10 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a 10 s idle window")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds without a change heard before the idle window")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds one step may take on the page")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = [int(size) for size in args.agents.split(",") if size.strip()]
    args.window = args.window if args.window is not None else (10.0 if args.quick else 60.0)
    if shutil.which("tmux") is None or not os.path.exists(CHROMIUM):
        print("web_page.py: needs tmux and Debian's Chromium (/usr/bin/chromium)", file=sys.stderr)
        return 1
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # Ctrl-C, or ended from outside: the finally clauses run
        signal.signal(sig, signal.default_int_handler)

    root = Path(tempfile.mkdtemp(prefix="hs-bench-web-"))
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        folder = root / name.lower()
        folder.mkdir(mode=0o700)
        env[name] = str(folder)
    env["HOME"] = str(root)
    os.environ.clear()
    os.environ.update(env)  # Playwright's driver and Chromium too: nothing of theirs lands in the user's HOME
    results, owned = [], {}
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], env=env)
            try:
                for agents in sizes:
                    try:
                        results.append(one_size(browser, agents, root, env, args, owned))
                    finally:
                        clean_up(owned, env)
            finally:
                browser.close()
    finally:
        clean_up(owned, env)
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps({"window_s": args.window, "trials": args.trials, "sizes": results}))
        return 0
    for row in results:
        idle, dialog = row["idle"], row.get("dialog_to_page_ms")
        print(f"{row['agents']} agents + the probe (listed {row['listed_after_s']} s after 'headspace web'; load average {row['loadavg_1min']})")
        if dialog:
            print(f"  dialog to page   p50 {dialog['p50']} / p95 {dialog['p95']} / max {dialog['max']} ms ({dialog['trials']} trials)")
        print(f"  idle page        {idle['bytes_per_min']} B/min ({idle['bytes']} B in {idle['seconds']} s; {idle['requests']} requests; SSE messages {idle['sse_messages']})")
        print(
            f"  service idle     {idle['service_cpu_pct']}% CPU, RSS {idle['service_rss_mb']} MB;"
            f" its {idle['children']} children (tmux control clients) {idle['children_cpu_pct']}% CPU, RSS {idle['children_rss_mb']} MB (PSS {idle['children_pss_mb']} MB)"
        )
        for line in row.get("troubles", []):
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
