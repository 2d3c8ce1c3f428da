"""Which way each of the user's terminals gets a notification, and the direct write to a terminal.

The decision is pure (reach.py), checked per tmux rule; the write goes to a
real pseudo-terminal made here, and refuses anything that is not one.
"""

from __future__ import annotations

import os
import pty
import select

import pytest

from headspace_tui.notifications.direct import NotATerminal, terminal_problem, write_terminal
from headspace_tui.notifications.reach import CLIENT_FORMAT, DIRECT, NOTHING, PASSTHROUGH, Client, Place, direct_bytes, parse_clients, route, sessions_with

OSC = "\x1b]9;api:0.1 needs permission\x07"
BEL = "\x07"

# headspace in pane %5 of window @3, which sessions $0 ("hs") and $4 (grouped with it) have.
HERE = Place(pane="%5", window="@3", sessions=frozenset({"$0", "$4"}), passthrough="on")


def client(session: str = "$0", window: str = "@3", pane: str = "%5", *, zoomed: bool = False, control: bool = False) -> Client:
    return Client("/dev/pts/9", "/dev/pts/9", control, session, window, pane, zoomed)


def test_a_client_looking_at_headspace_gets_passthrough_and_tmux_bell_nothing_direct():
    c = client()
    assert direct_bytes(c, HERE, OSC, ring=True) == ""
    assert route(c, HERE, osc=True) == PASSTHROUGH


def test_a_client_in_another_session_gets_both_directly():
    c = client(session="$7", window="@8", pane="%9")
    assert direct_bytes(c, HERE, OSC, ring=True) == OSC + BEL
    assert direct_bytes(c, HERE, "", ring=True) == BEL  # notify = "bell"
    assert direct_bytes(c, HERE, OSC, ring=False) == OSC
    assert route(c, HERE, osc=True) == DIRECT


def test_another_window_of_headspaces_session_on_tmux_3_3_gets_the_osc_directly_but_tmux_rings_it():
    c = client(window="@1", pane="%1")  # same session, another window: 'on' passes nothing, the bell flag does
    assert direct_bytes(c, HERE, OSC, ring=True) == OSC
    grouped = client(session="$4", window="@1", pane="%1")
    assert direct_bytes(grouped, HERE, OSC, ring=True) == OSC


def test_a_zoomed_pane_hides_headspace():
    assert direct_bytes(client(pane="%6", zoomed=True), HERE, OSC, ring=True) == OSC
    assert direct_bytes(client(pane="%5", zoomed=True), HERE, OSC, ring=True) == ""
    assert direct_bytes(client(pane="%6", zoomed=False), HERE, OSC, ring=True) == ""  # split: both shown


def test_passthrough_all_reaches_every_client_of_a_session_with_headspaces_window_but_no_other():
    everywhere = Place("%5", "@3", frozenset({"$0"}), "all")
    assert direct_bytes(client(window="@1", pane="%1"), everywhere, OSC, ring=True) == ""
    assert direct_bytes(client(session="$7", window="@8", pane="%9"), everywhere, OSC, ring=True) == OSC + BEL


def test_without_passthrough_or_in_a_popup_everyone_gets_it_directly():
    refused = Place("%5", "@3", frozenset({"$0"}), "")
    assert direct_bytes(client(), refused, OSC, ring=True) == OSC  # tmux still rings headspace's window
    popup = Place("", "", frozenset(), "")
    assert direct_bytes(client(), popup, OSC, ring=True) == OSC + BEL


def test_a_control_client_never_gets_anything():
    c = client(session="$7", window="@8", control=True)
    assert direct_bytes(c, HERE, OSC, ring=True) == "" and route(c, HERE, osc=True) == NOTHING


def test_tmux_lines_are_read_defensively():
    out = "0\t/dev/pts/3\t$1\t@2\t%2\t0\t/dev/pts/3\n1\tclient-99\t$0\t@0\t%0\t1\t\nbroken line\n"
    assert parse_clients(out) == [
        Client("/dev/pts/3", "/dev/pts/3", False, "$1", "@2", "%2", False),
        Client("client-99", "", True, "$0", "@0", "%0", True),
    ]
    assert CLIENT_FORMAT.endswith("#{client_tty}")
    assert sessions_with("@3", ["$0\t@0", "$0\t@3", "$4\t@3", "", "$1\t@33"]) == frozenset({"$0", "$4"})


