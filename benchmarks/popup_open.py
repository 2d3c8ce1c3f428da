"""Popup open to full table: how long a headspace opened over N agents takes to show all of them, and the attaches each open costs.

    python benchmarks/popup_open.py --panes 100 --opens 10 --json

N fake agents (``fake_agent.py``: real recorded Claude screens, each in its
own session of a private tmux server, as ``scale.py`` makes them), all idle.
headspace is opened ``--opens`` times in a pane of a second private tmux
server (the user's terminal: what a popup is to tmux), and its screen is
read every 10 ms (``capture-pane``) until it shows the whole table: the
header says ``N agents`` and the first row is drawn.  Then ``q``, and the
next open.  Two modes, in this order:

* ``own``: ``headspace --no-service``, a monitor of its own each open (what
  every open was before the resident service);
* ``service``: ``headspace``, a client of the resident service, started once
  before the first open and settled (every session's control client
  attached) so that each open measures a popup, not the service's start.

Reported per mode: open to first frame and to full table (p50, p90, max,
milliseconds from the start of the command), and the control-client
attaches each open added (tmux's ``client-attached`` hook on the agents'
server).  Throwaway HOME and XDG folders; everything started is ended.
Not part of the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.scale import Farm  # noqa: E402

HEADER = re.compile(r"headspace\s+(\d+) agents?")
WIDTH, HEIGHT = 120, 40


def attaches(path: Path) -> int:
    return path.read_text().count("x") if path.exists() else 0


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def open_once(viewer: str, env: dict[str, str], command: str, panes: int, n: int) -> tuple[float, float]:
    """One open: (ms to the first frame, ms to the full table); the headspace quit after."""
    session = f"open{n}"
    started = time.perf_counter()
    subprocess.run(["tmux", "-L", viewer, "new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT), "-s", session, command], env=env, check=True)
    first = full = None
    deadline = time.monotonic() + 120
    while full is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"open {n}: no full table within 120 s")
        shown = subprocess.run(["tmux", "-L", viewer, "capture-pane", "-p", "-t", session], capture_output=True, text=True, env=env).stdout
        if "watching from this headspace alone" in shown:
            raise SystemExit(f"open {n}: headspace did not use the service:\n{shown}")
        now = (time.perf_counter() - started) * 1000
        if first is None and "headspace " in shown:
            first = now
        header = HEADER.search(shown)
        if header and int(header.group(1)) == panes and re.search(r"^\s*a0:0\.0\s", shown, re.M):
            full = now
        time.sleep(0.01)
    subprocess.run(["tmux", "-L", viewer, "send-keys", "-t", session, "q"], env=env)
    for _ in range(200):
        if subprocess.run(["tmux", "-L", viewer, "has-session", "-t", session], capture_output=True, env=env).returncode != 0:
            break
        time.sleep(0.05)
    return first or full, full


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panes", type=int, default=100)
    parser.add_argument("--opens", type=int, default=10)
    parser.add_argument("--modes", default="own,service", help="which of own, service to measure (default both)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hs-bench-popup-"))
    (root / "drawn").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        folder = root / name.lower()
        folder.mkdir(mode=0o700)
        env[name] = str(folder)
    env["HOME"] = str(root)
    farm = Farm(args.panes, root / "drawn")
    counted = root / "attaches"
    farm.tmux("set-hook", "-g", "client-attached", f"run-shell -b \"echo x >> {counted}\"")
    viewer = f"hs-bench-viewer-{os.getpid()}"
    words = [f"{k}={v}" for k, v in env.items() if k in ("HOME", "PATH", "PYTHONPATH") or k.startswith("XDG_")]
    base = shlex.join(["env", *words, f"PYTHONPATH={REPO}", sys.executable, "-m", "headspace_tui"])
    result: dict[str, object] = {"panes": args.panes, "opens": args.opens}
    try:
        for mode in ("own", "service"):
            if mode not in args.modes.split(","):
                result[f"{mode}_attaches_total"] = attaches(counted)
                continue
            if mode == "service":
                subprocess.run([sys.executable, "-m", "headspace_tui", "-L", farm.socket, "serve"], env=env, cwd=REPO, check=True, capture_output=True)
                deadline = time.monotonic() + 300
                while attaches(counted) < result["own_attaches_total"] + args.panes:  # type: ignore[operator]
                    if time.monotonic() > deadline:
                        raise SystemExit("the service did not attach to every session within 300 s")
                    time.sleep(0.2)
                time.sleep(2)
            command = f"cd / && {base} {'--no-service ' if mode == 'own' else ''}-L {shlex.quote(farm.socket)}"
            firsts, fulls, added = [], [], []
            for n in range(args.opens):
                before = attaches(counted)
                first, full = open_once(viewer, env, command, args.panes, n)
                time.sleep(1.0)  # what it attached, counted; and a pause as between two popup opens
                added.append(attaches(counted) - before)
                firsts.append(first)
                fulls.append(full)
            result[mode] = {
                "first_frame_ms": {"p50": statistics.median(firsts), "p90": percentile(firsts, 0.9), "max": max(firsts)},
                "full_table_ms": {"p50": statistics.median(fulls), "p90": percentile(fulls, 0.9), "max": max(fulls)},
                "attaches_per_open": statistics.mean(added),
            }
            result[f"{mode}_attaches_total"] = attaches(counted)
    finally:
        subprocess.run([sys.executable, "-m", "headspace_tui", "-L", farm.socket, "serve", "--stop"], env=env, cwd=REPO, capture_output=True)
        subprocess.run(["tmux", "-L", viewer, "kill-server"], capture_output=True, env=env)
        farm.close()
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for mode in ("own", "service"):
            row = result.get(mode)
            if isinstance(row, dict):
                f, t = row["first_frame_ms"], row["full_table_ms"]
                print(f"{mode:8} first frame p50 {f['p50']:.0f} ms · full table p50 {t['p50']:.0f} / p90 {t['p90']:.0f} / max {t['max']:.0f} ms · attaches per open {row['attaches_per_open']:.1f}")


if __name__ == "__main__":
    main()
