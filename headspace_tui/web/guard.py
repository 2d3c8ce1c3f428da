"""Who may use the web page, and how often: the token, its cookie, the Origin check, the rate limit.

The page answers agents, so every request is an attack surface.  The rules:

* **a token on every request**: 128 random bits, given once in the URL that
  ``headspace web`` prints (``/?token=…``), then kept in a cookie
  (``HttpOnly``, ``SameSite=Strict``, ``Secure`` over TLS) and dropped from the
  URL by a redirect; without it, 401 and no agent data;
* **nothing changes on a GET**: answers and focus are POSTs, and a POST must
  carry an ``Origin`` naming this very page (a page elsewhere cannot post
  here with the user's cookie: SameSite stops the cookie, this stops the
  rest);
* **a rate limit** per client address: a few wrong tokens a minute (given
  in the address: a stale cookie is not a guess), a steady flow of requests.

Pure: no aiohttp here, so the rules are tested on their own.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import time
from pathlib import Path
from urllib.parse import urlsplit

from ..shared.safe_files import Unreadable, read_regular

COOKIE = "headspace_token"
TOKEN_BYTES = 16  # 128 bits
TOKEN_FILE_MAX = 1024  # bytes a token file may hold
WRONG_TOKENS = 10  # wrong tokens per client address per minute before it is turned away for the rest of the minute
REQUESTS_PER_SECOND = 20.0  # a client's steady rate (a page makes a few a second at most)
BURST = 60.0  # requests a client may make at once


def new_token() -> str:
    """A fresh token: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_from_file(path: Path) -> str:
    """The token kept in ``path`` (``--token-file``), made and written (0600) when the file does not exist; ValueError when it cannot be used."""
    try:
        text = read_regular(path, TOKEN_FILE_MAX).decode("ascii").strip()
    except FileNotFoundError:
        token = new_token()
        try:
            with open(path, "x", encoding="ascii", opener=lambda p, f: os.open(p, f, 0o600)) as out:
                out.write(token + "\n")
        except OSError as exc:
            raise ValueError(f"cannot write the token file {path}: {exc.strerror or exc}") from None
        return token
    except (OSError, Unreadable, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the token file {path}: {exc}") from None
    if len(text) < 16 or not all(c.isalnum() or c in "-_" for c in text):
        raise ValueError(f"the token file {path} does not hold a token (16 or more letters, digits, - or _)")
    return text


def given_token(text: str | None) -> str | None:
    """The token in what was given as ``?token=``: the token itself, or the whole printed address pasted into the sign-in form."""
    if text is None or "token=" not in text:
        return text
    return text.split("token=", 1)[1].split("&", 1)[0].split("#", 1)[0]


def token_matches(given: str | None, token: str) -> bool:
    """Whether ``given`` is the token, in time that does not depend on how much of it is right."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def same_origin(origin: str | None, host: str | None, scheme: str) -> bool:
    """Whether a POST's ``Origin`` names the page it was sent to (``scheme://host`` as the request's Host says)."""
    if not origin or not host or origin == "null":
        return False
    parts = urlsplit(origin)
    return parts.scheme == scheme and parts.netloc.lower() == host.lower() and not parts.path.strip("/")


def seen_as(scheme: str, host: str | None, peer: str | None, headers: dict[str, str]) -> tuple[str, str | None]:
    """The scheme and host the browser used for a request: the page's own, or, from a proxy on this machine, what it forwards.

    ``tailscale serve`` and a local reverse proxy end TLS and pass the request
    on over loopback, saying in ``X-Forwarded-Proto`` and ``X-Forwarded-Host``
    what the browser asked for: a POST's ``Origin`` names that, and the page's
    cookie is ``Secure`` there.  Only a peer on this machine is believed (a
    browser elsewhere cannot reach a loopback page but through such a proxy;
    a page elsewhere cannot add these headers to a request without a CORS
    preflight, which the page never answers).
    """
    if peer is None or not loopback(peer):
        return scheme, host
    proto = headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    forwarded = headers.get("X-Forwarded-Host", "").split(",")[0].strip()
    return (proto if proto in ("http", "https") else scheme), (forwarded or host)


def forwarded_for(peer: str | None, headers: dict[str, str]) -> str:
    """The client a proxy on this machine forwards for (the last hop of ``X-Forwarded-For``: the one it saw), or "".

    Only from a loopback peer (as ``seen_as``); the hops before the last are
    the client's own word and are not read.
    """
    if peer is None or not loopback(peer):
        return ""
    hops = [hop.strip() for hop in headers.get("X-Forwarded-For", "").split(",") if hop.strip()]
    return f"via proxy {hops[-1][:64]}" if hops else ""


def loopback(host: str) -> bool:
    """Whether ``host`` (a listen address, or a peer's: ``::ffff:127.0.0.1`` too) is reachable only from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.removeprefix("::ffff:")).is_loopback
    except ValueError:
        return False


class RateLimit:
    """Per client address: a token bucket for requests, and a count of wrong tokens per minute."""

    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # address -> (requests left, when counted)
        self._wrong: dict[str, tuple[int, float]] = {}  # address -> (wrong tokens, minute began)

    def allow(self, address: str) -> bool:
        """One request from ``address``: False when it is over its rate."""
        now = self.clock()
        if len(self._buckets) > 10_000:
            self._buckets.clear()  # many addresses: forget them all rather than grow
        left, then = self._buckets.get(address, (BURST, now))
        left = min(BURST, left + (now - then) * REQUESTS_PER_SECOND)
        if left < 1.0:
            self._buckets[address] = (left, now)
            return False
        self._buckets[address] = (left - 1.0, now)
        return True

    def wrong_token(self, address: str) -> None:
        now = self.clock()
        count, began = self._wrong.get(address, (0, now))
        if now - began > 60.0:
            count, began = 0, now
        if len(self._wrong) > 10_000:
            self._wrong.clear()
        self._wrong[address] = (count + 1, began)

    def turned_away(self, address: str) -> bool:
        """Too many wrong tokens from ``address`` this minute: every request is refused until it ends."""
        count, began = self._wrong.get(address, (0, 0.0))
        return count >= WRONG_TOKENS and self.clock() - began <= 60.0
