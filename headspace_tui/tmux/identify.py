"""tmux's client protocol, as much of it as a control client needs: the identify in one write.

Standard library only: it runs here (tmux/direct_attach.py, for asyncio) and
in the probe on a remote host (remote/probe_tmux.py, with threads).  Why the
order matters is direct_attach.py's docstring.  The messages are tmux's
``tmux-protocol.h`` (protocol version 8; the numbers and flags are the same
from 3.2 to 3.7c and later; before 3.2 a control client's input and output
went through the protocol socket itself, with no ``MSG_IDENTIFY_STDOUT``,
so this attach is only for 3.2 and later); each size is exactly what the server checks
(a wrong size there is a ``fatalx``: the server exits), which
tests/unit/test_direct_attach.py checks message by message and
tests/e2e/test_direct_attach.py against the real server.
"""

from __future__ import annotations

import os
import re
import socket
import struct
from collections.abc import Mapping

PROTOCOL_VERSION = 8
HEADER = struct.Struct("=IHHII")  # imsg header: type, length (with header), flags, peer id (protocol), pid
HAS_FD = 1  # IMSGF_HASFD: this message carries a file descriptor
# tmux-protocol.h
MSG_IDENTIFY_FLAGS, MSG_IDENTIFY_TERM, MSG_IDENTIFY_TTYNAME = 100, 101, 102
MSG_IDENTIFY_STDIN, MSG_IDENTIFY_DONE, MSG_IDENTIFY_CLIENTPID = 104, 106, 107
MSG_IDENTIFY_CWD, MSG_IDENTIFY_FEATURES, MSG_IDENTIFY_STDOUT = 108, 109, 110
MSG_COMMAND, MSG_DETACH, MSG_DETACHKILL, MSG_EXIT, MSG_EXITED, MSG_EXITING = 200, 201, 202, 203, 204, 205
MSG_SHUTDOWN = 210
MAX_MESSAGE = 16384  # MAX_IMSGSIZE
# tmux.h: the client flags ``tmux -u -C`` identifies with
CLIENT_CONTROL = 0x2000
CLIENT_UTF8 = 0x10000
FIXED_IN = (3, 7)  # PRs #4980 and #5004: notifications skip a control client not yet set up
SPOKEN_FROM = (3, 2)  # MSG_IDENTIFY_STDOUT (and the control client's own descriptors) came in 3.2
_VERSION = re.compile(r"^(?:tmux )?(\d+)\.(\d+)")


def _release(version: str) -> tuple[int, int] | None:
    match = _VERSION.match(version.strip())
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def possible(version: str) -> bool:
    """Whether this attach works with that tmux (``3.3a`` or ``tmux 3.3a``): 3.2 or later, or a name that is no release (``master``)."""
    release = _release(version)
    return bool(version.strip()) and (release is None or release >= SPOKEN_FROM)


def wanted(version: str) -> bool:
    """Whether a tmux (``#{version}`` or its ``tmux -V`` line) needs the windowless attach: 3.2 up to 3.7.

    ``next-3.8``, ``master`` or anything unreadable is taken as new (the
    stock client, which a fixed server handles).  Before 3.2 the crash's
    code does not exist (no control state) and this attach cannot work.
    """
    release = _release(version)
    return release is not None and SPOKEN_FROM <= release < FIXED_IN


def chosen(version: str, environ: Mapping[str, str]) -> bool:
    """Whether to attach directly: ``HEADSPACE_TMUX_ATTACH=direct`` or ``=client`` decides where it can work (benchmarks and tests compare both), else ``wanted``."""
    choice = environ.get("HEADSPACE_TMUX_ATTACH", "")
    if choice in ("client", "direct"):
        return choice == "direct" and possible(version)
    return wanted(version)


def message(kind: int, data: bytes = b"", *, fd: bool = False) -> bytes:
    """One protocol message as tmux's client composes it (peer id = protocol version, pid -1)."""
    if HEADER.size + len(data) > MAX_MESSAGE:
        raise ValueError("tmux message too long")
    return HEADER.pack(kind, HEADER.size + len(data), HAS_FD if fd else 0, PROTOCOL_VERSION, 0xFFFFFFFF) + data


