"""A rate limit that stopped an agent: its words read as the state ``limited``, with when it resets (usage/limits.py, the store)."""

from __future__ import annotations

import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from headspace_tui.api.row_keys import well_formed
from headspace_tui.api.rows import agent_row
from headspace_tui.app.widgets.agent_table import waiting_for
from headspace_tui.detect.claude.screen import classify_capture
from headspace_tui.model import AgentState, Observation
from headspace_tui.notifications.decide import REASONS, describe
from headspace_tui.service.records.store import AgentStore
from headspace_tui.usage.limits import limited, reset_at
from headspace_tui.usage.words import limit_words
from tests.harness.record import PANES
from tests.unit.test_auto_mode import _read

LONDON = ZoneInfo("Europe/London")
NOON = datetime(2026, 11, 29, 12, 0, tzinfo=LONDON).timestamp()

# Claude Code's own words (2.1.330's bundle; 2.0.x's where they differ), and errors that are not a limit.
LIMITS = [
    "API Error: Request rejected (429) · rate limit error",
    "API Error: Rate limit reached",
    "You've hit your 5-hour limit · resets 3pm (Europe/London)",
    "You've hit your weekly limit · resets Dec 2, 9am (Europe/London) · progress saved",
    "Session limit reached ∙ resets 3:30pm",
    "Usage limit reached",
]
NOT_LIMITS = ["API Error: Repeated 529 Overloaded errors. The API is at capacity", "API Error: 401 authentication error", ""]


GAVE_UP = PANES / "claude-2.1.330" / "inline" / "120x40" / "error_gave_up_500.ansi"
GAVE_UP_WORDS = "500 api error. This is a server-side issue, usually temporary — try again in a moment. If it"


def gave_up_with(words: str) -> Observation:
    """Claude 2.1.330's screen after it gave up on a request (a real recording), its error line saying ``words`` instead."""
    ansi = GAVE_UP.read_text()
    assert GAVE_UP_WORDS in ansi
    return classify_capture(ansi.replace(GAVE_UP_WORDS, words), command="claude")


@pytest.mark.parametrize("words", [w.removeprefix("API Error: ") for w in LIMITS])
def test_claudes_reader_reads_a_given_up_request_in_a_limits_words_as_limited(words):
    seen = gave_up_with(words)
    assert seen.state is AgentState.LIMITED and words in seen.error
    assert any(e.rule == "rate-limited" for e in seen.evidence)


def test_claudes_reader_reads_another_given_up_request_as_an_error():
    assert classify_capture(GAVE_UP.read_text(), command="claude").state is AgentState.ERROR
    assert gave_up_with("Repeated 529 Overloaded errors. The API is at capacity").state is AgentState.ERROR


@pytest.mark.parametrize("words", LIMITS)
def test_claudes_words_for_a_limit_are_a_limit(words):
    assert limited(words)


@pytest.mark.parametrize("words", NOT_LIMITS)
def test_other_errors_are_not(words):
    assert not limited(words)


def test_the_reset_is_the_next_such_time_in_the_zone_named():
    assert reset_at(LIMITS[2], NOON) == datetime(2026, 11, 29, 15, 0, tzinfo=LONDON).timestamp()
    late = datetime(2026, 11, 29, 16, 0, tzinfo=LONDON).timestamp()
    assert reset_at(LIMITS[2], late) == datetime(2026, 11, 30, 15, 0, tzinfo=LONDON).timestamp(), "3pm read at 4pm: tomorrow's"
    assert reset_at(LIMITS[3], NOON) == datetime(2026, 12, 2, 9, 0, tzinfo=LONDON).timestamp()
    here = datetime.fromtimestamp(NOON).astimezone()
    expected = here.replace(hour=15, minute=30, second=0, microsecond=0)
    assert reset_at(LIMITS[4], NOON) == (expected.timestamp() if expected.timestamp() > NOON else expected.timestamp() + 86400), "no zone: this machine's"
    assert reset_at(LIMITS[0], NOON) == 0.0 and reset_at("resets 3pm (Not/AZone)", NOON) > 0


def test_a_limit_read_keeps_its_reset_on_the_row_and_leaving_it_forgets_the_reset():
    store = AgentStore()
    agent = _read(store, Observation(AgentState.WORKING), 10.0)
    said = "You've hit your 5-hour limit · resets 3pm (Europe/London)"
    before = time.time()
    _read(store, gave_up_with(said), 11.0)
    assert agent.state is AgentState.LIMITED and agent.state.needs_you
    assert agent.limited_until == reset_at(said, before) or agent.limited_until == reset_at(said)
    row = agent_row(agent, 12.0)
    assert well_formed(row) and row["state"] == "limited" and row["limited_until"] == agent.limited_until
    assert limit_words(agent.limited_until) in row["line"]
    assert waiting_for(agent, "yellow").plain.startswith("limited until ")
    assert REASONS[AgentState.LIMITED] == "stopped by its rate limit" and describe(agent)[1].startswith("limited until ")
    _read(store, Observation(AgentState.WORKING), 13.0)  # sent again after the reset: it works
    assert agent.state is AgentState.WORKING and agent.limited_until == 0.0 and agent_row(agent, 14.0)["limited_until"] is None
    _read(store, gave_up_with("Repeated 529 Overloaded errors"), 15.0)
    assert agent.state is AgentState.ERROR


def test_an_api_keys_429_names_no_reset_and_says_so():
    store = AgentStore()
    agent = _read(store, gave_up_with(LIMITS[0].removeprefix("API Error: ")), 10.0)
    assert agent.state is AgentState.LIMITED and agent.limited_until == 0.0
    assert waiting_for(agent, "yellow").plain.startswith("limited (no reset time given)")
