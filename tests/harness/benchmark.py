"""A benchmark script run as CI's short version: its last line of JSON, and its exit status.

The soak and the storm (benchmarks/soak.py, storm.py) are long scripts with
a ``--json`` report; their tests run a few minutes of each and assert on
what it printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_benchmark(script: str, *args: str, timeout: float) -> tuple[dict, subprocess.CompletedProcess[str]]:
    """Run ``benchmarks/<script> <args> --json`` with this repository's code; its report (printed, for the test's log) and the process."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), *args, "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout.strip(), f"{script} printed nothing: {proc.stderr[-2000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps(result, indent=1))
    return result, proc
