"""Where the page listens, and whether that is safe: loopback by default, anything else only over TLS or by a flag that names the risk."""

from __future__ import annotations

import socket
from pathlib import Path

from ..shared.config import WebConfig
from .guard import loopback, token_from_file
from .server import WebOptions

DEFAULT_PORT = 8765


class ListenError(ValueError):
    """A listen address, TLS pair or token file that cannot be used, in one line."""


def parse_listen(text: str) -> tuple[str, int]:
    """``ADDR:PORT``, ``[v6]:PORT``, ``ADDR`` or ``:PORT`` as (host, port)."""
    text = text.strip()
    host, port = text, str(DEFAULT_PORT)
    if text.startswith("["):
        inside, _, rest = text[1:].partition("]")
        host, port = inside, rest.removeprefix(":") or port
    elif text.count(":") == 1:
        host, port = text.split(":")
    host = host or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ListenError(f"--listen {text!r}: the port must be a number from 1 to 65535")
    return host, int(port)


def options(listen: str, *, token_file: str = "", read_only: bool = False, tls: tuple[str, str] | None = None, insecure_network: bool = False) -> WebOptions:
    """The page's options from what the user gave (flags or ``[web]``), checked; ListenError says what is wrong."""
    host, port = parse_listen(listen)
    if not loopback(host) and tls is None and not insecure_network:
        raise ListenError(
            f"{host} is reachable from other machines: serve it over TLS (--tls CERT KEY), or say --insecure-network to send "
            "the page and its token in plain HTTP (anyone on the way can read them and answer your agents)"
        )
    if tls is not None:
        for path in tls:
            if not Path(path).expanduser().is_file():
                raise ListenError(f"--tls: {path} is not a file")
        tls = (str(Path(tls[0]).expanduser()), str(Path(tls[1]).expanduser()))
    token = ""
    if token_file:
        try:
            token = token_from_file(Path(token_file).expanduser())
        except ValueError as exc:
            raise ListenError(str(exc)) from None
    return WebOptions(host, port, token, read_only, tls)


def from_config(web: WebConfig) -> WebOptions:
    tls = (web.tls_cert, web.tls_key) if web.tls_cert else None
    return options(web.listen, token_file=web.token_file, read_only=web.read_only, tls=tls, insecure_network=web.insecure_network)


def shown_host(host: str) -> str:
    """The host to put in the printed address: a wildcard listen is reached by this machine's name."""
    return socket.gethostname() if host in ("0.0.0.0", "::", "") else host
