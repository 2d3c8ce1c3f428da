"""Where the resident service of one tmux server lives: its socket, its lock and its card.

In shared/ because the in-process headspace asks it too: while a resident
service watches its server, that one rings (``Service.rings_elsewhere``).

All three are in ``<runtime>/service/`` (``$XDG_RUNTIME_DIR/headspace/service``,
else ``/tmp/headspace-<uid>/service``), a folder made 0700 and refused when
it is a link, another user's, or open to others (the answer channel's rules,
shared/safe_files.is_private_dir).  One service per tmux server: the names
carry a digest of the server's key (``-L work`` and ``-S /path`` are two
servers), so two servers' services never meet.

* ``<name>.lock``: held (flock) by the running service for its whole life;
  the kernel lets go of it however the service ends, so a SIGKILLed
  service never blocks the next one.
* ``<name>.sock``: the service's HTTP socket, 0600; a stale one (nobody
  holds the lock) is removed by the next service.
* ``<name>.json``: the card (pid, version, server, socket, started): what a
  second ``serve`` and ``serve --status`` say of the first.  Read
  defensively: a regular file, small, or nothing.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .paths import runtime_dir
from .safe_files import Unreadable, is_private_dir, read_regular

CARD_MAX = 4096  # bytes: a card is a few fields
LOCK_PATIENCE = 0.5  # seconds a starting service asks for the lock again (a client's look holds it for an instant)
ENDING_PATIENCE = 5.0  # seconds it waits for the lock of a service that was killed (gone, or a zombie) and is still being torn down


class PlaceError(Exception):
    """The service's folder cannot be used; one line for the user."""


class Taken(PlaceError):
    """Another service holds this server's lock."""


@dataclass(frozen=True)
class Place:
    """The files of the service of one tmux server (by its key, ``TmuxServer.key``)."""

    folder: Path
    name: str

    @property
    def socket(self) -> Path:
        return self.folder / f"{self.name}.sock"

    @property
    def lock(self) -> Path:
        return self.folder / f"{self.name}.lock"

    @property
    def card(self) -> Path:
        return self.folder / f"{self.name}.json"


def place_of(server_key: str, env: Mapping[str, str] | None = None) -> Place:
    """The place of the service that watches the tmux server ``server_key``.

    The name is a digest, not the key itself: a socket path may be long
    (a Unix socket's path has a 108-byte limit) or hold any character.
    """
    digest = hashlib.sha256(server_key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Place(runtime_dir(env) / "service", f"tmux-{digest}")


def make_folder(place: Place) -> None:
    """Create the folder (0700, its parent too) and check it is private; PlaceError when not."""
    try:
        place.folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        for folder in (place.folder.parent, place.folder):
            problem = is_private_dir(folder)
            if problem:
                raise PlaceError(f"cannot use {folder}: {problem}")
        place.folder.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise PlaceError(f"cannot create {place.folder}: {exc.strerror or exc}") from None
    problem = is_private_dir(place.folder)
    if problem:
        raise PlaceError(f"cannot use {place.folder}: {problem}")


def take_lock(place: Place, *, patience: float = LOCK_PATIENCE) -> int:
    """Hold this server's lock for the life of the process: its descriptor (close it to let go). Taken when another holds it.

    Asked again for ``patience`` seconds: a client's look (``is_held``) holds
    it shared for an instant, which must not turn a starting service away.
    """
    try:
        fd = os.open(place.lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise PlaceError(f"cannot open {place.lock}: {exc.strerror or exc}") from None
    deadline = time.monotonic() + patience
    ending = time.monotonic() + ENDING_PATIENCE
    seen_ending = False  # once seen ending, it stays so: a look between its signal and its zombie finds neither
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            now = time.monotonic()
            seen_ending = seen_ending or _holder_ended(place)
            if now >= deadline and not (now < ending and seen_ending):
                os.close(fd)
                raise Taken(where(place)) from None
            time.sleep(0.02)


PF_EXITING = 0x4  # /proc/PID/stat's flags: the process is being torn down (its signal taken, not yet a zombie)


def _holder_ended(place: Place) -> bool:
    """The card's service is gone, a zombie, being torn down, or has SIGKILL pending: killed a moment ago, its lock goes once the kernel has torn it down.

    A look taken after the kill left the pending set and before the process
    became a zombie finds none of these but the exiting flag.  Beside a busy
    core a start right after a kill once said one already ran (the page's
    restart test, 1 run in 4); this window is the likely way, and
    ``take_lock`` keeps what it saw once.
    """
    pid = (read_card(place) or {}).get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    if _exiting(pid):
        return True
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            fields = dict(line.split(b":", 1) for line in status.read().splitlines() if b":" in line)
    except OSError:
        return False
    state = fields.get(b"State", b"").split()[:1]
    pending = [int(fields.get(key, b"0").strip() or b"0", 16) for key in (b"SigPnd", b"ShdPnd")]
    return state in ([b"Z"], [b"X"]) or any(mask & (1 << (9 - 1)) for mask in pending)  # a zombie, or SIGKILL on its way


def _exiting(pid: int) -> bool:
    """Whether the kernel is tearing ``pid`` down (PF_EXITING in /proc/PID/stat's flags; False when that cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
        return bool(int(raw[raw.rindex(b")") + 2 :].split()[6]) & PF_EXITING)
    except (OSError, ValueError, IndexError):
        return False


def is_held(place: Place) -> bool:
    """Whether a service holds this server's lock now (a look: the lock is let go at once)."""
    try:
        fd = os.open(place.lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def write_card(place: Place, card: dict[str, Any]) -> None:
    """Write the card whole (a temporary file renamed over it), 0600."""
    temporary = place.folder / f".{place.name}.json.{os.getpid()}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        json.dump(card, file)
    os.replace(temporary, place.card)


def read_card(place: Place) -> dict[str, Any] | None:
    """The card of the service that runs (or ran) here, or None (none, unreadable, not a card)."""
    try:
        card = json.loads(read_regular(place.card, CARD_MAX))
    except (FileNotFoundError, Unreadable, ValueError):
        return None
    return card if isinstance(card, dict) else None


def where(place: Place) -> str:
    """One line on the service that holds the lock (why a second one is not started): its pid, version and socket, as its card says."""
    return f"a headspace service already runs for this tmux server ({facts(place)})"


def facts(place: Place) -> str:
    """The running service as its card says: "pid 123, version 0.1.0, up 5m; socket …"."""
    card = read_card(place) or {}
    pid, version = card.get("pid"), card.get("version")
    started = card.get("started")
    since = f", up {_age(time.time() - started)}" if isinstance(started, (int, float)) else ""
    who = f"pid {pid}" if isinstance(pid, int) else "pid unknown"
    return f"{who}, version {version or 'unknown'}{since}; socket {place.socket}"


def _age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"


def remove_files(place: Place, socket_inode: int | None) -> None:
    """Remove the socket (only if it is still ours: ``socket_inode``) and the card; the lock file stays (it is how the next one waits)."""
    try:
        if socket_inode is not None and os.lstat(place.socket).st_ino == socket_inode:
            os.unlink(place.socket)
    except OSError:
        pass
    card = read_card(place)
    if card is not None and card.get("pid") == os.getpid():
        try:
            os.unlink(place.card)
        except OSError:
            pass
