"""What the service takes from a client, and what a client takes from the service: checked, never trusted.

* ``POST /v1/answer``'s body: a pane id, an intent the policy knows, an
  option of digits, a bounded text, a string fingerprint; anything else is
  one line back and nothing sent.
* a service's version: only an older one is stopped by a client.
* a service's rows: each field of its kind, else the client reads for itself.
"""

from __future__ import annotations

import pytest

from headspace_tui.api.call import Asked
from headspace_tui.api.facade import IntentKind
from headspace_tui.api.own_calls import OWN
from headspace_tui.api.row_keys import well_formed
from headspace_tui.api.rows import agent_row
from headspace_tui.model import Agent, AgentState, Observation
from headspace_tui.resident.client import older
from headspace_tui.resident.facade_routes import send_asked
from headspace_tui.service.answer_wait import MAX_TEXT


@pytest.mark.parametrize(
    ("body", "wrong"),
    [
        ([], "a JSON object"),
        ({"pane_id": "3", "intent": "approve"}, "pane_id"),
        ({"pane_id": "%3; rm -rf /", "intent": "approve"}, "pane_id"),
        ({"pane_id": "%3@", "intent": "approve"}, "pane_id"),
        ({"pane_id": "%3@box; rm -rf /", "intent": "approve"}, "pane_id"),
        ({"pane_id": "%3", "intent": "approve all"}, "intent"),
        ({"pane_id": "%3", "intent": "option", "option": "1;2"}, "option"),
        ({"pane_id": "%3", "intent": "option", "option": 2}, "option"),
        ({"pane_id": "%3", "intent": "text", "text": "x" * (MAX_TEXT + 1)}, "text"),
        ({"pane_id": "%3", "intent": "text", "text": ["a"]}, "text"),
        ({"pane_id": "%3", "intent": "approve", "expect": 42}, "expect"),
    ],
)
def test_a_bad_answer_request_is_one_line_and_nothing_else(body, wrong):
    with pytest.raises(Asked) as said:
        _answer_request(body)
    assert str(said.value).startswith(wrong), said.value


def _answer_request(body: object) -> tuple:
    """``send``'s body as the route reads it: each field by its declared kind, then as one answer (Asked, one line, when it is not)."""
    if not isinstance(body, dict):
        raise Asked("a JSON object")  # the route's own check, before the declaration's (facade_routes.py ``_route``)
    return send_asked(**OWN["answer_and_report"].take(body))


def test_a_good_answer_request_is_the_policys_intent():
    pane, intent, expect = _answer_request({"pane_id": "%12", "intent": "option", "option": "1,3", "expect": "abc"})  # type: ignore[misc]
    assert (pane, intent.kind, intent.option, expect) == ("%12", IntentKind.OPTION, "1,3", "abc")
    pane, intent, _ = _answer_request({"pane_id": "%3@box", "intent": "approve"})  # type: ignore[misc]  # a watched host's pane (send --host)
    assert (pane, intent.kind) == ("%3@box", IntentKind.APPROVE)
    pane, intent, expect = _answer_request({"pane_id": "%1", "intent": "nudge", "text": "continue"})  # type: ignore[misc]
    assert (intent.kind, intent.text, expect) == (IntentKind.NUDGE, "continue", None)


@pytest.mark.parametrize(
    ("theirs", "mine", "stopped"),
    [
        ("0.0.1-old", "0.1.0", True),
        ("0.1", "0.1.0", True),
        ("0.1.0", "0.1.0", False),
        ("0.2.0", "0.1.0", False),
        ("999.0.0", "0.1.0", False),
        (None, "0.1.0", False),
        ("", "0.1.0", False),
        ("dev", "0.1.0", False),
        (7, "0.1.0", False),
    ],  # fmt: skip
)
def test_only_an_older_service_is_stopped_by_a_client(theirs, mine, stopped):
    assert older(theirs, mine) is stopped


def test_a_row_from_elsewhere_is_checked_field_by_field():
    row = agent_row(Agent(pane_id="%1", target="s:0.0", session="s", observation=Observation(AgentState.IDLE)), 0.0)
    assert well_formed(row)
    for key, bad in (("state", None), ("in_state_for", "3 s"), ("options", "1. Yes"), ("retrying", 1), ("since", True), ("line", b"x")):
        assert not well_formed({**row, key: bad}), key
    assert not well_formed({k: v for k, v in row.items() if k != "target"})
    assert not well_formed([row])
