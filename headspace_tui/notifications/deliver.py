"""Getting a notification out of headspace: tmux's passthrough on its own pane, ``notify-send``.

decide.py decides what to say and in which bytes; this is the little that
talks to the machine, each piece unable to fail the app (a problem is one
line for the user, returned, never raised):

* ``enable_passthrough``: inside tmux, an OSC notification reaches the
  terminal only if headspace's pane allows passthrough.  It is set on that
  one pane (``set-option -p -t $TMUX_PANE``), never globally: no other
  program in your tmux gets to write to your terminal because of
  headspace.  ``all`` (tmux 3.4+) lets it through to clients whose session
  has headspace's window; tmux 3.2-3.3 know only ``on`` (only to a client
  showing headspace's pane).  Clients it does not reach get the
  notification straight to their terminal (reach.py, direct.py).  The
  server is the one ``$TMUX`` names (the one headspace runs in), which need
  not be the one it watches (``-L`` / ``-S``).
* ``desktop_problem`` / ``desktop_notify``: ``notify-send`` only when
  headspace runs on the machine you sit at (not over SSH, where it would
  pop up on a screen nobody looks at) with a desktop session, and only if
  installed.  Run without a shell, with a timeout; the title and body are
  separated from options by ``--``, so a session named ``-u critical`` is
  a name.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping

from ..tmux.server import TmuxCommandError, TmuxServer, TmuxUnavailable
from .decide import Notification

NOTIFY_SEND_TIMEOUT = 5.0


def tmux_socket(env: Mapping[str, str]) -> str:
    """The socket of the tmux server headspace runs in (``$TMUX`` is ``socket,pid,session``), or ""."""
    return env.get("TMUX", "").rsplit(",", 2)[0] if env.get("TMUX") else ""


def enable_passthrough(env: Mapping[str, str]) -> tuple[str, str]:
    """Allow passthrough on headspace's own pane: ``(value set, problem)``; ``("", "")`` outside tmux."""
    socket, pane = tmux_socket(env), env.get("TMUX_PANE", "")
    if not socket or not pane:
        return "", ""
    server = TmuxServer(socket_path=socket)
    problem = ""
    for value in ("all", "on"):  # "all": tmux 3.4+ (also from a hidden window); 3.3 knows "on"
        try:
            server.run("set-option", "-p", "-t", pane, "allow-passthrough", value)
            return value, ""
        except TmuxCommandError as exc:
            problem = str(exc)
        except TmuxUnavailable as exc:
            problem = str(exc)
            break
    return "", f"cannot allow passthrough on headspace's pane ({problem}): notifications go straight to your clients' terminals instead"


def desktop_problem(env: Mapping[str, str]) -> str:
    """Why ``notify-send`` cannot be used here, or "" when it can."""
    if env.get("SSH_CONNECTION") or env.get("SSH_TTY"):
        return "headspace runs over SSH: its desktop is not yours (the terminal's notification still reaches you)"
    if not any(env.get(name) for name in ("WAYLAND_DISPLAY", "DISPLAY", "DBUS_SESSION_BUS_ADDRESS")):
        return "no desktop session (no DISPLAY, WAYLAND_DISPLAY or DBUS_SESSION_BUS_ADDRESS)"
    if notify_send_path(env) is None:
        return "notify-send is not installed (apt install libnotify-bin)"
    return ""


def notify_send_path(env: Mapping[str, str]) -> str | None:
    return shutil.which("notify-send", path=env.get("PATH"))


def desktop_notify(note: Notification, binary: str) -> str:
    """Show ``note`` with ``notify-send`` (blocking up to a timeout: call it off the event loop); a problem, or ""."""
    try:
        done = subprocess.run(
            [binary, "--app-name=headspace", "--", note.title, note.body],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=NOTIFY_SEND_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"notify-send failed ({type(exc).__name__})"
    if done.returncode != 0:
        return f"notify-send failed (exit status {done.returncode}: {done.stderr.decode('utf-8', 'replace').strip()[:200]})"
    return ""
