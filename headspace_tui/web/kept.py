"""The page's settings kept across the service's restarts: the same address, the same token, the page back by itself.

The trial: the service was killed, a client brought it back in 3 s, but not
its page: the phone said "not live: reconnecting…" forever, and the next
``headspace web`` printed a new address.  So the page that was on is kept
in the state folder (``web/<the service's name>.json``, 0600 in a 0700
folder: it holds the token) from the moment it is turned on until it is
turned off; a service that starts finds it and serves the page again at
the same address with the same token, whichever client started it.  An
open page reconnects by itself with the cookie it has.

A kept file that cannot be read, or holds settings no longer valid, is
said in the log and left alone: the page stays off, and nothing is lost.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from ..shared.paths import state_dir
from ..shared.safe_files import Unreadable, read_regular

KEPT_MAX = 8 * 1024  # bytes: a few settings

log = logging.getLogger(__name__)


def kept_path(name: str) -> Path:
    """Where the page of the service ``name`` (its place's name) is kept."""
    return state_dir() / "web" / f"{name}.json"


def keep(path: Path, settings: dict) -> None:
    """Keep ``settings`` (host, port, token, read_only, tls: what ``POST /v1/web`` takes) at ``path``, whole, 0600."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".new")
    with open(temporary, "w", encoding="utf-8", opener=lambda p, f: os.open(p, f | os.O_TRUNC, 0o600)) as out:
        json.dump(settings, out)
    os.replace(temporary, path)


def kept(path: Path) -> dict | None:
    """The settings kept at ``path``, or None (none kept, or not readable: said in the log)."""
    try:
        data = json.loads(read_regular(path, KEPT_MAX))
    except FileNotFoundError:
        return None
    except (OSError, Unreadable, ValueError) as exc:
        log.warning("the web page's kept settings (%s) cannot be read: %s; the page stays off", path, exc)
        return None
    if not isinstance(data, dict):
        log.warning("the web page's kept settings (%s) are not an object; the page stays off", path)
        return None
    return data


def forget(path: Path) -> None:
    """The page was turned off: nothing to bring back."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
