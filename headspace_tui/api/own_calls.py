"""The service's own calls, beside the facade's: what the command line asks and the server answers itself.

``status`` reads rows (served by the facade's routes too, so a look in the
CLI's own process answers it the same way), ``send`` answers and waits for the final report,
``rules pause|resume|revoke`` changes what the rules may answer (through
the service, as the page does), ``new --host`` starts an agent on a host
the service watches (through its link), ``serve --stop`` ends the service, ``web``
turns the page on or off; every client asks its hello first.  Declared like the facade's (call.py), so the
server's routes (server.py) and the command line's requests (client.py)
are both read from here and tests/unit/test_wire_calls.py finds every route
the service serves in one of the two tables.  The bodies of an answer and of
the page's settings are read by the one reading each has, shared with the
phone page (``answer_request``, ``web_options``); the kinds here check what
JSON type each field is.
"""

from __future__ import annotations

from typing import Any

from .call import ASK, FLAG, FOLDER, HOST_NAME, LIFECYCLE, MAYBE_TEXT, RULE_ID, RULES_ACTION, SESSION_NAME, SETTLE, SETTLE_FOR, TEXT, WORDS, Asked, Call, Kind, optional


def _port(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 65535:
        raise Asked("a port number")
    return value


def _pair(value: Any) -> list[str]:
    if not isinstance(value, list) or len(value) != 2 or not all(isinstance(part, str) for part in value):
        raise Asked("a certificate and a key file")
    return value


PORT = optional(Kind("port", _port))
TLS = optional(Kind("tls", _pair))

OWN: dict[str, Call] = {
    call.name: call
    for call in (
        Call("hello", "GET", "/v1/hello"),
        Call("rows", "GET", "/v1/agents", (("settle", SETTLE_FOR),), timeout=SETTLE),
        Call(
            "answer_and_report",
            "POST",
            "/v1/answer",
            (("pane_id", TEXT), ("intent", TEXT), ("option", MAYBE_TEXT), ("text", MAYBE_TEXT), ("expect", MAYBE_TEXT)),
        ),
        Call("stop", "POST", "/v1/stop", timeout=ASK),
        Call("rules", "POST", "/v1/rules", (("action", RULES_ACTION), ("rule", RULE_ID), ("host", HOST_NAME)), writes=True),
        Call("start_on_host", "POST", "/v1/agents/start-on-host", (("host", HOST_NAME), ("folder", FOLDER), ("args", WORDS), ("session", SESSION_NAME)), timeout=LIFECYCLE, writes=True),
        Call(
            "web",
            "POST",
            "/v1/web",
            (("off", FLAG), ("keep", FLAG), ("host", MAYBE_TEXT), ("port", PORT), ("token", MAYBE_TEXT), ("read_only", FLAG), ("tls", TLS)),
        ),
    )
}
