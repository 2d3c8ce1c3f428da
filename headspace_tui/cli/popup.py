"""The popup key's launcher, and the private tmux server the warm UI lives in (docs/popup.md).

``headspace popup`` is what the popup binding runs (``popup_key.binding``).
It imports no Textual: it asks the warm UI (``headspace popup-ui``, a client
of the resident service kept running in a private tmux server of
headspace's own) to take the user who opened the popup, then becomes a
plain tmux client of that private server (``exec tmux -S … attach``).  The
table is there, current, with the selection, the filter and the layout the
last open left.  When no warm UI answers, the launcher starts one in a new
private server and attaches as soon as it answers (the first open costs
what a cold start costs); when it cannot be started, the launcher becomes
the cold ``headspace`` of before.

The private server (``<runtime>/ui/tmux-<digest>.tmux``, in a 0700 folder
beside the service's) has one session, ``ui``, whose one pane is the warm
UI: no status line, no prefix (every key reaches the app), escape-time 0,
its window sized by the UI to each popup (``window-size manual``).  The
warm UI talks to the launcher over ``tmux-<digest>.sock`` (one JSON line
each way, same user only) and holds ``tmux-<digest>.lock`` for its life.
Nothing here ever attaches to the user's tmux server: the warm UI jumps the
user's client through the service.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from .. import __version__
from ..shared.paths import runtime_dir
from ..shared.resident_place import Place, PlaceError, is_held, make_folder, place_of

SESSION = "ui"
START_WAIT = 20.0  # seconds a new warm UI may take to answer (Python, Textual, the service's state)
ASK_WAIT = 5.0  # seconds a running warm UI may take to take an open (a resize and a layout)
MESSAGE_MAX = 16 << 10  # bytes of one line of the launcher's
# Where the user sits, as the launcher's environment says it (the popup's): what a jump needs (tmux/clients.py).
HERE = ("TMUX", "TMUX_PANE", "HEADSPACE_CLIENT")
WARM_ONLY = ("-L", "-S")  # the options the warm UI takes; any other view is a cold start's


def ui_place(server_key: str, env: Mapping[str, str] | None = None) -> Place:
    """The warm UI's files for the tmux server ``server_key``: its control socket, lock and private tmux socket (``tmux_socket``)."""
    services = place_of(server_key, env)  # the service's place: the warm UI's files are named as its are
    return Place(runtime_dir(env) / "ui", services.name)


def tmux_socket(place: Place) -> Path:
    return place.folder / f"{place.name}.tmux"


def private_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment for our private server and its tmux clients: never inside the user's tmux (no nesting refused, no stray command to it)."""
    return {k: v for k, v in env.items() if k not in HERE}


def private_tmux(place: Place, *args: str, env: Mapping[str, str] | None = None, timeout: float = 10.0) -> subprocess.CompletedProcess[str]:
    """One command to the private server (never the user's: ``-S`` its own socket, no ``$TMUX``)."""
    return subprocess.run(
        ["tmux", "-S", str(tmux_socket(place)), *args],
        capture_output=True,
        text=True,
        env=private_env(os.environ if env is None else env),
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )


def server_options(*, truecolor: bool) -> list[str]:
    """The private server's options, as a tmux command list (``;`` between commands): a bare terminal for one app."""
    commands = [
        ["set-option", "-s", "escape-time", "0"],
        ["set-option", "-s", "exit-unattached", "off"],
        ["set-option", "-s", "focus-events", "on"],
        ["set-option", "-g", "default-terminal", "tmux-256color"],
        ["set-option", "-g", "status", "off"],
        ["set-option", "-g", "prefix", "None"],
        ["set-option", "-g", "prefix2", "None"],
        ["set-option", "-g", "destroy-unattached", "off"],
        ["set-option", "-g", "set-titles", "off"],
        ["set-option", "-g", "history-limit", "0"],  # a full-screen app: no scrollback to keep
        ["set-option", "-g", "remain-on-exit", "off"],
        ["set-option", "-g", "visual-bell", "off"],
        ["set-option", "-g", "bell-action", "none"],
    ]
    if truecolor:
        commands.append(["set-option", "-sa", "terminal-features", ",*:RGB"])
    words: list[str] = []
    for command in commands:
        words += [*command, ";"]
    return words


def truecolor(env: Mapping[str, str]) -> bool:
    return env.get("COLORTERM", "").lower() in ("truecolor", "24bit")


def ask(place: Place, message: dict[str, object], timeout: float = ASK_WAIT) -> dict[str, object] | None:
    """Send the warm UI one open; its answer, or None when no warm UI listens (or it did not answer)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(place.socket))
            sock.sendall(json.dumps(message).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n") and len(data) < MESSAGE_MAX:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    try:
        answer = json.loads(data)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def popup_size(fd: int = 1) -> tuple[int, int]:
    try:
        size = os.get_terminal_size(fd)
    except OSError:
        return 80, 24
    return size.columns, size.lines


def opening(env: Mapping[str, str], size: tuple[int, int]) -> dict[str, object]:
    """What the launcher tells the warm UI: where the user who opened the popup sits, and the popup's size."""
    return {"open": 1, "version": __version__, "here": {k: env[k] for k in HERE if k in env}, "cols": size[0], "rows": size[1]}