# -- the write --------------------------------------------------------------------------------


@pytest.fixture
def terminal():
    """A real pseudo-terminal: (the path a tmux client would name, the side a terminal emulator reads)."""
    master, slave = pty.openpty()
    path = os.ttyname(slave)
    yield path, master
    os.close(slave)
    os.close(master)


def read_all(fd: int) -> bytes:
    data = b""
    while select.select([fd], [], [], 0.5)[0]:
        data += os.read(fd, 4096)
    return data


def test_a_notification_reaches_a_real_terminal_whole(terminal):
    path, master = terminal
    assert terminal_problem(path) == ""
    write_terminal(path, (OSC + BEL).encode())
    assert read_all(master) == (OSC + BEL).encode()


def test_anything_but_the_users_terminal_is_refused(tmp_path, terminal):
    plain = tmp_path / "file"
    plain.write_text("")
    with pytest.raises(NotATerminal, match="not a terminal under /dev"):
        write_terminal(str(plain), b"x")
    assert plain.read_text() == ""
    with pytest.raises(NotATerminal, match="not a character device"):
        write_terminal("/dev/shm", b"x")
    with pytest.raises(NotATerminal, match="No such file"):
        write_terminal("/dev/pts/999999", b"x")
    if os.path.exists("/dev/stdin") and os.path.islink("/dev/stdin"):
        with pytest.raises(NotATerminal, match="not a character device"):  # a link is not followed
            write_terminal("/dev/stdin", b"x")


def test_a_terminal_that_does_not_drain_costs_at_most_the_timeout(terminal):
    path, master = terminal
    big = b"x" * (1 << 20)  # more than a pty holds while nobody reads
    with pytest.raises(OSError, match="took more than 0.3s"):
        write_terminal(path, big, timeout=0.3)


# -- the status line, where a terminal may not show the OSC (issue 37) ---------------------------------


def test_a_terminal_is_known_to_show_an_osc_by_what_it_says_it_is_or_its_term():
    from headspace_tui.notifications.reach import Terminal, parse_terminals, shows_osc, status_line_too, status_message

    out = "/dev/pts/3\txterm-256color\tWezTerm 20240203-110809-5046fc22\n/dev/pts/4\txterm-256color\t\nclient-9\txterm-kitty\t\n\nbroken\n/dev/pts/5\tfoot\tfoot(1.16.2)\twith a tab\n"
    terminals = parse_terminals(out)
    assert set(terminals) == {"/dev/pts/3", "/dev/pts/4", "client-9", "/dev/pts/5"}
    assert terminals["/dev/pts/5"] == Terminal("foot", "foot(1.16.2)\twith a tab")  # the terminal's own words go last, whole
    assert shows_osc(terminals["/dev/pts/3"], "osc") and shows_osc(terminals["client-9"], "osc")  # WezTerm by its word, kitty by its TERM
    assert not shows_osc(terminals["/dev/pts/4"], "osc") and not shows_osc(None, "osc")  # unknown: not known to show it
    assert shows_osc(terminals["/dev/pts/5"], "osc777") and not shows_osc(terminals["/dev/pts/5"], "osc")
    assert not shows_osc(terminals["/dev/pts/3"], "bell")
    user, control = client(), client(control=True)
    assert status_line_too(user, terminals["/dev/pts/4"], "osc") and status_line_too(user, None, "osc777")
    assert not status_line_too(user, terminals["/dev/pts/3"], "osc")
    assert status_line_too(user, terminals["/dev/pts/3"], "bell")  # a bell alone says nothing: the words too
    assert not status_line_too(control, None, "osc") and not status_line_too(user, None, "none")
    assert status_message("api:0.0 needs you: echo #{pane_id} ##") == "api:0.0 needs you: echo ##{pane_id} ####"  # shown as written
