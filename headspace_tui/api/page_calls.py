"""The phone page's calls, declared like the facade's (call.py): every route the page's server (web/server.py) serves.

The page's script (web/assets/app.js) asks these and nothing else;
tests/unit/test_wire_calls.py reads its requests and finds each here, and
finds every route the page's server serves here too.  Each field is
checked by its kind before a handler sees it (a 400 naming the field when
it is wrong); what a field's value means together with the others (an
answer's intent and option, a snooze's minutes or wake) is read by the
handler, with the command line's route where both take the same body
(``answer_request``).  ``writes``: the call changes something (an answer,
a snooze, a rule), so a read-only page refuses it (``headspace web
--read-only``).  Every call needs the page's token, and every POST the
page's Origin (web/guard.py).
"""

from __future__ import annotations

import re
from typing import Any

from .call import FLAG, HOST_NAME, MAYBE_TEXT, PANE, PANE_OR_NONE, RULE_ID, RULES_ACTION, SCOPE, TEXT, TIME, Asked, Call, Kind, optional

ASSETS = ("app.js", "app.css", "icon.svg")  # the page's own files, shipped in the wheel (web/assets/)
MAX_SNOOZE = 24 * 60  # minutes a wait may be put off from the page
_CLIENT = re.compile(r"[A-Za-z0-9_-]{8,64}")


def _client(value: Any) -> str:
    if not isinstance(value, str) or not _CLIENT.fullmatch(value):
        raise Asked("8 to 64 letters, digits, - or _")
    return value


def _asset(value: Any) -> str:
    if value not in ASSETS:
        raise Asked(f"one of {', '.join(ASSETS)}")
    return str(value)


def _minutes(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_SNOOZE:
        raise Asked(f"0 to {MAX_SNOOZE} (0: till it changes)")
    return value


PAGE_CLIENT = Kind("page", _client)  # which open page asks (its stream and its focus are its own)
ASSET = Kind("asset", _asset)
MINUTES = optional(Kind("minutes", _minutes))
WAKE = Kind("wake", lambda value: FLAG.take(value) is True)  # absent: not a wake
SCOPE_OR_TURN = Kind("scope", lambda value: "turn" if value is None else SCOPE.take(value))  # what a diff is against (the turn's baseline when not said)

PAGE: dict[str, Call] = {
    call.name: call
    for call in (
        Call("page", "GET", "/"),  # the page itself; ``/?token=…`` is the guard's (it sets the cookie and redirects here)
        Call("asset", "GET", "/assets/{name}", (("name", ASSET),)),
        Call("manifest", "GET", "/manifest.webmanifest"),  # what makes the page an app on the home screen
        Call("worker", "GET", "/sw.js"),  # the service worker: the page's own files offline, and the pushes (at the root: its scope is the page)
        Call("agents", "GET", "/api/agents"),
        Call("screen", "GET", "/api/screen", (("pane", PANE),)),
        Call("changes", "GET", "/api/changes", (("pane", PANE), ("scope", SCOPE_OR_TURN))),
        Call("events", "STREAM", "/api/events", (("client", PAGE_CLIENT),)),
        Call("focus", "POST", "/api/focus", (("client", PAGE_CLIENT), ("pane", PANE_OR_NONE))),
        Call(
            "answer",
            "POST",
            "/api/answer",
            (("pane", PANE), ("intent", TEXT), ("option", MAYBE_TEXT), ("text", MAYBE_TEXT), ("expect", MAYBE_TEXT)),
            writes=True,
        ),
        Call("snooze", "POST", "/api/snooze", (("pane", PANE), ("minutes", MINUTES), ("wake", WAKE)), writes=True),
        # Web Push (web/push.py): this browser's state and the last results; a subscription kept or dropped.
        # Not ``writes``: a read-only page's phone may be notified too (its pushes offer no answer).
        Call("push", "GET", "/api/push", (("endpoint", MAYBE_TEXT),)),
        Call("subscribe", "POST", "/api/push/subscribe", (("endpoint", TEXT), ("p256dh", TEXT), ("auth", TEXT), ("browser", MAYBE_TEXT))),
        Call("unsubscribe", "POST", "/api/push/unsubscribe", (("endpoint", TEXT),)),
        Call("ruled", "GET", "/api/ruled"),
        Call("away", "GET", "/api/away", (("since", TIME),)),  # what each agent did since the page was last looked at
        Call("rules", "POST", "/api/rules", (("action", RULES_ACTION), ("rule", RULE_ID), ("host", HOST_NAME)), writes=True),
    )
}
