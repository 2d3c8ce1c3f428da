"""The installed package, as a user meets it: a plain (non-editable) install in
a fresh venv, started in a real tmux pane at 80x24 next to real Claude
sessions, shows every agent's state; resized to 200x50 and back, it still does.

CI's ``.ci/smoke-wheel`` leaves the venv it installed the built wheel into
(``$HEADSPACE_WHEEL_VENV``); elsewhere this test builds one from the
tracked files.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.harness.env import private_env

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    given = os.environ.get("HEADSPACE_WHEEL_VENV")
    if given and (Path(given) / "bin" / "headspace").exists():
        return Path(given) / "bin" / "headspace"
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, files):
        path = Path(name.decode())
        if path.parts[0] == "snapshots":
            continue
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_bytes((ROOT / path).read_bytes())
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    pip = str(work / "venv" / "bin" / "pip")
    subprocess.run([pip, "install", "-q", str(src)], check=True, capture_output=True)
    return work / "venv" / "bin" / "headspace"


def _rows(screen: str, names: list[str]) -> dict[str, str]:
    """Each agent's table row (the preview's title names one too: rows start with the target)."""
    return {name: next((line for line in screen.splitlines() if line.lstrip().startswith(f"{name}:0.0")), "") for name in names}


def test_the_installed_app_shows_every_state_at_80x24_and_after_resizes(installed, claude_session, private_tmux, tmp_path):
    agents = [claude_session([], name=name) for name in ("alpha", "bravo")]
    env = private_env(tmp_path, path="/usr/bin:/bin", checkout=False)  # only what the wheel installed
    words = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), str(installed), "-L", private_tmux.name]
    pane = private_tmux.new_session("hs", width=80, height=24, cwd=str(tmp_path), command=["sh", "-c", " ".join(map(shlex.quote, words)) + "; sleep 60"])
    names = [a.name for a in agents]

    def shown(what: str, width: int) -> str:
        deadline = time.monotonic() + 30
        screen = ""
        while time.monotonic() < deadline:
            screen = private_tmux.capture(pane)
            rows = _rows(screen, names)
            drawn = max(len(line.rstrip()) for line in screen.splitlines()) if screen.strip() else 0
            if all("idle" in row for row in rows.values()) and "2 agents" in screen and "State" in screen and drawn > width - 10:
                return screen
            time.sleep(0.3)
        raise AssertionError(f"{what}: not every agent's state is on screen (widest line {drawn}):\n{screen}")

    screen = shown("at 80x24", 80)
    assert "Waiting for" in screen
    private_tmux.run("resize-window", "-t", "hs", "-x", "200", "-y", "50")
    wide = shown("at 200x50", 200)
    assert any("╭" in line and line.index("╭") > 60 for line in wide.splitlines())  # the preview beside the table
    private_tmux.run("resize-window", "-t", "hs", "-x", "80", "-y", "24")
    time.sleep(0.5)
    again = shown("back at 80x24", 80)
    assert "Time" in again and "Waiting for" in again
