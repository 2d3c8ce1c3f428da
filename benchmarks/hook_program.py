"""How long the hook program takes, run exactly as Claude runs it (``python -S program.py``, the event on stdin).

    python benchmarks/hook_program.py [--runs 50]

Claude waits for the hook before it goes on, so its wall time is on the
agent's own path.  Prints p50 / p95 / max over ``--runs`` runs, and the same
for a bare ``python -S -c pass`` (the floor: starting the interpreter).  Goal:
p50 within a few tens of milliseconds of the floor on a quiet machine (it
was ~20 ms).  tests/unit/test_hook_program.py checks only that every run
spools its event; this measures how fast.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.unit.test_hook_program import EVENT, run, spooled  # noqa: E402


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(times) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {max(times) * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    payload = json.dumps(EVENT).encode()
    with tempfile.TemporaryDirectory(prefix="headspace-hook-") as folder:
        runtime = Path(folder) / "run"
        runtime.mkdir(mode=0o700)
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            out = run(payload, {"XDG_RUNTIME_DIR": str(runtime), "TMUX_PANE": "%1"})
            times.append(time.perf_counter() - started)
            assert out.returncode == 0, out
        assert len(spooled(runtime)) == args.runs
    bare = []
    for _ in range(args.runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", "pass"], check=True, timeout=10)
        bare.append(time.perf_counter() - started)
    print(f"hook program over {args.runs} runs: {summary(times)}")
    print(f"bare 'python -S -c pass':  {summary(bare)}")


if __name__ == "__main__":
    main()
