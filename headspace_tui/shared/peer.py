"""Who is at the other end of a Unix socket: the answer channel and the resident service let in the same user only.

Standard library only (the answer channel travels in the remote probe).
"""

from __future__ import annotations

import socket
import struct
from typing import Any


def peer_uid(sock: Any) -> int | None:
    """The uid of the process at the other end of ``sock`` (SO_PEERCRED), or None where it cannot be told."""
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    return struct.unpack("3i", creds)[1]
