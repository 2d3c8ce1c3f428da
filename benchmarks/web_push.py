"""Web Push: how long from a permission dialog on the pane to its push at the phone's push service, and what pushing costs the service.

    python benchmarks/web_push.py --agents 10 --trials 10 --json

N fake agents (``fake_agent.py``, as ``web_page.py`` makes them) and one
more, the probe, in a private tmux server; ``headspace web`` starts the
resident service and its page with a config whose ``[push] services`` names
a push service of this script's own on 127.0.0.1 (it answers 201 and notes
when each push arrived).  One subscription (fresh P-256 keys) is posted to
the page with its cookie, as the page's "Notify this phone" does; no browser
is needed to time the service's side.  Then, ``--trials`` times: the probe
goes to Claude's working screen (SIGUSR1), then draws the permission menu
(SIGUSR2; its instant written to ``<results>/<pane>.drawn``); time end is
the push's arrival at the push service.  Trials are spaced past the
ringer's gap between two notifications (2 s).  Each push is decrypted with
the subscription's keys (http-ece) to check it names the probe.

Reported: p50 / p95 / max (ms), and the service's RSS before the first push
and after the last (the cryptography is loaded at the first subscription).
What dominates: the ringer gathers waits that begin together (0.5 s) and
waits for a dialog's details; the network and the encryption are the rest.

Throwaway HOME and XDG_* folders; private tmux socket; the service is
stopped and the farm closed on any exit.  Not part of the tests.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.popup_open import stop_service  # noqa: E402
from benchmarks.scale import Farm  # noqa: E402
from benchmarks.web_page import Probe, free_port, rss_now_mb, start_time, summary  # noqa: E402
from headspace_tui.shared.resident_place import place_of, read_card  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402
from tests.harness.push_service import PushService  # noqa: E402

GAP = 2.5  # seconds between two trials' dialogs: past the ringer's gap between notifications


def subscribe(base: str, token: str, endpoint: str):
    """Post one subscription with the page's cookie and Origin, as the page does; the browser's private key and secret."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    private, auth = ec.generate_private_key(ec.SECP256R1()), os.urandom(16)
    point = private.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    b64 = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()  # noqa: E731
    body = json.dumps({"endpoint": endpoint, "p256dh": b64(point), "auth": b64(auth), "browser": "benchmark"}).encode()
    headers = {"Content-Type": "application/json", "Cookie": f"headspace_token={token}", "Origin": base}
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/push/subscribe", data=body, headers=headers, method="POST"), timeout=30) as answer:
        if answer.status != 200:
            raise RuntimeError(f"subscribe: HTTP {answer.status}")
    return private, auth


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10, help="fake agents beside the probe")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=15.0, help="seconds a push may take before the trial is said lost")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("web_push.py: needs tmux", file=sys.stderr)
        return 1
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    import http_ece

    root = Path(tempfile.mkdtemp(prefix="hs-bench-push-"))
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        (root / name.lower()).mkdir(mode=0o700)
        env[name] = str(root / name.lower())
    env["HOME"] = str(root)
    pushes = PushService()
    config = root / "config.toml"
    config.write_text(f'[push]\nservices = ["{pushes.origin}"]\nquiet_after_key = 0\n')
    drawn = root / "drawn"
    drawn.mkdir()
    farm, service, service_start = None, None, None
    delays, troubles, rss = [], [], {}
    try:
        farm = Farm(args.agents, drawn)
        probe = Probe(farm)
        time.sleep(2.0)  # the fake agents start and draw
        port = free_port()
        argv = [sys.executable, "-m", "headspace_tui", "-L", farm.socket, "--config", str(config), "web", "--listen", f"127.0.0.1:{port}", "--no-qr"]
        said = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
        card = read_card(place_of(TmuxServer(socket_name=farm.socket).identity, env)) or {}
        if said.returncode != 0 or "pid" not in card:
            raise RuntimeError(f"headspace web failed: {said.stderr.strip() or said.stdout.strip()}")
        service, service_start = int(card["pid"]), start_time(int(card["pid"]))
        url = next(line for line in said.stdout.splitlines() if line.startswith("http://"))
        base, token = f"http://127.0.0.1:{port}", url.split("token=", 1)[1]
        time.sleep(4.0)  # past the ringer's quiet start
        rss["before_subscribe_mb"] = round(rss_now_mb(service), 1)
        private, auth = subscribe(base, token, f"{pushes.origin}/push/1")
        rss["after_subscribe_mb"] = round(rss_now_mb(service), 1)
        for n in range(args.trials):
            farm.signal(probe.pane, signal.SIGUSR1)  # working
            time.sleep(GAP)
            probe.drawn_file().unlink(missing_ok=True)
            before = len(pushes.received)
            farm.signal(probe.pane, signal.SIGUSR2)  # the permission menu
            deadline = time.monotonic() + args.timeout
            while len(pushes.received) == before and time.monotonic() < deadline:
                time.sleep(0.005)
            drawn_at = farm.drawn_at(probe.pane)
            if len(pushes.received) == before or drawn_at is None:
                troubles.append(f"trial {n}: {'no push' if len(pushes.received) == before else 'no drawn time'} within {args.timeout:g} s")
                continue
            at, body = pushes.received[before].at, pushes.received[before].body
            message = json.loads(http_ece.decrypt(body, private_key=private, auth_secret=auth, version="aes128gcm"))
            if message.get("pane") != probe.pane:
                troubles.append(f"trial {n}: the push named {message.get('pane')}, not the probe {probe.pane}")
                continue
            delays.append((at - drawn_at) * 1000)
        rss["after_pushes_mb"] = round(rss_now_mb(service), 1)
    finally:
        if farm is not None:
            try:
                stop_service(env, farm.socket, service if service is not None and start_time(service) == service_start else None)
            finally:
                farm.close()
        pushes.close()
        shutil.rmtree(root, ignore_errors=True)
    result = {"agents": args.agents, "trials": args.trials, "rss": rss, "loadavg_1min": round(os.getloadavg()[0], 2), "troubles": troubles}
    if delays:
        result["dialog_to_push_ms"] = {**summary(delays), "pushed": len(delays), "each": [round(d, 1) for d in delays]}
    if args.json:
        print(json.dumps(result))
        return 0
    push = result.get("dialog_to_push_ms")
    print(f"{args.agents} agents + the probe (load average {result['loadavg_1min']})")
    if push:
        print(f"  dialog to push   p50 {push['p50']} / p95 {push['p95']} / max {push['max']} ms ({push['pushed']} of {args.trials} trials)")
    print(f"  service RSS      {rss.get('before_subscribe_mb')} MB before a phone subscribed, {rss.get('after_subscribe_mb')} MB after, {rss.get('after_pushes_mb')} MB after the pushes")
    for line in troubles:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
