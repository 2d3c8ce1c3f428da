"""Which way a notification reaches each of the user's terminals: pure, from what tmux says.

Inside tmux, headspace's own terminal is a pane, and what it writes there
reaches a client's terminal only the ways tmux lets it (tmux's
``screen-write.c`` / ``alerts.c``, measured on 3.3a):

* **passthrough** (the OSC, wrapped in ``ESC P tmux;``): with
  ``allow-passthrough on`` (3.2-3.3 know no other), only to a client whose
  session's current window is headspace's window, and only if headspace's
  pane is shown in it (not hidden behind another zoomed pane).  With
  ``all`` (3.4+), to every client whose session *has* headspace's window,
  looked at or not.  A client in a session without that window never gets
  it, whatever the version: after a jump to an agent in another session,
  which is exactly when a notification matters.
* **the bell** (BEL, never wrapped): tmux marks headspace's window and rings
  the terminal of every client whose session has that window (as that
  session's ``bell-action`` / ``visual-bell`` say).  Again, a client in
  another session hears nothing.

Every client that one of them misses gets what it misses written straight
to its terminal (``client_tty``, direct.py): the OSC if passthrough does
not reach it, the bell if tmux's does not.  So each terminal gets exactly
one OSC and one bell per notification.  In a popup (no pane of its own)
neither reaches anyone, and every client gets both directly.  A control
client (headspace's own, an editor's) is no terminal and gets nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .decide import BEL

# list-clients -F: in a client's line, the window and pane are those its session shows.
CLIENT_FIELDS = ("client_control_mode", "client_name", "session_id", "window_id", "pane_id", "window_zoomed_flag", "client_tty")
CLIENT_FORMAT = "\t".join(f"#{{{name}}}" for name in CLIENT_FIELDS)

PASSTHROUGH, DIRECT, BELL_ONLY, NOTHING = "passthrough", "direct", "bell", "nothing"


@dataclass(frozen=True)
class Client:
    """One client attached to the server headspace runs in, and what it shows now."""

    name: str
    tty: str  # its terminal ("" when tmux does not know one)
    control: bool  # a control-mode client: no terminal of a user's
    session: str  # session id ($N)
    window: str  # the window its session shows (@N)
    pane: str  # that window's active pane (%N)
    zoomed: bool  # that window is zoomed (only its active pane is shown)


@dataclass(frozen=True)
class Place:
    """Where headspace runs in tmux, and what it could set up there."""

    pane: str  # headspace's pane (%N); "" in a popup
    window: str  # its window (@N); "" in a popup
    sessions: frozenset[str]  # every session that has headspace's window (linked or grouped)
    passthrough: str  # allow-passthrough as set on headspace's pane: "all", "on", or "" (none)


def parse_clients(output: str) -> list[Client]:
    """``list-clients -F CLIENT_FORMAT``'s lines; the tty goes last (a path may hold a tab)."""
    clients = []
    for line in output.splitlines():
        parts = line.split("\t", len(CLIENT_FIELDS) - 1)
        if len(parts) != len(CLIENT_FIELDS):
            continue
        control, name, session, window, pane, zoomed, tty = parts
        clients.append(Client(name, tty, control != "0", session, window, pane, zoomed == "1"))
    return clients


def passthrough_reaches(client: Client, place: Place) -> bool:
    """Whether headspace's wrapped OSC reaches this client's terminal through tmux."""
    if not place.pane or place.passthrough not in ("on", "all"):
        return False
    if place.passthrough == "all":
        return client.session in place.sessions
    return client.window == place.window and (not client.zoomed or client.pane == place.pane)


def bell_reaches(client: Client, place: Place) -> bool:
    """Whether the bell headspace rings in its pane reaches this client (tmux rings sessions that have its window)."""
    return bool(place.pane) and client.session in place.sessions


def direct_bytes(client: Client, place: Place, sequence: str, *, ring: bool) -> str:
    """What to write straight to this client's terminal: what passthrough and tmux's bell miss ("" for nothing)."""
    if client.control:
        return ""
    osc = sequence if sequence and not passthrough_reaches(client, place) else ""
    bell = BEL if ring and not bell_reaches(client, place) else ""
    return osc + bell


def route(client: Client, place: Place, *, osc: bool) -> str:
    """For people (doctor, the log): how a notification reaches this client."""
    if client.control:
        return NOTHING
    if osc and passthrough_reaches(client, place):
        return PASSTHROUGH
    if not osc and bell_reaches(client, place):
        return BELL_ONLY
    return DIRECT


def sessions_with(window: str, lines: Iterable[str]) -> frozenset[str]:
    """From ``list-windows -a -F '#{session_id}\\t#{window_id}'``: the sessions that have ``window``."""
    found = set()
    for line in lines:
        session, _, wid = line.partition("\t")
        if wid == window and session:
            found.add(session)
    return frozenset(found)


# -- what each client's terminal can show -----------------------------------------------------------
#
# An OSC a terminal does not know is swallowed without a word (xterm, Alacritty, GNOME
# Terminal, Apple's Terminal): there a notification was a bare bell.  tmux knows each
# client's terminal: ``client_termtype`` (the terminal's own answer to XTVERSION, tmux 3.3+)
# and ``client_termname`` (its TERM).  A terminal known to show the OSC gets it alone; every
# other one also gets the notice in its tmux status line (``display-message -c``): a
# terminal not known is told twice rather than not at all.
TERMINAL_FORMAT = "#{client_name}\t#{client_termname}\t#{client_termtype}"  # the type last: it is the terminal's own text
SHOWS = {
    "osc": ("iterm2", "wezterm", "kitty", "ghostty"),  # OSC 9
    "osc777": ("rxvt", "foot", "wezterm", "ghostty"),  # OSC 777 ; notify
}


@dataclass(frozen=True)
class Terminal:
    """A client's terminal as tmux knows it."""

    termname: str  # its TERM ("xterm-256color", "xterm-kitty")
    termtype: str  # what it says it is ("WezTerm 20240203-…", "iTerm2 3.5.0"), "" when it did not say


def parse_terminals(output: str) -> dict[str, Terminal]:
    """``list-clients -F TERMINAL_FORMAT``'s lines, by client name."""
    found = {}
    for line in output.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3 and parts[0]:
            found[parts[0]] = Terminal(parts[1], parts[2])
    return found


def shows_osc(terminal: Terminal | None, mode: str) -> bool:
    """Whether this terminal is known to show notify ``mode``'s OSC (``bell`` and ``none`` show none)."""
    if terminal is None:
        return False
    known = SHOWS.get(mode, ())
    said = f"{terminal.termtype} {terminal.termname}".lower()
    return any(name in said for name in known)


def status_line_too(client: Client, terminal: Terminal | None, mode: str) -> bool:
    """Whether this client also gets the notice in tmux's status line: a user's terminal not known to show the OSC."""
    return not client.control and mode in ("osc", "osc777", "bell") and not shows_osc(terminal, mode)


def status_message(text: str) -> str:
    """``text`` for ``display-message``, which expands ``#{…}`` formats in it: every ``#`` doubled, so it is shown as written."""
    return text.replace("#", "##")