def identify_and_command(command: list[str], pid: int) -> bytes:
    """Everything after the two descriptors, for one write: flags to DONE, then the command.

    A control client needs nothing of our terminal or environment: no TERM
    (the server records "unknown"), no tty name (it is named
    ``client-PID``), ``/`` as its folder, no variables (``attach-session
    -E`` applies none anyway).
    """
    if not command or any("\0" in arg for arg in command):
        raise ValueError("bad tmux command")
    argv = b"".join(arg.encode() + b"\0" for arg in command)
    return b"".join(
        (
            message(MSG_IDENTIFY_FLAGS, struct.pack("=i", CLIENT_CONTROL | CLIENT_UTF8)),
            message(MSG_IDENTIFY_TERM, b"\0"),
            message(MSG_IDENTIFY_TTYNAME, b"\0"),
            message(MSG_IDENTIFY_CWD, b"/\0"),
            message(MSG_IDENTIFY_FEATURES, struct.pack("=i", 0)),
            message(MSG_IDENTIFY_CLIENTPID, struct.pack("=i", pid)),
            message(MSG_IDENTIFY_DONE),
            message(MSG_COMMAND, struct.pack("=i", len(command)) + argv),
        )
    )


def message_types(buffer: bytearray) -> list[int]:
    """Take the whole messages off the front of ``buffer``; their types (payloads are of no use to us)."""
    kinds = []
    while len(buffer) >= HEADER.size:
        kind, length, _flags, _peer, _pid = HEADER.unpack_from(buffer)
        if length < HEADER.size:
            raise ValueError("bad message from tmux")
        if len(buffer) < length:
            break
        kinds.append(kind)
        del buffer[:length]
    return kinds


def goodbye(buffer: bytearray, data: bytes) -> tuple[bytes | None, bool]:
    """The server's messages in ``data`` (``buffer`` keeps a partial one): what to answer, and whether the client is done.

    Its goodbye (``MSG_EXIT``, a detach) is answered ``MSG_EXITING``, as
    tmux's client does; ``MSG_EXITED`` or ``MSG_SHUTDOWN`` is the end.
    ``ValueError`` for a garbled message.
    """
    buffer += data
    kinds = message_types(buffer)
    reply = message(MSG_EXITING) if any(k in (MSG_EXIT, MSG_DETACH, MSG_DETACHKILL) for k in kinds) else None
    return reply, any(k in (MSG_EXITED, MSG_SHUTDOWN) for k in kinds)


def identify_on(peer: socket.socket, command: list[str]) -> socket.socket:
    """On a connected, blocking ``peer``: a control client's identify and ``command``; our end of its input and output.

    The server gets the other end of a new socketpair as the client's stdin
    and stdout (and holds its own copies: ours of that end is closed here,
    or the client's end would never be seen).  Nothing is left open on an
    error (``OSError``, ``ValueError``).
    """
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        send_identify(peer, theirs, command)
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return ours


def send_identify(peer: socket.socket, theirs: socket.socket, command: list[str]) -> None:
    """On a connected, blocking ``peer``: the two descriptors alone (``theirs``, for the server's stdin and
    stdout), then everything else in one write.

    A failure before that last write leaves the server a client that never
    said it is a control client (harmless: it is dropped when the socket
    closes).  The writes are small and the socket new: they never wait.
    """
    body = identify_and_command(command, os.getpid())
    socket.send_fds(peer, [message(MSG_IDENTIFY_STDIN, fd=True)], [theirs.fileno()])
    socket.send_fds(peer, [message(MSG_IDENTIFY_STDOUT, fd=True)], [theirs.fileno()])
    peer.sendall(body)


def selecting_args(socket_name: str | None, socket_path: str | None) -> list[str]:
    """The ``-L``/``-S`` arguments that select a server (none: the default one); ``-S`` wins, as in tmux(1)."""
    if socket_path:
        return ["-S", socket_path]
    if socket_name:
        return ["-L", socket_name]
    return []


def server_identity(socket_args: list[str], environ: Mapping[str, str], uid: int) -> str:
    """A server for good, whatever named it: its socket's real path (``-L work``, ``-S /tmp/tmux-0/work`` and $TMUX inside it are one server).

    Here, not only on ``TmuxServer``: a command that only asks the service
    (``status``) names its server without loading the tmux client.
    """
    return "S:" + os.path.realpath(socket_file(socket_args, environ, uid))


def socket_file(socket_args: list[str], environ: Mapping[str, str], uid: int) -> str:
    """The socket a ``tmux`` with these ``-L``/``-S`` arguments talks to, found as tmux(1) finds it."""
    if "-S" in socket_args:
        return socket_args[socket_args.index("-S") + 1]
    name = socket_args[socket_args.index("-L") + 1] if "-L" in socket_args else "default"
    if name == "default" and "-L" not in socket_args and environ.get("TMUX"):
        return environ["TMUX"].split(",", 1)[0]
    return os.path.join(environ.get("TMUX_TMPDIR") or "/tmp", f"tmux-{uid}", name)
