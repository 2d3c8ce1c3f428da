"""Command-line entry points: the TUI, ``status``, ``classify``, ``send``, ``new``, ``hooks``, ``doctor`` and ``popup-binding``.

Every failure a user can cause (no tmux server, unknown target, unreadable
file, a pane not at the expected prompt) ends in one line on stderr and a
non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from pathlib import Path

from .. import __version__
from .common import EXIT_FAIL, EXIT_OK, UserError, clean
from .send import option_keys

# Nothing heavy at the top: the popup key's launcher (``headspace popup``) runs through here
# and must not pay for Rich (safe_text) or the model before it becomes a tmux client.

# Each command and where it is carried out: one module per command (cli/<module>.py).
COMMANDS: dict[str, tuple[str, str]] = {
    "classify": ("classify", "cmd_classify"),
    "status": ("status", "cmd_status"),
    "send": ("send", "cmd_send"),
    "diff": ("diff", "cmd_diff"),
    "rules": ("rules_cmd", "cmd_rules"),
    "hooks": ("hooks_cmd", "cmd_hooks"),
    "doctor": ("doctor", "cmd_doctor"),
    "new": ("new", "cmd_new"),
    "popup-binding": ("popup_cmd", "cmd_popup_binding"),
    "popup": ("popup_cmd", "cmd_popup"),
    "popup-ui": ("popup_cmd", "cmd_popup_ui"),
    "serve": ("serve", "cmd_serve"),
    "web": ("serve", "cmd_web"),
}


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
    classify.add_argument("--agent", default=None, metavar="NAME", help="which agent drew it: claude (default), codex, gemini or opencode")
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
        help='the tmux session for the window (made if missing; default: the session you run headspace in, or "headspace" outside tmux)',
    )
    new.add_argument(
        "--host",
        metavar="HOST",
        help="start it on this remote host (a [hosts.NAME], or anything ssh accepts): needs --session and an absolute DIR there; no --worktree",
    )

    hooks = sub.add_parser("hooks", help="add or remove headspace's Claude Code hooks (settings.json), or its rules hook for Codex, Copilot or Qwen (--codex, --copilot, --qwen)")
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
        hook_action.add_argument(
            "--copilot",
            action="store_true",
            help="GitHub Copilot CLI's hooks ($COPILOT_HOME, else ~/.copilot: hooks/headspace.json) instead: one permissionRequest hook through which your rules answer Copilot's commands",
        )
        hook_action.add_argument(
            "--qwen",
            action="store_true",
            help="Qwen Code's settings.json ($QWEN_HOME, else ~/.qwen) instead: one PermissionRequest hook through which your rules answer Qwen's commands",
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
    # A command says what it has to say in its own lines: no library's warning reaches the terminal through
    # Python's last-resort handler (asyncio's "loop that handles pid … is closed", an ssh child reaped after a
    # look's loop ended, came under a one-line error).  A command that keeps a log sends ours and asyncio's there.
    logging.getLogger().addHandler(logging.NullHandler())
    try:
        where, name = COMMANDS.get(args.command or "", ("tui", "cmd_tui"))
        # Each command's module is imported when it runs: the popup's launcher must not pay for the others.
        command = getattr(importlib.import_module(f".{where}", __package__), name)
        return int(command(args))
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
