"""Snoozes are the service's: one set for every front end, ended by the reports the service itself sees.

Before, the terminal UI kept them, so a second front end (the phone page)
would have had its own, and a wait put off in one would ring in the other.
The service here is the real one with its detectors off; the readings are
real recorded Claude screens read by the real reader (as the demo table).
"""

from __future__ import annotations

from headspace_tui.detect.claude import classify_capture
from headspace_tui.model import AgentState
from headspace_tui.notifications.snooze import UNTIL_IT_CHANGES
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.config import Config
from headspace_tui.tmux.server import PaneRecord, TmuxServer
from tests.harness.record import DEFAULT_OUT

NOW = 1_800_000_000.0


def service() -> Service:
    return Service.build(TmuxServer(socket_name="headspace-unit-unused"), live=False, clock=lambda: NOW, journal=Journal(None), hooks=False, config=Config())


def show(service: Service, screen: str) -> None:
    """Pane %1 now shows the recorded Claude ``screen`` (120x40)."""
    ansi = (DEFAULT_OUT / "alt" / "120x40" / screen).with_suffix(".ansi").read_text()
    record = PaneRecord("%1", "$1", "api", 0, 0, "api:0.0", 1001, "claude", "/src/api", 120, 40, True, False, "", False, None)
    service.replay(record, ansi, classify_capture(ansi, command="claude"), NOW - 5, family="claude")


def agent(service: Service, seen: list):
    return [e.agent for e in seen if hasattr(e, "agent")][-1]


def test_a_snooze_lasts_while_its_wait_does_and_every_front_end_sees_the_same():
    hs = service()
    one, two = [], []  # two front ends, subscribed to the one service
    hs.subscribe(one.append)
    hs.subscribe(two.append)
    show(hs, "permission_bash")
    waiting = agent(hs, one)
    assert waiting.state is AgentState.PERMISSION
    assert hs.snooze(waiting, UNTIL_IT_CHANGES) is not None
    assert hs.snooze_of(agent(hs, two)) is not None and hs.snoozed() == 1  # the other front end sees it too
    show(hs, "permission_bash")  # the same wait, read again: still put off
    assert hs.snooze_of(agent(hs, one)) is not None
    show(hs, "working_streaming")  # the wait ended: so did its snooze, for everyone
    assert hs.snooze_of(agent(hs, two)) is None and hs.snoozed() == 0


def test_a_timed_snooze_ends_when_its_time_is_up_and_can_be_taken_back():
    hs = service()
    seen: list = []
    hs.subscribe(seen.append)
    show(hs, "permission_bash")
    waiting = agent(hs, seen)
    hs.snooze(waiting, NOW + 300)
    assert hs.snoozes_ended(NOW + 299) == []
    assert hs.snoozes_ended(NOW + 300) == [waiting.key or waiting.pane_id]
    assert hs.snooze_of(waiting) is None
    hs.snooze(waiting, NOW + 300)
    assert hs.unsnooze(waiting) and not hs.unsnooze(waiting)
    assert hs.snooze(agent(hs, seen), NOW + 60) is not None
    show(hs, "working_streaming")
    assert hs.snooze(agent(hs, seen), NOW + 60) is None  # a working agent waits for nothing
