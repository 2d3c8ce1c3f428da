"""``headspace doctor``: one screen of checks, each with its fix.

Each check says ok, warn (headspace works, something is missing or off)
or FAIL (headspace cannot do its job), in one line, and the fix in the next.
The exit status is 1 when anything failed.  Nothing here changes the
machine: it only looks (the patches of Textual it checks are applied to
doctor's own process, as the app applies them to its own).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import select
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from ..detect.claude.status_files import claude_config_dir
from ..detect.families import vocabulary
from ..hooks.settings import DENIED_EVENT, HooksError, denied_support
from ..hooks.settings import status as hooks_status
from ..hooks.spool import SpoolRefused, spool_dir, spool_in
from ..hooks.spool import check_spool as spool_is_private
from ..notifications.deliver import desktop_problem, tmux_socket
from ..notifications.direct import terminal_problem
from ..notifications.reach import CLIENT_FORMAT, TERMINAL_FORMAT, Client, Terminal, parse_clients, parse_terminals, status_line_too
from ..rules.rules_file import default_path as rules_path
from ..rules.rules_file import load
from ..service.acting.rule_state import read_state
from ..service.watching.host import LocalHost
from ..service.watching.in_use import config_dirs_in_use, runtimes_in_use
from ..service.watching.sessions import client_cap
from ..shared.config import Config
from ..shared.paths import runtime_dir
from ..shared.safe_text import clean
from ..state.eventlog import default_path as log_path
from ..tmux import status_timers
from ..tmux.server import TmuxCommandError, TmuxServer, TmuxUnavailable
from ..usage.prices import OLD_AFTER_DAYS, own_table_path, table
from .common import EXIT_FAIL, EXIT_OK
from .popup_key import binding, installed_command, popup_programs

OK, WARN, FAIL = "ok", "warn", "FAIL"
MANY_SESSIONS = 100  # a tmux server with this many sessions: what its status timers cost at rest is worth saying
CALM_INTERVAL = 60  # a status-interval this long keeps those timers rare
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
    checks.extend(_status_timers(server, len(sessions)))
    if _control_mode_answers(server):
        checks.append(Check("control mode", OK, "tmux -C answers"))
    else:
        checks.append(Check("control mode", WARN, "tmux -C did not answer in time; headspace polls instead (more CPU)", "update tmux"))
    return checks


def _status_timers(server: TmuxServer, sessions: int) -> list[Check]:
    """With many sessions and a hook on set-option, what tmux's status timers cost it at rest: one per client, headspace's control clients too.

    Each timer is a turn of tmux's loop, and each turn walks every pane's
    clients (docs/speed.md): at 300 sessions with the default 15 s, tmux
    spent 2.4-4% of a core at rest on them.  headspace lines them up
    (tmux/status_timers.py), unless that would run a user's hook on
    set-option or show-options; then a longer ``status-interval`` is the
    user's lever (it also slows a clock in the status line).  Only the
    global hooks are read here: a session's own hook, or its own
    interval, also keeps the service from it, and goes unsaid.
    """
    if sessions < MANY_SESSIONS:
        return []
    try:
        status = server.run("show-options", "-gv", "status").strip()
        interval = int(server.run("show-options", "-gv", "status-interval").strip() or "0")
        panes = len(server.run("list-panes", "-a", "-F", "#{pane_id}").split())
        hooks = server.run("show-hooks", "-g").splitlines()
    except (TmuxCommandError, TmuxUnavailable, ValueError):
        return []
    if status == "off" or interval <= 0 or interval >= CALM_INTERVAL or not status_timers.hooked(hooks):
        return []
    clients = min(sessions, client_cap(panes))  # at most: beyond the cap, sessions without agents have none
    return [
        Check(
            "tmux at rest",
            WARN,
            f"{sessions} sessions, and a hook on set-option or show-options keeps headspace from lining up tmux's status timers: "
            f"tmux wakes about {clients / interval:.0f} times a second for those of its {clients} control clients (status-interval {interval})",
            f"set -g status-interval {CALM_INTERVAL} in ~/.tmux.conf makes that {CALM_INTERVAL // interval} times rarer (a clock in your status line then moves once a minute)",
        )
    ]


def _control_mode_answers(server: TmuxServer, timeout: float = 5.0) -> bool:
    """Whether ``tmux -C list-sessions`` answers with a ``%begin``/``%end`` block.

    Its stdin stays open until the answer is in: a control client whose
    stdin ends at once (``/dev/null``) may exit before the server's answer
    arrives (one run in three on 3.3a printed only ``%exit``), and doctor
    said control mode did not work when it did.
    """
    try:
        child = subprocess.Popen([server.binary, *server.socket_args(), "-C", "list-sessions"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except (OSError, TmuxUnavailable):
        return False
    assert child.stdout is not None and child.stdin is not None
    out, deadline = b"", time.monotonic() + timeout
    try:
        while b"%end" not in out and b"%error" not in out and b"%exit" not in out:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([child.stdout], [], [], left)[0]:
                break
            chunk = os.read(child.stdout.fileno(), 65536)
            if not chunk:
                break
            out += chunk
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=2)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        child.stdout.close()
    return b"%begin" in out and b"%end" in out


def _claude_on_path(env: Mapping[str, str]) -> str | None:
    """Claude Code's binary on ``env``'s PATH, by the name its family starts it with (``Family.starting``)."""
    from ..detect.families import CLAUDE

    assert CLAUDE.starting is not None
    return shutil.which(CLAUDE.starting.program, path=env.get("PATH"))


def check_claude(env: Mapping[str, str]) -> list[Check]:
    binary = _claude_on_path(env)
    if binary is None:
        return [Check("Claude Code", WARN, "no claude on PATH (agents started elsewhere are still found)", "npm install -g @anthropic-ai/claude-code")]
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    if not out:
        return [Check("Claude Code", WARN, f"{binary} did not say its version", "reinstall Claude Code")]
    return [Check("Claude Code", OK, f"{clean(out.splitlines()[0], 80)} ({binary})")]


def agent_config_dirs(server: TmuxServer, env: Mapping[str, str]) -> list[tuple[Path, list[str]]]:
    """The Claude config dirs the server's agents run with (read from each Claude's environment), and their agents.

    Agents may run under other HOMEs or ``CLAUDE_CONFIG_DIR``s than doctor's
    own; those are the dirs whose hooks and status files matter.  With no
    agent running (or no server), doctor's own dir, with no agents.
    """
    try:
        found = asyncio.run(config_dirs_in_use(LocalHost(server)))
    except (TmuxCommandError, TmuxUnavailable, OSError):
        found = {}
    return sorted(found.items()) or [(claude_config_dir(env), [])]


def _for(agents: list[str]) -> str:
    """ "" or " (for work:0.0, api:1.0 and 3 more)": which agents use a config dir."""
    if not agents:
        return ""
    shown = ", ".join(agents[:3])
    return f" (for {shown}{f' and {len(agents) - 3} more' if len(agents) > 3 else ''})"


def check_status_files(env: Mapping[str, str], folders: list[tuple[Path, list[str]]] | None = None) -> list[Check]:
    checks = []
    for config_dir, agents in folders or [(claude_config_dir(env), [])]:
        folder = config_dir / "sessions"
        if not folder.exists():
            checks.append(Check("status files", WARN, f"{folder} does not exist yet{_for(agents)} (no Claude Code has run with this config dir)", "start claude once"))
        elif not os.access(folder, os.R_OK | os.X_OK):
            checks.append(Check("status files", FAIL, f"{folder} cannot be read{_for(agents)}", f"chmod u+rx {folder}"))
        else:
            count = sum(1 for p in folder.glob("*.json"))
            checks.append(Check("status files", OK, f"{folder}: {count} file{'s' if count != 1 else ''}{_for(agents)}"))
    return checks


def me(env: Mapping[str, str] | None = None) -> str:
    """How the user runs this headspace in a fix line: ``headspace`` where that name finds this one, else its path.

    The README's own install (a venv, no PATH change) has no ``headspace``
    on the PATH: a fix that says bare ``headspace`` would not run there.
    """
    command = installed_command()
    found = shutil.which("headspace", path=(env or os.environ).get("PATH"))
    if found and len(command) == 1 and os.path.realpath(found) == os.path.realpath(command[0]):
        return "headspace"
    return shlex.join(command)


def check_hooks(env: Mapping[str, str], folders: list[tuple[Path, list[str]]] | None = None, *, claude: str | None = None) -> list[Check]:
    checks = []
    for config_dir, agents in folders or [(claude_config_dir(env), [])]:
        path = config_dir / "settings.json"
        # hooks install writes where Claude's own rule points (CLAUDE_CONFIG_DIR, else HOME's .claude).
        how = f"{me(env)} hooks install" if config_dir == claude_config_dir(env) else f"CLAUDE_CONFIG_DIR={shlex.quote(str(config_dir))} {me(env)} hooks install"
        try:
            found = hooks_status(path)
        except (HooksError, OSError) as exc:  # a broken settings file is a finding, not a crash
            checks.append(Check("hooks", WARN, f"{path}: {clean(str(exc), 200)}", f"fix the file, then {how}"))
            continue
        support = denied_support(claude if claude is not None else _claude_on_path(env) or "")
        if found.installed and DENIED_EVENT in found.events and support is False:
            # Installed for a newer Claude: this one refuses the whole file over an event it does not know, your permissions too.
            checks.append(Check("hooks", FAIL, f"hooks in {path}{_for(agents)} name {DENIED_EVENT}, which this Claude does not have: it skips the whole file", how))
        elif found.installed and DENIED_EVENT not in found.events and support is True:
            # Installed before headspace listened to it, or for an older Claude: the calls auto mode blocks come from the screen only.
            checks.append(Check("hooks", WARN, f"hooks in {path}{_for(agents)} are out of date: no {DENIED_EVENT} hook, which this Claude has", how))
        elif found.installed:
            checks.append(Check("hooks", OK, f"installed in {path}{_for(agents)}"))
        else:
            checks.append(Check("hooks", WARN, f"hooks not installed in {path}{_for(agents)} (states come from the screen and status files only)", how))
    return checks


def agent_runtimes(server: TmuxServer) -> dict[Path, list[str]]:
    """The runtime folders the server's agents' hooks write under (each Claude's XDG_RUNTIME_DIR), and their agents."""
    try:
        return asyncio.run(runtimes_in_use(LocalHost(server)))
    except (TmuxCommandError, TmuxUnavailable, OSError):
        return {}


def check_spool(env: Mapping[str, str], runtimes: dict[Path, list[str]] | None = None) -> list[Check]:
    """headspace's spool is private, and the agents' hooks write to it (or to one headspace also watches).

    A hook writes under the XDG_RUNTIME_DIR of the Claude that runs it.  When
    that is not headspace's (a tmux server started without one, or headspace
    run from another login), the running app watches the agent's spool and
    listens for its answer hook there too: reported, not a fault.  Where
    that XDG_RUNTIME_DIR does not exist, the hook drops every event.
    """
    folder = spool_dir(env)
    try:
        spool_is_private(folder)  # the rule the hook program and the monitor apply
    except SpoolRefused as exc:
        return [Check("hook spool", FAIL, str(exc), f"chmod 700 the folder named (under {folder.parent.parent}), or remove it")]
    checks = [Check("hook spool", OK, f"{folder} is private" if folder.exists() else f"{folder} (made 0700 when needed)")]
    own = os.path.realpath(folder.parent)
    mine = env.get("XDG_RUNTIME_DIR", "")
    tmux_line = f"tmux set-environment -g XDG_RUNTIME_DIR {shlex.quote(mine)}" if os.path.isabs(mine) else "tmux set-environment -g -u XDG_RUNTIME_DIR"
    same = f"one XDG_RUNTIME_DIR for both: {tmux_line} (for new panes), then restart those agents; or start headspace with theirs"
    for runtime, agents in sorted((runtimes or {}).items()):
        if os.path.realpath(runtime) == own:
            continue
        theirs = spool_in(runtime)
        if not runtime.parent.is_dir():
            detail = f"hooks write under {runtime.parent}, which does not exist{_for(agents)}: their events are dropped, headspace reads {folder}"
            checks.append(Check("hook spool", WARN, detail, same))
            continue
        try:
            spool_is_private(theirs)
        except SpoolRefused as exc:
            checks.append(Check("hook spool", FAIL, f"{exc}{_for(agents)}", f"chmod 700 the folder named (under {runtime.parent}), or remove it"))
            continue
        why = "they have no XDG_RUNTIME_DIR" if runtime == runtime_dir({}) else "by their XDG_RUNTIME_DIR"
        detail = f"split: hooks write to {theirs}{_for(agents)} ({why}), not to {folder}: headspace watches and answers there too"
        checks.append(Check("hook spool", OK, detail))
    return checks


def popup_fix() -> str:
    return f"{me()} popup-binding >> ~/.tmux.conf && tmux source-file ~/.tmux.conf"


def check_popup_key(server: TmuxServer) -> list[Check]:
    """Whether the server can start the headspace a popup key runs.

    A tmux server runs a popup's command with its own global environment,
    kept from when it started: a PATH without ``~/.local/bin`` (the server
    began before ``pipx ensurepath``) makes a bare ``display-popup -E
    headspace`` close at once, without a word.
    """
    try:
        server.run("list-sessions")  # first: list-keys would start a server where there is none
        keys = popup_programs(server.run("list-keys"))
    except (TmuxCommandError, TmuxUnavailable):
        return []  # no server: the tmux check says so
    path = server.global_path()
    search = path if path is not None else os.defpath  # no PATH in the server's environment: sh's default
    line = binding()
    if not keys:
        on_path = shutil.which("headspace", path=search)
        where = f"headspace is on the tmux server's PATH ({on_path})" if on_path else "the tmux server's PATH has no headspace; a key must name it by its path"
        return [Check("popup key", OK, f"no popup key bound ({where}); to add one: {popup_fix()}")]
    checks = []
    for key in keys:
        program = key.program
        if "/" in program:
            found = program if os.path.isfile(program) and os.access(program, os.X_OK) else None
            missing = f"prefix {key.key} runs {program}, which is not there (moved or uninstalled): the popup closes at once"
        else:
            found = shutil.which(program, path=search)
            missing = f"prefix {key.key} runs {program!r}, which the tmux server's PATH ({search}) does not hold: the popup closes at once"
        if found and key.warm:
            checks.append(Check("popup key", OK, f"prefix {key.key} opens headspace in a popup ({found}), kept warm between opens"))
        elif found:
            cold = f"prefix {key.key} opens headspace in a popup ({found}); each open starts it anew, forgetting the selection and filter"
            checks.append(Check("popup key", OK, cold, f"for the warm popup, replace that bind-key line with: {line}"))
        else:
            checks.append(Check("popup key", WARN, missing, f"in ~/.tmux.conf, replace that bind-key line with: {line}; then tmux source-file ~/.tmux.conf"))
    return checks


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
SAYS = {"osc": "OSC 9 and a bell", "osc777": "OSC 777 and a bell", "bell": "a bell"}


def check_notifications(env: Mapping[str, str], config: Config | None = None) -> list[Check]:
    """Which way a notification reaches the user's terminal(s) (notifications/reach.py), and the extra channels.

    doctor runs where headspace would: outside tmux its terminal gets them;
    inside, the clients of that server ($TMUX, which need not be the
    watched one) each get them through tmux or straight to their terminal.
    """
    config = config or Config()
    checks = []
    if config.notify == "none":
        checks.append(Check("notifications", OK, 'notify = "none": nothing is written to a terminal'))
    elif not env.get("TMUX"):
        checks.append(Check("notifications", OK, f"not inside tmux: {SAYS[config.notify]} straight to headspace's terminal"))
    else:
        checks += _tmux_paths(env, config.notify)
    if config.notify_command:
        checks.append(_command_check(config.notify_command, env))
    if config.desktop_notify:
        problem = desktop_problem(env)
        checks.append(Check("desktop_notify", WARN, problem, "desktop_notify = false, or run headspace on your desktop") if problem else Check("desktop_notify", OK, "notify-send too"))
    return checks


def _tmux_paths(env: Mapping[str, str], mode: str) -> list[Check]:
    server = TmuxServer(socket_path=tmux_socket(env))
    try:
        text = server.run("display-message", "-p", "#{version}").strip()
        clients = parse_clients(server.run("list-clients", "-F", CLIENT_FORMAT))
        terminals = parse_terminals(server.run("list-clients", "-F", TERMINAL_FORMAT))
    except (TmuxCommandError, TmuxUnavailable) as exc:
        return [Check("notifications", WARN, f"the tmux server of $TMUX did not answer ({clean(str(exc), 200)})", "run doctor inside the tmux you run headspace in")]
    found = re.search(r"(\d+)\.(\d+)", text)
    version = (int(found.group(1)), int(found.group(2))) if found else None
    says = SAYS[mode]
    if mode == "bell":
        how = "tmux rings the clients whose session has headspace's window; every other client gets the bell straight to its terminal"
    elif version is not None and version >= PASSTHROUGH_ALL:
        how = f"passthrough (all) to every client whose session has headspace's window; a client in another session gets the {mode.upper()} straight to its terminal"
    else:
        how = "passthrough only to a client showing headspace's pane (this tmux knows no 'all'); every other client gets it straight to its terminal (client_tty)"
    checks = [Check("notifications", OK, f"tmux {text}: {says}: {how}")]
    users = [c for c in clients if not c.control]
    for client in users:
        problem = terminal_problem(client.tty)
        if problem:
            checks.append(
                Check(
                    "  client",
                    WARN,
                    f"{client.name}: {problem}: there only what tmux passes on (passthrough, the bell of headspace's window)",
                    "attach from your own terminal",
                )
            )
        else:
            checks.append(Check("  client", OK, f"{client.tty}: its terminal can be written to, so it is reached in any session (direct when tmux would not pass it on)"))
        checks.append(_terminal_check(client, terminals.get(client.name), mode))
    if not users:
        checks.append(Check("  client", OK, "no client attached now: each one attached later is reached the same way"))
    return checks


def _terminal_check(client: Client, terminal: Terminal | None, mode: str) -> Check:
    """What this client's terminal shows of a notification (reach.py's ``status_line_too``: the app decides the same way)."""
    kind = clean(((terminal.termtype or terminal.termname) if terminal else "") or "unknown", 80)
    osc = SAYS[mode].removesuffix(" and a bell")
    if status_line_too(client, terminal, mode):
        shown = "a bell alone" if mode == "bell" else f"not known to show {osc}"
        return Check("  terminal", OK, f"{client.name} ({kind}): {shown}: the notice also goes to its tmux status line (display-message)")
    return Check("  terminal", OK, f"{client.name} ({kind}): shows {osc} itself")


def _command_check(argv: tuple[str, ...], env: Mapping[str, str]) -> Check:
    program = os.path.expanduser(argv[0])
    where = program if "/" in program else shutil.which(program, path=env.get("PATH"))
    line = shlex.join(argv)
    if where is None or not (os.path.isfile(where) and os.access(where, os.X_OK)):
        return Check("notify_command", WARN, f"{line}: {argv[0]!r} not found or not executable", "fix notify_command in the config")
    return Check("notify_command", OK, f"runs {line} per notification (no shell; the text in HEADSPACE_TITLE, HEADSPACE_BODY, HEADSPACE_TEXT, HEADSPACE_AGENTS)")


def check_patches() -> list[Check]:
    """Whether each of the app's process-wide patches of Textual applies here, and to the Textual it was checked against; and the gc pacing.

    Imported here, not at the top: the app's modules import Textual, which
    doctor's other checks do not need.
    """
    from ..app import gc_pace, patches

    pinned = patches.PINNED["textual"]
    checks = []
    for patch in patches.PATCHES:
        try:
            fine, detail = patches.check(patch)
        except Exception as exc:  # noqa: BLE001 - a patch that breaks on this Textual is a finding, not a crash
            fine, detail = False, f"not applied: {type(exc).__name__}: {exc}"
        fix = f"install the pinned textual=={pinned} (pip install textual=={pinned}), or re-check the patch (app/textual_private.py) against this one"
        checks.append(Check(f"patch: {patch.name}", OK if fine else WARN, detail, fix))
    problem = gc_pace.refusal()
    version = f"Python {sys.version_info[0]}.{sys.version_info[1]}"
    if problem:
        detail = f"{problem}: not applied (the interpreter paces its own collections; keys may wait for one)"
        checks.append(Check("gc pacing", WARN, detail, "run headspace on a Python it was measured on (app/gc_pace.py)"))
    else:
        checks.append(Check("gc pacing", OK, f"{version}, {gc_pace.GENERATIONS} generations: paced as measured (app/gc_pace.py)"))
    return checks


def check_rules(env: Mapping[str, str]) -> list[Check]:
    """The rules file as the service reads it, and whether the rules' state (ttl, uses, pauses, revocations) can be read.

    A state that cannot be read makes every live rule a shadow rule (it
    logs what it would do, answers nothing): a pause or revocation unseen
    must not be answered past (service/acting/rule_state.py).
    """
    loaded = load(rules_path(env), tools=vocabulary())
    if not loaded.rules and not loaded.errors:
        return [Check("rules", OK, "no rules file: nothing answers for you")]
    checks = []
    if loaded.errors:
        checks.append(Check("rules", WARN, loaded.errors[0], "fix the rule named (the others still load); 'headspace rules list' shows every one"))
    if loaded.rules:
        _, unreadable = read_state(log_path(env))
        if unreadable:
            fix = "let headspace have its event log back (its permissions), or move a damaged one aside: a new one starts"
            checks.append(Check("rules state", FAIL, f"live rules answer nothing (they act as shadow rules): {unreadable}", fix))
        else:
            live = sum(not r.shadow for r in loaded.rules)
            checks.append(Check("rules", OK, f"{len(loaded.rules)} loaded ({live} live); their state in the event log reads"))
    return checks


def check_prices(today: date | None = None) -> list[Check]:
    """The price table's date (estimates and context windows come from it), and the user's own prices.json if it was not read."""
    known = table()
    age = known.age_days(today)
    checks = []
    if known.problem:
        checks.append(Check("prices", WARN, known.problem, f"fix {own_table_path()} (the shipped table is used meanwhile)"))
    words = f"{known.words()}: {len(known.prices)} models"
    if age > OLD_AFTER_DAYS:
        fix = f"update headspace for newer prices, or put the models you run in {own_table_path()} (same form as the shipped prices.json)"
        checks.append(Check("prices", WARN, f"{words}, {age} days old: a newer model may have no estimate or window", fix))
    else:
        checks.append(Check("prices", OK, words))
    return checks


def check_push(server: TmuxServer) -> list[Check]:
    """The phone page's Web Push for this server's service: how many phones asked, and how the last pushes went (sent, suppressed, failed, gone).

    Read from the file the service keeps (web/push.py): a push that failed
    says why here as on the page, so a notification that never came is
    not a mystery.  Nothing when no phone ever asked.
    """
    from ..shared.resident_place import place_of
    from ..web.push import FAILED, GONE, SUPPRESSED, read_results, store_path

    try:
        kept = read_results(store_path(place_of(server.identity).name))
    except (TmuxCommandError, TmuxUnavailable, OSError):
        return []
    if kept is None:
        return []
    phones, results = kept
    last = results[-10:]
    counts = ", ".join(f"{sum(r.outcome == outcome for r in last)} {outcome}" for outcome in ("sent", SUPPRESSED, FAILED, GONE) if any(r.outcome == outcome for r in last))
    said = f"{phones} subscribed" + (f"; the last {len(last)} pushes: {counts}" if last else "; nothing pushed yet")
    newest = last[-1] if last else None
    if newest is not None and newest.outcome != "sent":
        said += f"; the last one {newest.outcome}: {newest.why}"
    if newest is not None and newest.outcome in (FAILED, GONE):
        return [Check("phone push", WARN, said, "open the page on the phone: Notifications lists each push and why; turn it on again there if it was dropped")]
    return [Check("phone push", OK, said)]


def check_plugins() -> list[Check]:
    """The agent families installed as plug-ins (entry points ``headspace.families``): each one loaded, or why not; nothing when there are none."""
    from ..detect.families import PLUGIN_GROUP, load_plugins

    fix = f"fix or uninstall the package that declares it under {PLUGIN_GROUP}"
    return [Check("plug-in", WARN if plugin.problem else OK, plugin.said(), fix) for plugin in load_plugins()]


def run_checks(server: TmuxServer, env: Mapping[str, str] | None = None, config: Config | None = None, config_problem: str = "") -> list[Check]:
    env = os.environ if env is None else env
    folders = agent_config_dirs(server, env)
    settings = [Check("config", WARN, config_problem, "fix the file (headspace starts with the defaults and says so)")] if config_problem else []
    return [
        *check_tmux(server),
        *settings,
        *check_claude(env),
        *check_plugins(),
        *check_status_files(env, folders),
        *check_hooks(env, folders),
        *check_spool(env, agent_runtimes(server)),
        *check_popup_key(server),
        *check_terminal(env),
        *check_notifications(env, config),
        *check_push(server),
        *check_rules(env),
        *check_prices(),
        *check_patches(),
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


def cmd_doctor(args: argparse.Namespace) -> int:
    from ..shared.config import Config, ConfigError, load_config
    from ..tmux.server import TmuxServer

    problem = ""
    try:
        config = load_config(getattr(args, "config", None))
    except ConfigError as exc:  # a finding like the others: the checks still run, with the defaults
        config, problem = Config(), str(exc)
    checks = run_checks(TmuxServer(socket_name=args.socket_name, socket_path=args.socket_path), config=config, config_problem=problem)
    print(report(checks))
    return EXIT_FAIL if any(c.verdict == FAIL for c in checks) else EXIT_OK
