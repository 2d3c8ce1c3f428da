"""A notification straight to the terminals of the user's tmux clients, where tmux would not carry it.

reach.py decides, per client, what passthrough and tmux's bell miss; this
asks tmux (the server headspace runs in, ``$TMUX``: it need not be the one
headspace watches) and writes.  Blocking (a few ``tmux`` calls, one write
per terminal): call it off the event loop.

A terminal is written to only if it is the user's own: the path tmux gives
as ``client_tty`` must be a character device under ``/dev`` owned by this
user, checked before it is opened and again on the open descriptor (the
same file, still a terminal).  It is opened ``O_NOCTTY`` (never becomes
headspace's controlling terminal), ``O_NONBLOCK`` (a terminal that does not
drain cannot hold headspace) and ``O_NOFOLLOW``, written with a short
deadline, and closed.  A notification is one ``write(2)`` of a few hundred
bytes, which the kernel's tty layer does not interleave with any other
write to that terminal; it could still fall between two writes of tmux
that split one escape sequence, which tmux does only when the terminal
stops draining (its output is written whole otherwise).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import select
import stat
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

from ..tmux.server import TmuxCommandError, TmuxServer, TmuxTimeout, TmuxUnavailable
from .deliver import tmux_socket
from .reach import CLIENT_FORMAT, TERMINAL_FORMAT, Client, Place, direct_bytes, parse_clients, parse_terminals, sessions_with, status_line_too, status_message

WRITE_TIMEOUT = 1.0  # seconds a terminal may take to accept a notification
STATUS_SECONDS = 8  # how long the notice stays in a client's status line (display-message -d)

log = logging.getLogger(__name__)


class NotATerminal(Exception):
    """The path is not a terminal of this user's: nothing was written."""


Run = Callable[..., str]  # a tmux command's arguments to its output; raises TmuxCommandError / TmuxUnavailable


def asked_on(loop: asyncio.AbstractEventLoop, ask: Callable[..., Coroutine[Any, Any, str]], wait: float) -> Run:
    """``run`` for a thread whose tmux commands are asked on ``loop`` (``ask``: the service's, through a control client it holds)."""

    def run(*args: str) -> str:
        try:
            return asyncio.run_coroutine_threadsafe(ask(*args), loop).result(wait)
        except TimeoutError:
            raise TmuxTimeout(f"tmux did not answer within {wait:g}s") from None

    return run


def look(env: Mapping[str, str], passthrough: str, run: Run) -> tuple[Place, list[Client]] | None:
    """Where headspace runs and every client of that server (asked by ``run``); None outside tmux.

    Raises ``TmuxCommandError`` / ``TmuxUnavailable`` when tmux does not answer.
    """
    if not tmux_socket(env):
        return None
    pane = env.get("TMUX_PANE", "")
    window, sessions = "", frozenset[str]()
    if pane:
        window = run("display-message", "-p", "-t", pane, "#{window_id}").strip()
        sessions = sessions_with(window, run("list-windows", "-a", "-F", "#{session_id}\t#{window_id}").splitlines())
    clients = parse_clients(run("list-clients", "-F", CLIENT_FORMAT))
    return Place(pane, window, sessions, passthrough if pane else ""), clients


def terminal_problem(path: str) -> str:
    """Why ``path`` is not a terminal headspace may write to, or ""."""
    if not path.startswith("/dev/"):
        return f"{path!r} is not a terminal under /dev"
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if not stat.S_ISCHR(info.st_mode):
        return f"{path} is not a character device"
    if info.st_uid != os.getuid():
        return f"{path} belongs to another user"
    return ""


def write_terminal(path: str, data: bytes, timeout: float = WRITE_TIMEOUT) -> None:
    """Write ``data`` to the user's terminal at ``path`` (see the module's rules); raises ``NotATerminal`` or ``OSError``."""
    problem = terminal_problem(path)
    if problem:
        raise NotATerminal(problem)
    before = os.lstat(path)
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino, info.st_rdev) != (before.st_dev, before.st_ino, before.st_rdev) or not os.isatty(fd):
            raise NotATerminal(f"{path} changed while it was opened")
        deadline = time.monotonic() + timeout
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                pass
            if view:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise OSError(errno.ETIMEDOUT, f"the terminal took more than {timeout:g}s")
                select.select([], [fd], [], left)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Sent:
    """What one notification did to the clients: the terminals written to, and one line per problem."""

    written: tuple[str, ...]
    problems: tuple[str, ...]


def to_clients(env: Mapping[str, str], sequence: str, *, ring: bool, passthrough: str, mode: str = "", text: str = "", run: Run | None = None) -> Sent:
    """Write ``sequence`` (the bare OSC, "" for the bell alone) and the bell to every client tmux would not reach.

    With ``text``: also in the status line of every client whose terminal is
    not known to show notify ``mode``'s OSC (reach.py's ``status_line_too``).
    ``run``: how tmux is asked (the service's: through a control client it
    has attached; a tmux client of its own costs a server with hundreds of
    control clients half a second each).
    """
    run = run or TmuxServer(socket_path=tmux_socket(env)).run
    try:
        found = look(env, passthrough, run)
    except (TmuxCommandError, TmuxUnavailable) as exc:
        return Sent((), (f"cannot list tmux's clients ({exc})",))
    if found is None:
        return Sent((), ())
    place, clients = found
    written, problems = [], []
    for client in clients:
        data = direct_bytes(client, place, sequence, ring=ring)
        if not data:
            continue
        try:
            write_terminal(client.tty, data.encode("utf-8"))
        except (NotATerminal, OSError) as exc:
            problems.append(f"cannot write to client {client.name}'s terminal ({exc})")
            continue
        written.append(client.tty)
    if text:
        problems += to_status_lines(run, clients, mode, text)
    log.debug("notification: direct to %s; %s", written, problems)
    return Sent(tuple(written), tuple(problems))


def to_status_lines(run: Run, clients: list[Client], mode: str, text: str) -> list[str]:
    """``text`` in the status line of each client whose terminal may not show the OSC; one line per problem."""
    if not any(status_line_too(client, None, mode) for client in clients):
        return []  # none could need it (control clients only, or a mode with no OSC): tmux is not asked
    try:
        terminals = parse_terminals(run("list-clients", "-F", TERMINAL_FORMAT))
    except (TmuxCommandError, TmuxUnavailable) as exc:
        return [f"cannot ask tmux what its clients' terminals are ({exc})"]
    problems = []
    for client in clients:
        if not status_line_too(client, terminals.get(client.name), mode):
            continue
        try:
            run("display-message", "-c", client.name, "-d", str(STATUS_SECONDS * 1000), "--", status_message(text))
        except (TmuxCommandError, TmuxUnavailable) as exc:
            problems.append(f"cannot show the notice in client {client.name}'s status line ({exc})")
    return problems
