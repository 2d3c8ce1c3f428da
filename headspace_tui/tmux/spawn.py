"""Starting a program in a new tmux window: where (which session), in which folder, as argv.

Measured on tmux 3.3a:

* ``new-window -d -P -F '#{pane_id}' -t '$3:' -c DIR -- claude ARG…`` runs
  the program directly (more than one word after the options: tmux execs
  them, no shell), in DIR, and prints the new pane's id.  ``-d`` leaves the
  session's current window where it is: headspace in a pane of that session
  stays on screen.  The program ends, the window closes (unless the user set
  ``remain-on-exit``).
* The new pane's environment is the server's global environment (with the
  session's), and its PATH is that of the client that asked when that client
  is not itself attached: ``headspace new`` finds ``claude`` where its own
  shell would.
* Even as separate arguments, a word that ends in ``;`` ends the tmux
  command there (``claude ';'`` ran "claude" and then failed on the rest);
  tmux reads ``\\;`` at the end of a word as a plain ``;``, so every such
  word gets that backslash (``x\\;`` then reaches the program as ``x\\;``).
* ``=NAME`` names a session exactly (``-t work`` alone would also match a
  session called ``workshop``).

A session named on the command line that does not exist is made, detached,
with the program in its first window: asking for a session is asking for it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from .server import TmuxCommandError, TmuxServer


class SpawnError(Exception):
    """The window could not be made, in one line for the user."""


def current_session(server: TmuxServer, env: Mapping[str, str]) -> str | None:
    """The id (``$N``) of the session headspace runs in, when it runs inside ``server``; else None.

    ``$TMUX`` is ``socket,pid,session``; from a pane, ``$TMUX_PANE`` says
    which session that pane is in now (it may have been moved).
    """
    fields = env.get("TMUX", "").split(",")
    if not fields[0]:
        return None
    pane = env.get("TMUX_PANE", "")
    try:
        socket, _, session = server.run("display-message", "-p", *(["-t", pane] if pane else []), "#{socket_path}\t#{session_id}").strip().partition("\t")
    except TmuxCommandError:
        return None
    if not _same_file(fields[0], socket):
        return None  # inside another tmux server
    if not pane:  # a popup: the session of the client that opened it
        session = f"${fields[2]}" if len(fields) > 2 and fields[2].isdigit() else ""
    return session or None


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a == b


def check_session_name(name: str) -> None:
    """tmux session names cannot hold ``:`` or ``.`` (tmux would rename it), and ``-`` first reads as an option."""
    if not name or name.startswith("-") or any(c in name for c in ":.") or not name.isprintable():
        raise SpawnError(f"not a usable tmux session name: {name!r}")


def session_exists(server: TmuxServer, name: str) -> bool:
    try:
        server.run("has-session", "-t", f"={name}")
    except TmuxCommandError:
        return False
    return True


def start_window(
    server: TmuxServer,
    argv: Sequence[str],
    *,
    cwd: str,
    session: str | None = None,
    session_id: str | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Run ``argv`` in a new detached window of session ``session`` (a name, made if missing) or ``session_id`` (``$N``); its pane's address.

    ``env``: variables set for this window only (``-e``), over the server's.
    """
    if not argv:
        raise SpawnError("nothing to run")
    sets = [arg for key, value in (env or {}).items() for arg in ("-e", f"{key}={value}")]
    tail = literal_argv([*sets, "--", *argv])
    if session is not None:
        check_session_name(session)
        if not session_exists(server, session):
            out = server.run("new-session", "-d", "-P", "-F", "#{pane_id}", "-s", session, "-c", cwd, *tail)
            return server.address(_pane_id(out))
        where = f"={session}:"
    elif session_id is not None:
        where = f"{session_id}:"
    else:
        raise SpawnError("no tmux session to start in")
    return server.address(_pane_id(server.run("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", where, "-c", cwd, *tail)))


def literal_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` as tmux must be given it for the program to receive it unchanged (a trailing ``;`` escaped)."""
    return [arg[:-1] + "\\;" if arg.endswith(";") else arg for arg in argv]


def _pane_id(out: str) -> str:
    pane = out.strip()
    if not pane.startswith("%"):
        raise SpawnError(f"tmux did not say which pane it made ({pane[:40]!r})")
    return pane


def kill_pane(server: TmuxServer, pane_id: str) -> None:
    """Close one pane by its id (never by a name that could match another)."""
    if not pane_id.startswith("%"):
        raise SpawnError(f"refusing to close {pane_id!r}: panes are closed by id (%N) only")
    server.run("kill-pane", "-t", pane_id)
