"""``headspace doctor``: one screen of checks, each with its fix.

Each check says ok, warn (headspace works, something is missing or off)
or FAIL (headspace cannot do its job), in one line, and the fix in the next.
The exit status is 1 when anything failed.  Nothing here changes the
machine: it only looks.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from ..detect.claude.status_files import claude_config_dir
from ..hooks.settings import HooksError
from ..hooks.settings import status as hooks_status
from ..hooks.spool import SpoolRefused, spool_dir
from ..hooks.spool import check_spool as spool_is_private
from ..shared.safe_text import clean
from ..tmux.server import TmuxCommandError, TmuxServer, TmuxUnavailable

OK, WARN, FAIL = "ok", "warn", "FAIL"
MIN_TMUX = (3, 2)  # control mode with pane output and the formats headspace asks for


@dataclass(frozen=True)
class Check:
    name: str
    verdict: str  # OK, WARN, FAIL
    detail: str
    fix: str = ""


def _tmux_version() -> tuple[str, tuple[int, int] | None]:
    try:
        out = subprocess.run(["tmux", "-V"], capture_output=True, text=True, timeout=5, stdin=subprocess.DEVNULL).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "", None
    found = re.search(r"(\d+)\.(\d+)", out)
    return out, (int(found.group(1)), int(found.group(2))) if found else None


def check_tmux(server: TmuxServer) -> list[Check]:
    text, version = _tmux_version()
    if not text:
        return [Check("tmux", FAIL, "tmux is not installed", "install tmux 3.2 or newer (apt install tmux, brew install tmux)")]
    checks = []
    if version is not None and version < MIN_TMUX:
        checks.append(Check("tmux", FAIL, f"{text}: too old for control mode", "install tmux 3.2 or newer"))
    else:
        checks.append(Check("tmux", OK, text))
    try:
        sessions = [line for line in server.run("list-sessions", "-F", "#{session_name}").splitlines() if line]
    except (TmuxCommandError, TmuxUnavailable) as exc:
        checks.append(Check("tmux server", FAIL, f"no tmux server on {server.where()} ({exc})", "start tmux (or point headspace at yours with -L NAME / -S PATH)"))
        return checks
    checks.append(Check("tmux server", OK, f"{len(sessions)} session{'s' if len(sessions) != 1 else ''} on {server.where()}"))
    try:
        control = subprocess.run(
            [server.binary, *server.socket_args(), "-C", "list-sessions"], capture_output=True, text=True, timeout=5, stdin=subprocess.DEVNULL
        )
        if "%begin" in control.stdout:
            checks.append(Check("control mode", OK, "tmux -C answers"))
        else:
            checks.append(Check("control mode", WARN, "tmux -C did not answer; headspace polls instead (more CPU)", "update tmux"))
    except (OSError, subprocess.TimeoutExpired):
        checks.append(Check("control mode", WARN, "tmux -C did not answer in time; headspace polls instead", "update tmux"))
    return checks


def check_claude(env: Mapping[str, str]) -> list[Check]:
    binary = shutil.which("claude", path=env.get("PATH"))
    if binary is None:
        return [Check("Claude Code", WARN, "no claude on PATH (agents started elsewhere are still found)", "npm install -g @anthropic-ai/claude-code")]
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    if not out:
        return [Check("Claude Code", WARN, f"{binary} did not say its version", "reinstall Claude Code")]
    return [Check("Claude Code", OK, f"{clean(out.splitlines()[0], 80)} ({binary})")]


def check_status_files(env: Mapping[str, str]) -> list[Check]:
    folder = claude_config_dir(env) / "sessions"
    if not folder.exists():
        return [Check("status files", WARN, f"{folder} does not exist yet (no Claude Code has run with this config dir)", "start claude once")]
    if not os.access(folder, os.R_OK | os.X_OK):
        return [Check("status files", FAIL, f"{folder} cannot be read", f"chmod u+rx {folder}")]
    count = sum(1 for p in folder.glob("*.json"))
    return [Check("status files", OK, f"{folder}: {count} file{'s' if count != 1 else ''}")]


def check_hooks(env: Mapping[str, str]) -> list[Check]:
    path = claude_config_dir(env) / "settings.json"
    try:
        found = hooks_status(path)
    except (HooksError, OSError) as exc:  # a broken settings file is a finding, not a crash
        return [Check("hooks", WARN, f"{path}: {clean(str(exc), 200)}", "fix the file, then headspace hooks install")]
    if found.installed:
        return [Check("hooks", OK, f"installed in {path}")]
    return [Check("hooks", WARN, f"hooks not installed in {path} (states come from the screen and status files only)", "headspace hooks install")]


def check_spool(env: Mapping[str, str]) -> list[Check]:
    folder = spool_dir(env)
    try:
        spool_is_private(folder)  # the rule the hook program and the monitor apply
    except SpoolRefused as exc:
        return [Check("hook spool", FAIL, str(exc), f"chmod 700 the folder named (under {folder.parent.parent}), or remove it")]
    return [Check("hook spool", OK, f"{folder} is private" if folder.exists() else f"{folder} (made 0700 when needed)")]


def check_terminal(env: Mapping[str, str]) -> list[Check]:
    term, colorterm = env.get("TERM", ""), env.get("COLORTERM", "")
    if "NO_COLOR" in env:
        return [Check("terminal colours", OK, "NO_COLOR is set: no colour; states by glyph and word, waiting rows reversed")]
    if colorterm in ("truecolor", "24bit"):
        return [Check("terminal colours", OK, f"true colour (TERM={term}, COLORTERM={colorterm})")]
    if term.endswith("256color") or term == "kitty":
        return [Check("terminal colours", OK, f"256 colours (TERM={term})")]
    if not term or term == "dumb":
        return [Check("terminal colours", WARN, f"TERM={term or '(unset)'}: not a full-screen terminal", "set TERM=xterm-256color")]
    return [Check("terminal colours", OK, f"16 colours (TERM={term}): the headspace-16 theme is used", "set COLORTERM=truecolor if your terminal has more")]


PASSTHROUGH_ALL = (3, 4)  # allow-passthrough "all": also from a pane you are not looking at


def check_passthrough(env: Mapping[str, str]) -> list[Check]:
    """Whether a notification from headspace can leave tmux.

    headspace allows passthrough on its own pane when it starts (notifications/deliver.py),
    so what is left to check is what tmux can do: from 3.4 it passes
    notifications from a pane in another window ("all"); 3.2-3.3 only from a
    visible one (the bell still marks headspace's window).
    """
    if not env.get("TMUX"):
        return [Check("notifications", OK, "not inside tmux: the terminal gets them directly")]
    text, version = _tmux_version()
    if version is not None and version >= PASSTHROUGH_ALL:
        return [Check("notifications", OK, f"{text}: headspace allows passthrough on its own pane (all): notifications reach your terminal from any window")]
    return [
        Check(
            "notifications",
            WARN,
            f"{text or 'tmux'}: notifications leave tmux only while headspace's pane is visible (elsewhere its window gets the bell flag)",
            "tmux 3.4 or newer, or keep headspace in view (a split, or a popup)",
        )
    ]


def run_checks(server: TmuxServer, env: Mapping[str, str] | None = None) -> list[Check]:
    env = os.environ if env is None else env
    return [
        *check_tmux(server),
        *check_claude(env),
        *check_status_files(env),
        *check_hooks(env),
        *check_spool(env),
        *check_terminal(env),
        *check_passthrough(env),
    ]


def report(checks: list[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = []
    for check in checks:
        lines.append(f"{check.verdict:>4}  {check.name:<{width}}  {clean(check.detail, 300)}")
        if check.fix and check.verdict != OK:
            lines.append(f"{'':>4}  {'':<{width}}  fix: {clean(check.fix, 300)}")
    failed = sum(c.verdict == FAIL for c in checks)
    warned = sum(c.verdict == WARN for c in checks)
    lines.append("")
    lines.append("broken: " + f"{failed} check{'s' if failed != 1 else ''} failed" if failed else f"healthy ({warned} warning{'s' if warned != 1 else ''})")
    return "\n".join(lines)


