"""The release canary end to end: install (here: the cached pinned release), record, read, report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.versions import CLAUDE_VERSION

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]


def test_the_canary_records_a_release_and_reads_its_screens_as_labelled(claude_binary, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.canary", "claude", CLAUDE_VERSION, "--only", "permission_bash", "idle_fresh", "--sizes", "80x24", "--keep", str(tmp_path), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    # Two scenarios in every renderer the release has (alt and inline), each read as labelled.
    assert summary == {"family": "claude", "version": CLAUDE_VERSION, "screens": 4, "right": 4, "recorded_ok": True}
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.glob("*/*/*.json")) == [
        "alt/80x24/idle_fresh.json",
        "alt/80x24/permission_bash.json",
        "inline/80x24/idle_fresh.json",
        "inline/80x24/permission_bash.json",
    ]


def test_a_release_that_does_not_exist_is_one_line_and_exit_2(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.canary", "gemini", "0.0.1-nonexistent", "--keep", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "could not be installed" in done.stderr and "Traceback" not in done.stderr
