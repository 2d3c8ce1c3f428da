"""How a client's calls (calls.py) reach the service: over its Unix socket, or to the service in the same process.

``ServiceClient`` (facade_client.py) writes each call's fields as JSON and
hands them to its transport with the call; the transport hands back the
service's JSON reply.  Either way the fields and the reply are the same
JSON, so a front end in the service's own process holds copies, exactly as
a remote one does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import urlencode

from ..shared.resident_place import Place
from . import client
from .calls import Call


class Transport(Protocol):
    def ask(self, call: Call, sent: Mapping[str, Any], timeout: float) -> Any:
        """``call`` with its fields as JSON: the service's JSON reply; a ``client.ServiceError`` (``Lost``, ``Refused``) when none came or it refused."""
        ...


def url_path(call: Call, sent: Mapping[str, Any]) -> str:
    """The path ``call`` asks, with its query (a GET's fields; a POST's go in its body)."""
    query = list(call.query)
    if call.verb == "GET":
        query += [(name, value if isinstance(value, str) else format(value, "g") if isinstance(value, float) else str(value)) for name, value in sent.items() if value is not None]
    return call.path + (f"?{urlencode(query)}" if query else "")


class HttpTransport:
    """The resident service at ``place``, one HTTP request over its Unix socket per call."""

    def __init__(self, place: Place) -> None:
        self.place = place

    def ask(self, call: Call, sent: Mapping[str, Any], timeout: float) -> Any:
        body = dict(sent) if call.verb == "POST" else None
        return client.request(self.place, call.verb, url_path(call, sent), body=body, timeout=timeout)
