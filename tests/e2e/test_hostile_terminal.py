"""Hostile names, checked in the bytes a real terminal receives.

Server A (private) holds panes whose folder names carry escape sequences (a
clipboard write, a title change, a terminal query whose answer would come
back as keystrokes) and sessions named like markup. headspace runs with
``--all`` inside ``script`` (a real pty, recording every byte headspace
writes), itself inside a pane of server B. The selection walks over every
row (a markup name once crashed the app when its row was selected), then
``q``.

What must hold: none of the injected sequences appears in what headspace
wrote (its own escape codes are fine: we look for the injected ones), the
names are shown with visible placeholders, the app exits 0 without a
traceback; a broken config file is said in one line inside the TUI; and the
attach command printed for a session named ``x'; touch PWNED; echo '`` is
quoted for the shell.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.harness.env import private_env
from tests.harness.tmux import PrivateTmux

pytestmark = pytest.mark.e2e

CLIPBOARD = "\x1b]52;c;SEVMTE8=\x1b\\"
TITLE = "\x1b]0;TITLE\x07"
QUERY = "\x1b[5n"
HOSTILE_DIR = f"x_{CLIPBOARD}_{TITLE}_{QUERY}_"
MARKUP_NAMES = ("a[/b]", "fix [/] bug", "[bold red]loud")
QUOTE_NAME = "x'; touch PWNED; echo '"


def _need(tool: str) -> None:
    if shutil.which(tool) is None:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"{tool} is not installed")
        pytest.skip(f"{tool} is not installed")


@pytest.fixture
def world(tmp_path):
    """Server A with hostile sessions and folders, server B to hold the real terminal."""
    _need("tmux")
    _need("script")
    root = Path(tempfile.mkdtemp(prefix="hs-hostile-"))
    home = root / "home"
    home.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    a, b = PrivateTmux(env), PrivateTmux(env)
    hostile = root / HOSTILE_DIR
    hostile.mkdir()
    shell = ["sh", "-c", "sleep 600"]
    a.new_session("plain", width=80, height=24, cwd=str(hostile), command=shell)
    for name in (*MARKUP_NAMES, QUOTE_NAME):
        a.new_session(name, width=80, height=24, cwd=str(root), command=shell)
    try:
        yield a, b, root
    finally:
        a.close()
        b.close()
        shutil.rmtree(root, ignore_errors=True)


def _run_headspace(a: PrivateTmux, b: PrivateTmux, root: Path, *, width: int, height: int, keys: list[str], config: bytes | None = None):
    """headspace --all on server A, in a real pty (script) in a pane of server B; returns (bytes, screen, exit, stdout)."""
    typescript = root / f"typescript-{width}x{height}"
    status = root / f"exit-{width}x{height}"
    xdg = root / f"xdg-{width}x{height}"
    (xdg / "run").mkdir(parents=True, mode=0o700)
    args = [sys.executable, "-m", "headspace_tui", "-L", a.name, "--all"]
    if config is not None:
        (xdg / "config.toml").write_bytes(config)
        args += ["--config", str(xdg / "config.toml")]
    inner = " ".join(shlex.quote(x) for x in args)
    command = f"script -q -e -c {shlex.quote(inner)} {shlex.quote(str(typescript))}; echo $? > {shlex.quote(str(status))}; sleep 60"
    env = private_env(root / "home", xdg, claude_dir=xdg / "claude")
    pane = b.new_session(f"term{width}", width=width, height=height, cwd=str(root), command=["sh", "-c", command], env=env)
    deadline = time.monotonic() + 30
    screen = ""
    while time.monotonic() < deadline:
        screen = b.capture(pane)
        if "fix [/] bug" in screen or "Traceback" in screen or status.exists():
            break
        time.sleep(0.2)
    for key in keys:
        b.send_keys(pane, key)
        time.sleep(0.3)
        screen += "\n" + b.capture(pane)
    time.sleep(0.5)
    screen += "\n" + b.capture(pane)
    b.send_keys(pane, "q")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not (status.exists() and status.read_text().strip()):
        time.sleep(0.2)
    code = int(status.read_text().strip()) if status.exists() and status.read_text().strip() else None
    after = b.capture(pane)
    return typescript.read_bytes(), screen, code, after


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_hostile_names_never_reach_the_terminal_raw(world, size):
    a, b, root = world
    written, screen, code, _ = _run_headspace(a, b, root, width=size[0], height=size[1], keys=["Down"] * 6 + ["Up"] * 6)
    text = written.decode("utf-8", "replace")
    assert code == 0, f"headspace exited {code}; the terminal showed:\n{screen[-3000:]}"
    assert "Traceback" not in text
    for sequence in (CLIPBOARD, TITLE, QUERY, "\x1b]52", "\x1b]0;TITLE"):
        assert sequence.encode() not in written, f"{sequence!r} reached the terminal"
    # The rows are there, the names shown as text, the escapes as visible placeholders.
    for name in MARKUP_NAMES:
        assert name in screen, f"{name!r} not shown"
    # The hostile name is the plain pane's folder: shown (escapes as visible
    # placeholders) where the table has room for the Folder column; at 80
    # columns that column is the first to go, by design (issue 11).
    if size[0] >= 100:
        assert "SEVMTE8=" in screen and "␛" in screen


def test_a_broken_config_is_said_inside_the_tui(world):
    a, b, root = world
    written, screen, code, _ = _run_headspace(a, b, root, width=120, height=40, keys=[], config=b'nudge_text = "\xff"\n')
    assert code == 0
    # The toast, as the terminal shows it: the text right of its left border (▌) on each of its lines, joined.
    # (It sits over the preview's upper half since issue 37: the preview's cells left of it and its right
    # border "│" after it are not its words.)
    toast = " ".join(" ".join(line.split("\u258c", 1)[1].rstrip().removesuffix("\u2502").split()) for line in screen.splitlines() if "\u258c" in line)
    assert "not UTF-8 text" in toast and "using the defaults" in toast, screen
    assert "fix [/] bug" in screen  # and the app runs on


def test_the_attach_command_is_quoted_for_the_shell(world, monkeypatch):
    a, b, root = world
    # Select the row of the session with quotes in its name: filter on it, then Enter.
    keys = ["/", *"PWNED", "Enter", "Enter"]
    written, screen, code, after = _run_headspace(a, b, root, width=120, height=40, keys=keys)
    text = written.decode("utf-8", "replace")
    assert code == 0, screen[-2000:]
    line = next(line for line in text.splitlines() if line.strip().startswith("tmux ") and " attach " in line).strip()
    words = shlex.split(line)
    assert words[:3] == ["tmux", "-L", a.name] and words[3:5] == ["attach", "-t"]
    panes = dict(line.split("\t") for line in a.run("list-panes", "-a", "-F", "#{session_name}\t#{pane_id}").splitlines())
    assert words[5] == panes[QUOTE_NAME]
    # Pasted into a shell, with a stand-in tmux that only prints its arguments: nothing else runs.
    shim = root / "shim"
    shim.mkdir()
    (shim / "tmux").write_text("#!/bin/sh\nprintf '%s\\n' \"$@\"\n")
    (shim / "tmux").chmod(0o755)
    work = root / "paste"
    work.mkdir()
    ran = subprocess.run(["sh", "-c", line], cwd=work, env={"PATH": f"{shim}:/usr/bin:/bin"}, capture_output=True, text=True, timeout=10)
    assert ran.returncode == 0
    assert not (work / "PWNED").exists()
