"""Command-line entry points: the TUI, ``status``, ``classify``, ``send``, ``new``, ``hooks``, ``doctor`` and ``popup-binding``.

Every failure a user can cause (no tmux server, unknown target, unreadable
file, a pane not at the expected prompt) ends in one line on stderr and a
non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import __version__

# Nothing heavy at the top: the popup key's launcher (``headspace popup``) runs through here
# and must not pay for Rich (safe_text) or the model before it becomes a tmux client.

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def json_line(value: object) -> str:
    """One JSON line for a terminal or a pipe: non-ASCII text kept readable, but
    C1 controls and bidi overrides escaped (JSON itself escapes only C0)."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def clean(value: object, limit: int | None = None) -> str:
    """``shared.safe_text.clean``, imported when first needed."""
    from ..shared import safe_text

    return safe_text.clean(value) if limit is None else safe_text.clean(value, limit)


class UserError(Exception):
    """A problem to report in one line, with a non-zero exit."""


def _add_server_options(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    # Subcommands must not reset what was given before them (headspace -L x status).
    default = None if top else argparse.SUPPRESS
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-L", dest="socket_name", metavar="NAME", default=default, help="tmux server socket name (as tmux -L)")
    group.add_argument("-S", dest="socket_path", metavar="PATH", default=default, help="tmux server socket path (as tmux -S)")


def _add_host_options(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    default = None if top else argparse.SUPPRESS
    parser.add_argument(
        "--host",
        action="append",
        metavar="HOST",
        default=default,
        help="a remote host: a [hosts.NAME] of the config, or anything ssh accepts (user@box, an ~/.ssh/config alias); repeatable; without it every configured host",
    )
    parser.add_argument("--no-local", action="store_true", default=False if top else argparse.SUPPRESS, help="leave this machine's tmux server out")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="headspace",
        description="One screen for every coding agent in tmux (Claude Code, Codex, Gemini CLI, opencode): who needs you, answered in one key.",
        epilog="Run 'headspace COMMAND --help' for a command's options. In the app, press ? for the keys.",
    )
    parser.add_argument("--version", action="version", version=f"headspace {__version__}")
    _add_server_options(parser, top=True)
    _add_host_options(parser, top=True)
    parser.add_argument("--all", action="store_true", help="show every pane, not only coding agents")
    parser.add_argument(
        "--no-service",
        action="store_true",
        help="watch from this process alone, without the resident service (headspace serve): nothing rings or remembers snoozes once it closes",
    )
    parser.add_argument("--config", type=Path, metavar="FILE", help="config file (default: $XDG_CONFIG_HOME/headspace/config.toml)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    status = sub.add_parser("status", help="scan once and print every agent's state")
    _add_server_options(status)
    _add_host_options(status)
    status.add_argument("--json", action="store_true", help="one JSON object per agent, one per line")
    status.add_argument("--all", action="store_true", default=argparse.SUPPRESS, help="include panes that run no coding agent")

    classify = sub.add_parser("classify", help="classify a saved 'tmux capture-pane -p -e' file (for bug reports)")
    classify.add_argument("file", type=Path, help="the capture file ('-' for standard input)")
    classify.add_argument("--agent", default="claude", metavar="NAME", help="which agent drew it: claude (default), codex, gemini or opencode")
    classify.add_argument("--command", dest="pane_command", metavar="NAME", help="the pane's #{pane_current_command}")
    classify.add_argument("--claude-version", metavar="X.Y.Z", help="the agent's version that drew it (Claude: default the banner's, else the newest rules)")
    classify.add_argument("--title", metavar="TEXT", help="the pane's #{pane_title}, read as the live pane's would be (Codex shows a streaming reply only there)")
    classify.add_argument("--json", action="store_true", help="print the observation as JSON")
    _add_server_options(classify)  # accepted for symmetry; classify never talks to tmux

    send = sub.add_parser("send", help="answer an agent through the guarded path (through the resident service when one runs)")
    _add_server_options(send)
    send.add_argument("target", help="pane id (%%3, or %%3@HOST), session:window.pane, or session name")
    send.add_argument("--host", metavar="HOST", help="the pane is on this remote host (a [hosts.NAME], or anything ssh accepts)")
    what = send.add_mutually_exclusive_group(required=True)
    what.add_argument("--approve", action="store_true", help="approve this one request or plan: a plain 'Yes', never an option that widens permissions (auto mode, don't ask again)")
    what.add_argument("--deny", action="store_true", help="choose the 'No' option (found by its label)")
    what.add_argument(
        "--option",
        type=option_keys,
        metavar="N[,M...]",
        help="choose option N of the menu; at a multi-select question, tick exactly N,M,... and submit",
    )
    what.add_argument("--submit", action="store_true", help="submit a multi-select question's ticked boxes (or, at Claude's review page, every answer)")
    what.add_argument("--text", metavar="TEXT", help="type TEXT at Claude's input box (at a question: into its 'Type something.' option) and submit it")
    what.add_argument("--nudge", action="store_true", help="send the nudge text (default 'continue')")
    what.add_argument("--interrupt", action="store_true", help="press Esc to interrupt the agent (only while it works)")
    send.add_argument(
        "--expect",
        metavar="REQUEST",
        help="send only if the prompt on display is still this request (the 'request' of 'status --json': one appearance of it, "
        "so the same words asked again are refused); needs the running headspace service",
    )
    send.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for confirmation (default 5; through a running service, its own confirm_timeout)")

    diff = sub.add_parser("diff", help="print what an agent changed in its work tree: this turn (default) or since it started (from the resident service)")
    _add_server_options(diff)
    diff.add_argument("target", help="pane id (%%3, or %%3@HOST), session:window.pane, or session name")
    scope = diff.add_mutually_exclusive_group()
    scope.add_argument("--turn", action="store_const", const="turn", dest="scope", help="since the agent's current turn began (the default)")
    scope.add_argument("--since-start", action="store_const", const="start", dest="scope", help="since the agent started (or since headspace first saw it)")
    diff.add_argument("--stat", action="store_true", help="files with their added and removed line counts, then the totals")

    rules = sub.add_parser("rules", help="the rules that answer for you (rules.toml): list them, or try one on your history")
    rules_sub = rules.add_subparsers(dest="action", required=True)
    rules_sub.add_parser("list", help="each rule with its line, scope, mode, uses and expiry; and every rule refused, with why")
    trial = rules_sub.add_parser("test", help="what a rule would have answered of your recent answers (nothing is sent)")
    trial.add_argument("id", help="the rule's id")
    trial.add_argument("--days", type=float, default=7.0, help="how far back (default 7)")
    suggest = rules_sub.add_parser("suggest", help="the narrowest rule for each request you approved several times alike (printed, not written)")
    suggest.add_argument("--times", type=int, default=3, help="approved at least this often (default 3)")
    suggest.add_argument("--days", type=float, default=7.0, help="how far back (default 7)")
    for verb, says in (("pause", "stop rules answering (all of them, or on one host, or one rule) until resumed"), ("resume", "let paused rules answer again")):
        pausing = rules_sub.add_parser(verb, help=says)
        pausing.add_argument("--host", default="", help="only on this host (local, or a configured host's name)")
        pausing.add_argument("--rule", default="", help="only this rule")
    revoking = rules_sub.add_parser("revoke", help="end a rule for good, as it is written now (edit it to make another)")
    revoking.add_argument("id", help="the rule's id")

    new = sub.add_parser(
        "new",
        help="start Claude Code in a new tmux window (optionally in a fresh git worktree)",
        description="Start 'claude' in a new detached tmux window, in DIR (default: here). Everything after '--' goes to claude as its arguments (headspace new . -- --model opus).",
    )
    _add_server_options(new)
    new.add_argument("dir", nargs="?", type=Path, default=None, metavar="DIR", help="the folder to start in (default: the current one)")
    new.add_argument(
        "--worktree",
        metavar="BRANCH",
        help="first make a new branch BRANCH in a new git worktree beside the repository (<repo>-worktrees/BRANCH) and start there",
    )
    new.add_argument(
        "--session",
        metavar="NAME",
        help="the tmux session for the window (made if missing; default: the session you run headspace in)",
    )
    new.add_argument(
        "--host",
        metavar="HOST",
        help="start it on this remote host (a [hosts.NAME], or anything ssh accepts): needs --session and an absolute DIR there; no --worktree",
    )

    hooks = sub.add_parser("hooks", help="add or remove headspace's Claude Code hooks (settings.json), or its rules hook for Codex (--codex)")
    hooks_sub = hooks.add_subparsers(dest="hooks_action", metavar="ACTION", required=True)
    for action, text in (
        ("install", "register headspace's hook for every event it reads (backs the file up first)"),
        ("uninstall", "remove headspace's hooks, restoring your file exactly when it is unchanged"),
        ("status", "say whether headspace's hooks are installed"),
    ):
        hook_action = hooks_sub.add_parser(action, help=text, description=text)
        hook_action.add_argument(
            "--project",
            type=Path,
            metavar="DIR",
            help="use DIR/.claude/settings.json instead of your user settings ($CLAUDE_CONFIG_DIR or ~/.claude)",
        )
        hook_action.add_argument(
            "--host",
            metavar="HOST",
            help="on this remote host (a [hosts.NAME], or anything ssh accepts), through its ssh connection: its user settings "
            "($CLAUDE_CONFIG_DIR there, else ~/.claude), with the hook program put in ~/.local/share/headspace/hook there",
        )
        hook_action.add_argument(
            "--codex",
            action="store_true",
            help="Codex CLI's hooks.json ($CODEX_HOME, else ~/.codex) instead: one PermissionRequest hook through which your "
            "rules (headspace rules) answer Codex's commands; Codex asks you to trust it at its next start",
        )
        if action == "install":
            hook_action.add_argument(
                "--answer",
                action="store_true",
                help="also add the answer channel: y/n in headspace answer the exact tool call through Claude's PermissionRequest hook (Claude's own dialog stays on screen and answerable meanwhile)",
            )
            hook_action.add_argument(
                "--wait",
                type=int,
                metavar="SECONDS",
                help="with --answer: how long a request waits for headspace before it is left to the dialog (default 60)",
            )

    doctor = sub.add_parser("doctor", help="check tmux, Claude Code, hooks, the spool and the terminal; a fix for each problem")
    _add_server_options(doctor)

    popup = sub.add_parser(
        "popup-binding",
        help="print the tmux bind-key line that opens headspace in a popup, by its absolute path",
        description="Print a line for ~/.tmux.conf that opens headspace in a tmux popup on prefix KEY. It names this "
        "headspace by its absolute path, so it works whatever PATH the tmux server has: "
        "headspace popup-binding >> ~/.tmux.conf && tmux source-file ~/.tmux.conf",
    )
    popup.add_argument("--key", default="h", metavar="KEY", help="the key after tmux's prefix (default h; any tmux key name: M-h, F5)")

    opener = sub.add_parser(
        "popup",
        help="open headspace in this tmux popup, kept warm between opens (what popup-binding's key runs)",
        description="Attach this popup to headspace's warm UI (a client of the resident service kept running in a "
        "private tmux server of headspace's own, started on the first open): the table at once, with the selection, "
        "filter and layout of the last open. q, Esc or a jump close the popup; the warm UI ends with the service.",
    )
    _add_server_options(opener)
    warm = sub.add_parser("popup-ui")  # the warm UI itself, started by 'popup' in the private server (no help: not for users)
    _add_server_options(warm)

    serve = sub.add_parser(
        "serve",
        help="run the resident service for this tmux server in the background (status asks it)",
        description="Start headspace's resident service for this tmux server in the background: one per user and tmux "
        "server, watching every agent while no headspace is open; 'headspace status' asks it. It ends by itself when "
        "its tmux server ends. Its socket is in $XDG_RUNTIME_DIR/headspace/service/, its log in "
        "$XDG_STATE_HOME/headspace/service.log.",
    )
    _add_server_options(serve)
    what = serve.add_mutually_exclusive_group()
    what.add_argument("--foreground", action="store_true", help="run in this process until the tmux server ends (or Ctrl-C)")
    what.add_argument("--stop", action="store_true", help="stop the service of this tmux server")
    what.add_argument("--status", action="store_true", help="say whether the service runs, and what it watches")

    page = sub.add_parser(
        "web",
        help="serve the phone page (every agent, answered from a browser) and print its address with a QR code",
        description="Turn on the resident service's web page (starting the service when none runs) and print the address "
        "to open, with its access token, and a QR code of it for a phone. The page shows the agents of this tmux "
        "server and of the configured hosts, live, and answers them through the same policy and guard as the terminal's "
        "keys. It listens on 127.0.0.1 by default: reach it over 'ssh -L', Tailscale or a reverse proxy. A [web] "
        "section in the config turns it on whenever the service starts.",
    )
    _add_server_options(page)
    page.add_argument("--listen", metavar="ADDR:PORT", help="where to listen (default 127.0.0.1:8765, or [web] listen)")
    page.add_argument("--token-file", metavar="FILE", help="keep the access token in FILE (made when missing): the same address across restarts")
    page.add_argument("--read-only", action="store_true", help="the page shows everything and answers nothing")
    page.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve HTTPS with this certificate and key (needed for a non-loopback --listen)")
    page.add_argument("--insecure-network", action="store_true", help="allow plain HTTP on a non-loopback address (anyone on the way can read the token and answer your agents)")
    page.add_argument("--no-qr", action="store_true", help="print the address only, no QR code")
    page.add_argument("--off", action="store_true", help="turn the page off (the service keeps running)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    passed: list[str] = []  # ``headspace new … -- ARGS``: ARGS are claude's, never headspace's
    if "--" in argv and "new" in argv[: argv.index("--")]:
        cut = argv.index("--")
        argv, passed = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    args.claude_args = passed
    try:
        if args.command == "classify":
            return cmd_classify(args)
        if args.command == "status":
            return cmd_status(args)
        if args.command == "send":
            return cmd_send(args)
        if args.command == "diff":
            return cmd_diff(args)
        if args.command == "rules":
            return cmd_rules(args)
        if args.command == "hooks":
            return cmd_hooks(args)
        if args.command == "doctor":
            return cmd_doctor(args)
        if args.command == "new":
            return cmd_new(args)
        if args.command == "popup-binding":
            return cmd_popup_binding(args)
        if args.command == "popup":
            return cmd_popup(args)
        if args.command == "popup-ui":
            return cmd_popup_ui(args)
        if args.command == "serve":
            return cmd_serve(args)
        if args.command == "web":
            return cmd_web(args)
        return cmd_tui(args)
    except UserError as exc:
        print(f"headspace: {clean(str(exc))}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into head & co.
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:
        from ..shared import logfile

        path = logfile.setup()
        logging.getLogger(__name__).error("headspace %s failed", args.command or "", exc_info=exc)
        where = f"; details in {path}" if path else ""
        print(f"headspace: stopped on an unexpected error ({clean(f'{type(exc).__name__}: {exc}', 300)}){where}", file=sys.stderr)
        return EXIT_FAIL


def _server(args: argparse.Namespace):
    from ..tmux.server import TmuxServer

    return TmuxServer(socket_name=args.socket_name, socket_path=args.socket_path)


def _load_config(args: argparse.Namespace):
    from ..shared.config import ConfigError, load_config

    try:
        return load_config(getattr(args, "config", None))
    except ConfigError as exc:
        raise UserError(str(exc)) from None


# --------------------------------------------------------------------------


def cmd_classify(args: argparse.Namespace) -> int:
    from ..detect.families import UnknownFamily, family_named

    try:
        family = family_named(args.agent)
    except UnknownFamily as exc:
        raise UserError(str(exc)) from None
    try:
        data = sys.stdin.buffer.read() if str(args.file) == "-" else args.file.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    observation = family.read(data.decode("utf-8", errors="replace"), command=args.pane_command, version=args.claude_version, title=args.title)
    if args.json:
        print(json_line(observation.to_json()))
        return EXIT_OK
    from ..api.rows import describe

    print(clean(describe(observation)))
    for evidence in observation.evidence:
        print(f"  why: {clean(evidence)}")
    return EXIT_OK


def _host_specs(args: argparse.Namespace, config) -> tuple[bool, list]:
    """Whether to read this machine, and which remote hosts: those named by ``--host``, else every configured one."""
    from ..shared.config import host_from_destination

    configured = {h.name: h for h in config.hosts}
    wanted = getattr(args, "host", None) or []
    specs = [configured.get(w) or host_from_destination(w) for w in wanted] if wanted else list(config.hosts)
    for spec in specs:
        if spec.destination.startswith("-"):
            raise UserError(f"host {spec.destination!r}: a destination must not start with '-'")
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise UserError(f"host {sorted(n for n in names if names.count(n) > 1)[0]!r} is named twice")
    local = not getattr(args, "no_local", False)
    if not local and not specs:
        raise UserError("--no-local leaves no host to read: add --host DEST, or [hosts.NAME] to the config")
    return local, specs


def _scan_agents(args: argparse.Namespace, remember: Callable[[str], tuple[str, float] | None] | None = None):
    """Every agent of this machine and the remote hosts asked for, read now; (agents, one line per host that failed).

    ``remember``: the event log's memory (``_log_memory``), to date a state as the live table would.
    """
    import asyncio

    from ..model import sort_key
    from ..remote.host import RemoteHost
    from ..service.watching.host import LocalHost
    from ..service.watching.one_look import look_at
    from ..tmux.server import TmuxUnavailable

    local, specs = _host_specs(args, _load_config(args))
    hosts = ([LocalHost(_server(args))] if local else []) + [RemoteHost(spec) for spec in specs]
    agents, failed = asyncio.run(look_at(hosts, include_all=args.all, remember=remember))
    problems = []
    for host, error, line in failed:
        if not host.remote and isinstance(error, TmuxUnavailable):
            if not specs:
                raise UserError(str(error)) from None
            line = f"local: {error}"
        problems.append(line)
    return sorted(agents, key=sort_key), problems


@contextlib.contextmanager
def _log_memory() -> Iterator[Callable[[str], tuple[str, float] | None] | None]:
    """The event log's last word on an agent (``History.remembered_in_log``), for dating what nothing of Claude's dates.

    ``headspace status`` weighs it as the live table does (``to_agent``, the
    one clock).  Read only when the event log exists (a one-shot command
    never creates it); None without one.
    """
    from ..service.records.journal import Journal
    from ..state.eventlog import EventLog, EventLogError
    from ..state.eventlog import default_path as events_path

    if not events_path().is_file():
        yield None
        return
    try:
        journal = Journal(EventLog(events_path()))
    except EventLogError:
        yield None
        return
    try:
        yield journal.remembered_in_log
    finally:
        journal.close()


def cmd_status(args: argparse.Namespace) -> int:
    """Every agent's state: asked of the running service when there is one for this view, else read now (a one-shot look)."""
    from ..api.rows import needs_you, public
    from ..detect.clock import elapsed
    from ..detect.families import label_of

    asked = _status_from_service(args)
    if asked is not None:
        rows, problems = asked
    else:
        rows, problems = _status_by_look(args)
    for problem in problems:
        print(f"headspace: {clean(problem)}", file=sys.stderr)
    status = EXIT_FAIL if problems else EXIT_OK
    if args.json:
        for row in rows:
            print(json_line(public(row)))
        return status
    if not rows:
        if not problems:
            print("no agents found (Claude Code, Codex, Gemini CLI, opencode)" + ("" if args.all else " (use --all to list every pane)"))
        return status
    remote = any(row["host"] != "local" for row in rows)
    names = [f"{row['host']}:{row['target']}" if remote else str(row["target"]) for row in rows]
    width = max(len(n) for n in names)
    for name, row in zip(names, rows, strict=True):
        seconds = row["in_state_for"]
        took = elapsed(seconds, precise=needs_you(row)) if seconds is not None else "?"
        print(f"{clean(name):<{width}}  {str(row['pane_id']):<5} {label_of(str(row['agent'])):<8} {took:>6}  {clean(str(row['line']))}")
    print(summary(rows))
    return status


def _status_by_look(args: argparse.Namespace) -> tuple[list[dict], list[str]]:
    """Every agent read now by this process (no service runs for this view): its rows, and one line per host that failed."""
    import time

    from ..api.rows import agent_row

    with _log_memory() as remember:
        agents, problems = _scan_agents(args, remember)
    now = time.time()
    return [agent_row(agent, now) for agent in agents], problems


def _status_from_service(args: argparse.Namespace) -> tuple[list[dict], list[str]] | None:
    """The rows of the running service of this tmux server, when it watches exactly this view; None: read it here.

    The service watches the local server and the configured hosts: a view
    with ``--all``, ``--host``, ``--no-local`` or another ``--config`` is
    read here.  A service of
    another version is stopped (an upgrade never leaves an old one
    answering) and this look is read here.
    """
    if args.all or getattr(args, "host", None) or getattr(args, "no_local", False) or args.config is not None:
        return None
    from ..api.errors import ServiceError
    from ..resident.client import ask_rows

    try:
        return ask_rows(_server(args).identity)
    except ServiceError as exc:
        logging.getLogger(__name__).info("status read here: %s", exc)
        return None


def summary(rows) -> str:
    """The count line under ``status``: how many need you, work, idle, and how many we could not read."""
    from ..api.rows import needs_you

    count = lambda *states: sum(1 for row in rows if row["state"] in states)  # noqa: E731
    # A wait the user snoozed does not need them (counted apart, as the table and the page count it).
    put_off = sum(1 for row in rows if needs_you(row) and row.get("snoozed"))
    needing = sum(1 for row in rows if needs_you(row) and not row.get("snoozed"))
    parts = [f"{len(rows)} agent{'s' if len(rows) != 1 else ''}", f"{needing} need you" + (f" ({put_off} snoozed)" if put_off else "")]
    parts += [f"{count('working')} working", f"{count('idle')} idle"]
    unknown = count("unknown")
    if unknown:
        parts.append(f"{unknown} unknown (unrecognised screen: see 'headspace classify --help' to report it)")
    return " · ".join(parts)


def resolve_target(server, target: str):
    """The pane record a user's target names: %N, session:window.pane, session:window or session."""
    from ..tmux.server import TmuxUnavailable

    try:
        records = server.list_panes()
    except TmuxUnavailable as exc:
        raise UserError(str(exc)) from None
    for matches in (
        [r for r in records if r.pane_id == target],
        [r for r in records if r.target == target],
        [r for r in records if f"{r.session_name}:{r.window_index}" == target],
        [r for r in records if r.session_name == target],
    ):
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise UserError(f"target {target!r} names {len(matches)} panes; use session:window.pane or %N")
    raise UserError(f"no pane {target!r} on {server.where()}")


def cmd_send(args: argparse.Namespace) -> int:
    config = _load_config(args)
    from ..model import PaneAddress

    address = PaneAddress.parse(args.target) if args.target.startswith("%") else None
    host_name = args.host or (address.host if address is not None and address.host != "local" else "")
    if host_name:
        return _send_remote(args, config, host_name)
    server = _server(args)
    # A pane id goes to the service as it is (no tmux asked); a name is resolved to one first.
    record = None if re.fullmatch(r"%\d+", args.target) else resolve_target(server, args.target)
    return _send_by_service(args, config, server, record.pane_id if record is not None else args.target)


def cmd_rules(args: argparse.Namespace) -> int:
    """``headspace rules list|test|suggest``: read the rules file and the event log; ``pause|resume|revoke``: asked of the service."""
    from .rules_cmd import rules_list, rules_suggest, rules_test

    if args.action == "revoke":
        return _rules_by_service(args, "revoke", args.id, "")
    if args.action in ("pause", "resume"):
        return _rules_by_service(args, args.action, args.rule, args.host)
    if args.action == "suggest":
        out, err = rules_suggest(args.times, args.days)
    else:
        out, err = rules_list() if args.action == "list" else rules_test(args.id, args.days)
    for line in err:
        print(f"headspace: {line}", file=sys.stderr)
    for line in out:
        print(line)
    return EXIT_FAIL if not out else EXIT_OK


def _rules_by_service(args: argparse.Namespace, action: str, rule: str, host: str) -> int:
    """Pause, resume or revoke rules through the service of this tmux server (started first when none runs), as the page does.

    Never written here: the service's rules hold the pauses they answer by,
    and one path for every front end keeps one guard over them.
    """
    from ..api.errors import Refused, ServerGone, ServiceError
    from ..resident.client import ask_rules
    from ..resident.start import asked_or_started
    from ..shared.resident_place import PlaceError

    server = _server(args)
    try:
        place = asked_or_started(server, args.config)
        said = ask_rules(place, action, rule, host)
    except ServerGone:
        raise UserError(f"no tmux server runs ({server.where()}): no service holds the rules; nothing changed") from None
    except Refused as exc:
        raise UserError(f"{exc}; nothing changed") from None
    except (ServiceError, PlaceError) as exc:
        raise UserError(f"the headspace service: {exc}; nothing changed") from None
    print(clean(said))
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    """``headspace diff TARGET``: the agent's change, as the running service's baselines give it (git runs on the agent's host)."""
    import asyncio

    from ..api.errors import ServiceError
    from ..changes.unified import render, stat
    from ..resident.client import asked_place
    from ..resident.facade_client import ServiceClient
    from ..shared import safe_text

    config = _load_config(args)
    server = _server(args)
    pane_id = args.target if re.fullmatch(r"%\d+(@\S+)?", args.target) else resolve_target(server, args.target).pane_id
    try:
        place = asked_place(server.identity)
    except ServiceError as exc:
        raise UserError(f"no headspace service keeps baselines for this tmux server ({exc}): start headspace (or 'headspace serve') first") from None
    diff = asyncio.run(ServiceClient(place, config=config).changes(pane_id, args.scope or "turn"))
    if diff.error:
        raise UserError(f"{pane_id}: {diff.error}")
    if diff.note and (diff.empty or args.stat):
        print(clean(f"# {pane_id}: {diff.note}"), file=sys.stderr)
    text = stat(diff) if args.stat else render(diff)
    sys.stdout.write(safe_text.clean_block(text, limit=len(text) + 1))  # outside text: no control character reaches the terminal
    return EXIT_OK


def _send_by_service(args: argparse.Namespace, config, server, pane_id: str) -> int:
    """The answer through the service of this tmux server (its one answerer, guard, rules and audit), started first when none runs.

    Never by keys of its own: a service that cannot be asked or started is
    an error, and nothing is sent.  Only a service of this version that
    reads the same config is asked.  Once the request went, nothing more is
    sent: a refusal is the service's to make, and an answer that got no
    reply may have gone.
    """
    from ..api.errors import Lost, Refused, ServerGone, ServiceError
    from ..resident.client import ask_answer
    from ..resident.start import asked_or_started
    from ..shared.resident_place import PlaceError

    intent = _intent_of(args, config)
    try:
        place = asked_or_started(server, args.config)  # none runs: started, as the answer is the service's, as every other answer is
        target, delivered, detail = ask_answer(place, pane_id, intent.kind.value, option=intent.option, text=intent.text, expect=args.expect)
    except ServerGone:
        raise UserError(f"no tmux server runs ({server.where()}): nothing to answer") from None
    except (Refused, Lost) as exc:
        said = str(exc).removeprefix(f"{pane_id}: ")  # the service's refusal may name the pane already
        raise UserError(f"{pane_id}: {said}" + ("; it may have been answered: see 'headspace status'" if isinstance(exc, Lost) else "")) from None
    except (ServiceError, PlaceError) as exc:
        raise UserError(f"{pane_id}: {exc}; nothing sent") from None
    detail = detail.removeprefix(f"{target}: ")  # the report names its target already
    if not delivered:
        raise UserError(f"{target}: {detail}")
    print(clean(f"{target}: {detail}"))
    return EXIT_OK


def _intent_of(args: argparse.Namespace, config):
    """What ``send`` was asked to do, as the answering policy says it."""
    from ..answering.policy import Intent, IntentKind

    if args.approve:
        return Intent(IntentKind.APPROVE)
    if args.deny:
        return Intent(IntentKind.DENY)
    if args.option is not None:
        return Intent(IntentKind.OPTION, option=args.option)
    if args.submit:
        return Intent(IntentKind.SUBMIT)
    if args.text is not None:
        return Intent(IntentKind.TEXT, text=args.text)
    if args.nudge:
        return Intent(IntentKind.NUDGE, text=config.nudge_text)
    return Intent(IntentKind.INTERRUPT)


def _send_remote(args: argparse.Namespace, config, host_name: str) -> int:
    """``send --host NAME``: the same guarded send, to that host's pane, through its ssh link."""
    import asyncio

    from ..detect.families import CLAUDE, find_agent
    from ..remote.host import RemoteHost
    from ..shared.config import host_from_destination
    from ..tmux.server import TmuxUnavailable

    spec = next((h for h in config.hosts if h.name == host_name), None) or host_from_destination(host_name)
    host = RemoteHost(spec)
    server = host.server
    from ..model import PaneAddress

    target = PaneAddress.parse(args.target).pane if args.target.startswith("%") else args.target

    async def over_the_link() -> int:
        try:
            # The probe too: the host's process table says which agent runs in the pane.
            _, table = await host.snapshot()
        except TmuxUnavailable as exc:
            raise UserError(f"{spec.name}: {exc}") from None
        # The server's calls block on the link, whose master lives on this loop: each runs in a thread.
        address = server.address(target) if target.startswith("%") else target
        record = await asyncio.to_thread(resolve_target, server, address)
        found = find_agent(record.pid, table)
        return await _send_to(args, config, server, record, found[1] if found is not None else CLAUDE)

    async def then_close() -> int:
        try:
            return await over_the_link()
        finally:
            await host.close()

    return asyncio.run(then_close())


def option_keys(text: str) -> str:
    """``--option``'s value: one option number, or several joined by commas ("1,3"), as the guarded send takes them."""
    parts = [part.strip() for part in text.split(",")]
    if not parts or not all(part.isdigit() and len(part) <= 2 for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: an option number (3), or several joined by commas (1,3)")
    return ",".join(str(int(part)) for part in parts)


async def _send_to(args: argparse.Namespace, config, server, record, family) -> int:
    """The guarded send to ``record``'s pane, whose agent is of ``family``."""
    from ..answering.keys import ActionError, ThreadedPaneIO, read_pane, send_guarded
    from ..tmux.server import TmuxCommandError

    intent = _intent_of(args, config)
    io = ThreadedPaneIO(server)
    try:
        # From the command line, "what the user saw" is the prompt as it is
        # now; the guard still re-reads it right before sending, and the
        # answer says exactly what it answered.  Which appearance of a prompt
        # an --expect names is known only to the service that watched it
        # come and go: here (no service) only "no prompt" can be expected.
        seen, _ = await read_pane(io, record.pane_id, family)
        if args.expect:
            raise UserError(
                f"{record.target}: --expect names one appearance of a prompt, which only a headspace service watching the pane keeps track of, and a send with --host answers by itself; nothing sent"
            )
        if args.expect is not None and seen.prompt is not None:
            raise UserError(f"{record.target}: the agent asks something now ({seen.state.value}), and no prompt was expected; nothing sent")
        outcome = await send_guarded(io, record.pane_id, seen, intent, timeout=args.timeout, server_key=server.key, family=family)
    except (ActionError, TmuxCommandError) as exc:
        raise UserError(f"{record.target}: {exc}") from None
    if not outcome.delivered:
        raise UserError(f"{record.target}: {outcome.detail}")
    print(clean(f"{record.target}: {outcome.detail}"))
    return EXIT_OK


def cmd_hooks(args: argparse.Namespace) -> int:
    import os

    from ..detect.families import CLAUDE
    from ..hooks.settings import ANSWER_WAIT, DENIED_EVENT, HooksError, backup_path, install, status, uninstall
    from .hooks_text import said

    if args.codex:
        return _codex_hooks(args)
    if args.host:
        from .hooks_remote import RemoteHooksError, run

        try:
            print(run(args, _load_config(args)))
        except RemoteHooksError as exc:
            raise UserError(str(exc)) from None
        return EXIT_OK
    if args.project is not None:
        if not args.project.is_dir():
            raise UserError(f"no such directory: {args.project}")
        path = args.project.resolve() / ".claude" / "settings.json"
    else:
        assert CLAUDE.hooks is not None  # the family whose hooks these are (Family.hooks: where its settings live)
        path = CLAUDE.hooks.settings_folder(os.environ) / "settings.json"
    try:
        if args.hooks_action == "install":
            if args.wait is not None and not args.answer:
                raise UserError("--wait goes with --answer")
            wait = (args.wait if args.wait is not None else ANSWER_WAIT) if args.answer else None
            changed = install(path, answer_wait=wait)
            backup = backup_path(path)
            denied = DENIED_EVENT in status(path).events
            on_path = shutil.which("claude") is not None
            print(said("install", {"path": path, "changed": changed, "backup": backup if backup.exists() else None, "denied": denied, "claude_found": on_path}, wait))
        elif args.hooks_action == "uninstall":
            print(said("uninstall", {"path": path, "done": uninstall(path), "backup": backup_path(path)}, None))
        else:
            found = status(path)
            facts = {
                "path": path,
                "installed": found.installed,
                "exists": found.exists,
                "events": found.events,
                "missing": found.missing,
                "commands": found.commands,
                "answer_wait": found.answer_wait,
            }
            print(said("status", facts, None))
    except HooksError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}") from None
    return EXIT_OK


def _codex_hooks(args: argparse.Namespace) -> int:
    """``headspace hooks ACTION --codex``: the rules hook in Codex's own hooks.json, on this machine."""
    import os

    from ..hooks.settings import ANSWER_EVENT, HooksError, backup_path, install_codex, status, uninstall

    if args.host or args.project is not None or getattr(args, "answer", False) or getattr(args, "wait", None) is not None:
        raise UserError("--codex goes alone: Codex's own hooks.json on this machine")
    home = os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    path = Path(home) / "hooks.json"
    try:
        if args.hooks_action == "install":
            changed = install_codex(path)
            backup = backup_path(path)
            where = f"backup: {backup}" if backup.exists() else "new file"
            if changed:
                print(f"installed headspace's rules hook for Codex in {path} ({where}); Codex asks you to trust it at its next start (or in /hooks)")
            else:
                print(f"headspace's rules hook for Codex already installed in {path}")
        elif args.hooks_action == "uninstall":
            done = uninstall(path)
            print({"absent": f"no headspace hook in {path}"}.get(done, f"removed headspace's rules hook for Codex from {path} ({done})"))
        else:
            found = status(path)
            on = ANSWER_EVENT in found.events
            print(f"headspace's rules hook for Codex {'installed' if on else 'not installed'} in {path}" + ("" if found.exists else " (no such file)"))
    except HooksError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}") from None
    return EXIT_OK


def cmd_new(args: argparse.Namespace) -> int:
    """``headspace new``: one line saying where Claude now runs (its pane id first, for scripts)."""
    import os

    from ..service.watching.lifecycle import LifecycleError, claude_argv, runs_agent, start
    from ..tmux.server import TmuxCommandError, TmuxUnavailable

    if args.host:
        return _new_remote(args, _load_config(args), args.host)
    server = _server(args)
    folder = args.dir if args.dir is not None else Path.cwd()
    try:
        started = start(server, claude_argv(args.claude_args), folder=folder, branch=args.worktree, session=args.session, env=os.environ)
    except LifecycleError as exc:
        raise UserError(str(exc)) from None
    why = runs_agent(server, started.pane_id, "claude")  # told as started only once it runs
    if why:
        raise UserError(why)
    try:
        where = server.pane(started.pane_id).target
    except (TmuxCommandError, TmuxUnavailable):
        raise UserError(f"claude started in {started.pane_id}, whose window closed at once (try claude in that folder)") from None
    tree = " (new worktree)" if started.worktree else ""
    print(clean(f"{started.pane_id} {where}: claude in {started.cwd}{tree}"))
    return EXIT_OK


def _new_remote(args: argparse.Namespace, config, host_name: str) -> int:
    """``new --host NAME``: the same window on that host's tmux, through its ssh link; the folder must exist there."""
    import asyncio
    import shlex

    from ..remote.ssh import SshLink, SshTmuxServer
    from ..service.watching.lifecycle import claude_argv
    from ..shared.config import host_from_destination
    from ..tmux.server import TmuxCommandError, TmuxUnavailable
    from ..tmux.spawn import SpawnError, start_window

    if args.worktree:
        raise UserError("--worktree is not supported with --host: make the worktree there, then start in it")
    if not args.session:
        raise UserError("--host needs --session NAME (there is no current session over there)")
    if args.dir is None or not str(args.dir).startswith("/"):
        raise UserError("--host needs DIR, an absolute path of a folder on that host")
    spec = next((h for h in config.hosts if h.name == host_name), None) or host_from_destination(host_name)
    if spec.destination.startswith("-"):
        raise UserError(f"host {spec.destination!r}: a destination must not start with '-'")
    link = SshLink(spec)
    server = SshTmuxServer(link)
    folder = str(args.dir)

    async def over_the_link() -> str:
        try:
            await link.connect()
        except TmuxUnavailable as exc:
            raise UserError(f"{spec.name}: {exc}") from None
        try:
            # tmux starts a window whose folder is missing in another folder, silently: look first.
            if not await link.run(f"test -d {shlex.quote(folder)}"):
                raise UserError(f"{spec.name}: no such folder: {folder}")
            pane_id = await asyncio.to_thread(start_window, server, claude_argv(args.claude_args), cwd=folder, session=args.session)
            try:
                where = (await asyncio.to_thread(server.pane, pane_id)).target
            except (TmuxCommandError, TmuxUnavailable):
                where = "a window that closed at once (did claude start? try it in that folder)"
            return f"{pane_id} {spec.name}:{where}: claude in {folder}"
        except (SpawnError, TmuxCommandError, TmuxUnavailable) as exc:
            raise UserError(f"{spec.name}: {exc}") from None
        finally:
            await link.close()

    try:
        print(clean(asyncio.run(over_the_link())))
    finally:
        link.remove_folder()
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from ..shared.config import Config, ConfigError, load_config
    from ..tmux.server import TmuxServer
    from .doctor import FAIL, report, run_checks

    problem = ""
    try:
        config = load_config(getattr(args, "config", None))
    except ConfigError as exc:  # a finding like the others: the checks still run, with the defaults
        config, problem = Config(), str(exc)
    checks = run_checks(TmuxServer(socket_name=args.socket_name, socket_path=args.socket_path), config=config, config_problem=problem)
    print(report(checks))
    return EXIT_FAIL if any(c.verdict == FAIL for c in checks) else EXIT_OK


def cmd_popup_binding(args: argparse.Namespace) -> int:
    from .popup_key import binding

    try:
        print(binding(args.key))
    except ValueError as exc:
        raise UserError(f"--key {args.key!r}: {exc}") from None
    return EXIT_OK


def cmd_popup(args: argparse.Namespace) -> int:
    """The popup key's launcher: no Textual here (cli/popup.py); the warm UI, else the cold headspace, in this popup."""
    from .popup import main_launcher
    from .popup_key import installed_command

    if getattr(args, "host", None) or getattr(args, "no_local", False) or args.all or args.no_service or args.config is not None:
        raise UserError("popup shows the view the service watches: run 'headspace' with --host, --all, --config or --no-service instead")
    socket_args = ["-S", args.socket_path] if args.socket_path else ["-L", args.socket_name] if args.socket_name else []
    return main_launcher(socket_args, installed_command())


def cmd_popup_ui(args: argparse.Namespace) -> int:
    from .warm import run_warm

    if not args.socket_path or not args.socket_path.startswith("/"):
        raise UserError("popup-ui is started by 'headspace popup', with -S and the tmux server's socket path")
    return run_warm(args.socket_path)


def _service_of(args: argparse.Namespace, watches: str):
    """The tmux server and its service's place, for a command about the service itself (which takes no view of its own)."""
    from ..shared.resident_place import place_of

    server = _server(args)
    if getattr(args, "host", None) or getattr(args, "no_local", False):
        raise UserError(f"{watches}: --host and --no-local are not for it")
    return server, place_of(server.identity)


def cmd_serve(args: argparse.Namespace) -> int:
    """The resident service of this tmux server: start it in the background, run it here, stop it, or say how it is."""
    from ..api.errors import ServiceError
    from ..resident import client
    from ..shared.resident_place import PlaceError, facts, is_held, where

    server, place = _service_of(args, "serve watches this tmux server and every configured host")
    if args.stop:
        if not is_held(place):
            print(f"no headspace service runs for {server.where()}")
            return EXIT_OK
        if not client.stop(place):
            raise UserError(f"the service did not end; {where(place)}")
        print(f"stopped the headspace service of {server.where()}")
        return EXIT_OK
    if args.status:
        try:
            card = client.hello(place)
        except ServiceError as exc:
            print(f"no headspace service runs for {server.where()} ({exc})")
            return EXIT_FAIL
        print(f"the headspace service of {server.where()} runs ({facts(place)}); watching {', '.join(card.get('hosts') or []) or 'no host'}")
        web = card.get("web")
        if isinstance(web, dict):
            print(f"its web page: {web.get('scheme')}://{web.get('host')}:{web.get('port')}/{' (read-only)' if web.get('read_only') else ''} (headspace web prints the address with its token)")
        return EXIT_OK
    if args.foreground:
        return _serve_here(args, server, place)
    if is_held(place):
        raise UserError(where(place))
    _load_config(args)  # a broken config is said here, in one line, not lost in the background
    if server.server_pid() is None:
        raise UserError(f"no tmux server runs ({server.where()}): nothing to serve")
    from ..resident.start import log_path, start_detached

    try:
        card = start_detached(server.socket_args(), place, config=args.config)
    except (ServiceError, PlaceError) as exc:
        raise UserError(f"the service did not start: {exc}") from None
    print(f"headspace service started for {server.where()} (pid {card.get('pid')}); it ends with its tmux server; log: {log_path()}")
    return EXIT_OK


def cmd_web(args: argparse.Namespace) -> int:
    """``headspace web``: the resident service's web page on (the service started first when none runs), and how to reach it."""
    from dataclasses import replace

    from ..api.errors import ServiceError
    from ..resident import client
    from ..shared.config import WebConfig
    from ..shared.resident_place import PlaceError, is_held
    from ..web import listen

    server, place = _service_of(args, "the page shows what the service watches (this tmux server and every configured host; add a host to the config)")
    if args.off:
        if not is_held(place):
            print(f"no headspace service runs for {server.where()}: the page is off")
            return EXIT_OK
        try:
            client.ask(place, "web", {"off": True})
        except ServiceError as exc:
            raise UserError(f"the page could not be turned off: {exc}") from None
        print(f"the web page of {server.where()} is off")
        return EXIT_OK
    config = _load_config(args)
    web = config.web
    explicit = bool(args.listen or args.tls or args.token_file or args.read_only or args.insecure_network)
    if not explicit and is_held(place):
        try:
            said = client.ask(place, "web", {"keep": True})
        except ServiceError:
            said = {}
        if said.get("url") and isinstance(said.get("web"), dict):
            return _print_web(server, str(said["url"]), said["web"], qr=not args.no_qr)  # on already: where it is, as it is
    # The flags over [web] over the defaults: one set of settings, checked in one place.
    base = web or WebConfig()
    given = replace(
        base,
        listen=args.listen or base.listen,
        token_file=args.token_file or base.token_file,
        read_only=args.read_only or base.read_only,
        insecure_network=args.insecure_network or base.insecure_network,
        tls_cert=args.tls[0] if args.tls else base.tls_cert,
        tls_key=args.tls[1] if args.tls else base.tls_key,
    )
    try:
        options = listen.from_config(given)
    except listen.ListenError as exc:
        raise UserError(str(exc)) from None
    if server.server_pid() is None:
        raise UserError(f"no tmux server runs ({server.where()}): nothing to show")
    if not is_held(place):
        from ..resident.start import start_service

        try:
            start_service(server, place, args.config)
        except (ServiceError, PlaceError) as exc:
            raise UserError(f"the service did not start: {exc}") from None
    body = {"host": options.host, "port": options.port, "token": options.token, "read_only": options.read_only, "tls": list(options.tls) if options.tls else None}
    try:
        said = client.ask(place, "web", body)
    except ServiceError as exc:
        raise UserError(f"the page is not on: {exc}") from None
    card = {"host": options.host, "port": options.port, "scheme": options.scheme, "read_only": options.read_only}
    return _print_web(server, str(said.get("url", "")), card, qr=not args.no_qr)


def _print_web(server, url: str, card: dict, *, qr: bool) -> int:
    """Where the page is: its address with the token on a line of its own, a QR code of it, and how to reach a loopback one."""
    from ..web import listen

    listened, port = str(card.get("host")), card.get("port")
    host = listen.shown_host(listened)
    if host != listened:
        url = url.replace(f"//{listened}:", f"//{host}:", 1)
    print(f"headspace web: the page of {server.where()} is served at {card.get('scheme')}://{host}:{port}/{' (read-only)' if card.get('read_only') else ''}")
    print("open this address (it carries the access token; keep it to yourself):")
    print(url)
    if qr:
        import segno

        segno.make(url, error="l").terminal(out=sys.stdout, compact=True)
    if listen.loopback(listened):
        print(f"from another machine: ssh -L {port}:{listened}:{port} <this machine>, then open the address there")
    return EXIT_OK


def _serve_here(args: argparse.Namespace, server, place) -> int:
    """``serve --foreground``: hold the lock and serve in this process until the tmux server ends."""
    import functools
    import os

    from ..resident.ringer import Ringer
    from ..resident.server import Watched, serve
    from ..resident.start import log_path
    from ..service.facade import Service
    from ..service.records.journal import Journal
    from ..shared import logfile
    from ..shared.resident_place import PlaceError

    log = logging.getLogger("headspace_tui.resident")
    logfile.setup(log_path())
    from . import leftovers

    leftovers.sweep()  # what a SIGKILLed headspace left (its socket, its ssh control folders)
    try:
        config = _load_config(args)
        local, specs = _host_specs(args, config)
        if server.server_pid() is None:
            raise UserError(f"no tmux server runs ({server.where()}): nothing to serve")
    except UserError as exc:
        log.error("%s", exc)  # a service started in the background has only its log to say it in
        raise
    journal, problem = Journal.open()
    if problem:
        log.warning("%s", problem)
    try:
        service = Service.build(server, config=config, journal=journal, hosts=specs, local=local)
        ring = functools.partial(Ringer, config=config, socket_file=server.socket_file(), env=dict(os.environ))
        config_path = str(args.config.resolve()) if args.config is not None else None
        web = None
        if config.web is not None:
            from ..web import listen

            try:
                web = listen.from_config(config.web)
            except listen.ListenError as exc:
                log.warning("[web]: %s; the page stays off", exc)
        why = serve(service, Watched(server.identity, server.where(), server.server_pid), place, ring, config_path=config_path, web_on_start=web)
    except PlaceError as exc:
        log.error("%s", exc)
        raise UserError(str(exc)) from None
    finally:
        journal.close()
    print(f"headspace service ended: {why}", file=sys.stderr)
    return EXIT_OK


def cmd_tui(args: argparse.Namespace) -> int:
    from ..shared.config import Config, ConfigError, load_config
    from . import leftovers
    from .launch import run_app

    leftovers.sweep()  # what a SIGKILLed headspace left (its socket, its ssh control folders)

    # A broken config must not keep the user from their agents: the app starts
    # with the defaults and says what is wrong, in one line, on its screen.
    notices: tuple[str, ...] = ()
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        config, notices = Config(), (f"{exc}; using the defaults",)
    local, specs = _host_specs(args, config)
    # The service watches this server and the configured hosts with the default config: any other view is watched from here.
    own_view = args.all or getattr(args, "host", None) or getattr(args, "no_local", False) or args.config is not None or notices
    return run_app(
        socket_name=args.socket_name,
        socket_path=args.socket_path,
        include_all=args.all,
        config=config,
        notices=notices,
        config_path=args.config,
        hosts=specs,
        local=local,
        resident=not (args.no_service or own_view),
    )


if __name__ == "__main__":
    sys.exit(main())