def _remove_stale(place: Place) -> None:
    """The files of a warm UI that is gone (SIGKILLed: tmux 3.3a leaves its socket file, and so does a killed asyncio server)."""
    if is_held(place):
        return  # one is starting or running
    if private_tmux(place, "has-session", "-t", f"={SESSION}").returncode == 0:
        return  # its pane is still there: the UI in it is starting
    for path in (place.socket, tmux_socket(place)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def start_warm(place: Place, ui_command: list[str], size: tuple[int, int], env: Mapping[str, str]) -> str:
    """Start the private server and the warm UI in it; "" once it answers, else why not (one line)."""
    try:
        make_folder(place)
    except PlaceError as exc:
        return str(exc)
    _remove_stale(place)
    shell = "exec " + " ".join(_sh_quote(word) for word in ui_command)
    start = private_tmux(
        place,
        "-f",
        "/dev/null",
        "start-server",
        ";",
        *server_options(truecolor=truecolor(env)),
        "new-session",
        "-d",
        "-s",
        SESSION,
        "-x",
        str(size[0]),
        "-y",
        str(size[1]),
        "-c",
        "/",
        shell,
        ";",
        # The window's own option, never the global one: with a global "manual", tmux 3.3a
        # crashes at the next window it creates (spawn.c sizes a window not made yet).
        "set-option",
        "-w",
        "-t",
        f"={SESSION}:",
        "window-size",
        "manual",  # the UI sizes the window to each popup before the attach (warm.py)
        env=env,
    )
    if start.returncode != 0 and "duplicate session" not in start.stderr:
        return f"the private tmux server did not start: {start.stderr.strip()[:200]}"
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        if _answers(place):
            return ""
        if private_tmux(place, "has-session", "-t", f"={SESSION}").returncode != 0:
            return "the warm UI ended at once (see headspace's log)"
        time.sleep(0.03)
    return f"the warm UI did not answer within {START_WAIT:g} s"


def _answers(place: Place) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            sock.connect(str(place.socket))
            return True
    except OSError:
        return False


def _sh_quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


def launch(socket_args: list[str], env: Mapping[str, str], program: list[str], *, cold: list[str]) -> int:
    """``headspace popup``: attach this popup to the warm UI (started when missing); else exec the cold headspace ``cold``.

    ``socket_args``: the ``-L``/``-S`` the user gave (none: the server of
    ``$TMUX``).  ``program``: how to run this headspace (``popup_key.installed_command``).
    Returns only on failure to exec anything.
    """
    from ..tmux.identify import socket_file as where_socket  # not tmux.server: asyncio and the control client are not the launcher's

    if not env.get("TMUX"):
        os.execv(cold[0], cold)  # not in a popup, nor in tmux at all: the full-screen headspace, which prints where a jump goes
    socket_file = os.path.realpath(where_socket(socket_args, env, os.getuid()))
    place = ui_place("S:" + socket_file, env)  # TmuxServer.identity
    size = popup_size()
    message = opening(env, size)
    try:
        answer = ask(place, message)
        why = ""
        if answer is None:
            why = start_warm(place, [*program, "-S", socket_file, "popup-ui"], size, env)
            answer = None if why else ask(place, message)
        if answer is not None and answer.get("ok") is True:
            tmux = shutil.which("tmux", path=env.get("PATH")) or "tmux"
            # -d: a second popup (another client) takes the UI over; the first one closes (its tmux client is detached).
            os.execve(tmux, ["tmux", "-S", str(tmux_socket(place)), "attach-session", "-d", "-t", f"={SESSION}"], private_env(env))
    except (OSError, subprocess.SubprocessError) as exc:  # no tmux to run, a folder we cannot use: the cold start, below
        answer, why = None, f"{type(exc).__name__}: {exc}"
    if answer is not None:
        why = str(answer.get("why") or "the warm UI refused the open")
    if why:
        _log(why)
    os.execv(cold[0], cold)  # today's headspace, in this popup
    return 1


def _log(why: str) -> None:
    """Why the warm UI was not used: into headspace's log (the popup shows the cold app, not a line that would flash by)."""
    import logging

    from ..shared import logfile

    logfile.setup()
    logging.getLogger(__name__).warning("popup: a cold start: %s", why)


def main_launcher(socket_args: list[str], program: list[str]) -> int:
    cold = [*program, *socket_args]
    if not os.path.isabs(cold[0]):
        cold[0] = shutil.which(cold[0]) or sys.executable
    return launch(socket_args, os.environ, program, cold=cold)
