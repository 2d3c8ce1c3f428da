"""Which tmux client is the user's: the one a jump must move.

headspace keeps one control-mode client per session, and tmux's idea of
"the current client" counts them: ``switch-client`` without ``-c`` moved
one of them (that session then stopped updating), and in a popup
(``display-popup -E headspace``) there is no ``$TMUX_PANE`` at all.
Measured on tmux 3.3a:

* ``$TMUX`` is ``socket,server pid,session id``, in a pane and in a popup;
  its session id is the session of the client that opened the popup.
* ``list-clients -t <pane or $session>`` lists that session's clients;
  ``#{client_control_mode}`` is 1 for control clients; a real client's
  ``#{client_activity}`` moves with each key it sends (so the most recent
  is the one whose user pressed Enter).
* ``switch-client -c NAME -t %N`` moves only that client, and selects the
  window and the pane too.

A popup binding can name the client for certain:
``bind h set-environment -gF HEADSPACE_CLIENT '#{client_name}' \\; display-popup -E headspace``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from .server import TmuxCommandError, TmuxServer


@dataclass(frozen=True)
class Where:
    """Where headspace runs, as far as tmux goes."""

    inside: bool  # in a pane or popup of the server it watches
    popup: bool  # in a popup (no pane of its own)
    client: str | None  # the user's client, if one was found


def _same_path(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return a == b


def locate(server: TmuxServer, env: Mapping[str, str] | None = None) -> Where:
    """Whether headspace runs inside ``server``, and the user's (never a control-mode) client there.

    Two questions to tmux: which socket (and, from a pane, which session the
    pane is in now), and every client with its session and last activity.
    """
    env = os.environ if env is None else env
    fields = env.get("TMUX", "").split(",")
    if not fields[0]:
        return Where(False, False, None)
    pane = env.get("TMUX_PANE", "")
    try:
        socket, _, session = server.run("display-message", "-p", *(["-t", pane] if pane else []), "#{socket_path}\t#{session_id}").strip().partition("\t")
    except TmuxCommandError:
        return Where(False, False, None)
    if not _same_path(fields[0], socket):
        return Where(False, False, None)  # inside another tmux server: its clients are not this one's
    if not pane:  # a popup: the session of the client that opened it
        session = f"${fields[2]}" if len(fields) > 2 and fields[2].isdigit() else ""
    clients = _real_clients(server)
    named = env.get("HEADSPACE_CLIENT", "")
    if named and any(name == named for name, _, _ in clients):
        return Where(True, not pane, named)
    # The session's own clients; if it has none (detached), any of the server's.
    mine = [c for c in clients if c[1] == session] or clients
    if not mine:
        return Where(True, not pane, None)
    return Where(True, not pane, max(mine, key=lambda c: c[2])[0])


def _real_clients(server: TmuxServer) -> list[tuple[str, str, int]]:
    """(name, session id, last activity) of every client that is not in control mode."""
    try:
        out = server.run("list-clients", "-F", "#{client_control_mode}\t#{client_activity}\t#{session_id}\t#{client_name}")
    except TmuxCommandError:
        return []
    found = []
    for line in out.splitlines():
        control, activity, session, name = (line.split("\t", 3) + ["", "", ""])[:4]
        if control == "0" and name:
            found.append((name, session, int(activity) if activity.isdigit() else 0))
    return found


def switch(server: TmuxServer, client: str, pane_id: str) -> None:
    """Move the user's ``client`` to ``pane_id`` (its session, window and pane)."""
    server.run("switch-client", "-c", client, "-t", pane_id)
