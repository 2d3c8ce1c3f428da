"""The service ``headspace status`` builds for one look (``Service.build(looking=True)``) can do nothing but look.

The live test (tests/e2e/test_status_look.py) shows a look attaches no
control client and leaves a dialog a rule allows untouched; a look lasts
about a second, less than a rule by keys takes to act, so this holds the
rest where it is decided: the same service with every part that acts for
the user left out.  A real ``Service`` (built, not run: nothing attaches).
"""

from __future__ import annotations

import asyncio
import math

import pytest

from headspace_tui.resident.transport import InProcess, errand
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.config import Config
from headspace_tui.tmux.server import TmuxServer


def build(looking: bool) -> Service:
    config = Config(go_on_after_limit=True)  # the nudge would be on: only the look leaves it out
    return Service.build(TmuxServer(socket_name="headspace-unit-never-started"), config=config, journal=Journal(None), looking=looking, names=not looking)


def test_a_look_holds_no_hook_answers_nothing_nudges_nothing_attaches_nothing_and_names_no_appearance():
    looked, watching = build(True), build(False)
    assert watching._rules is not None and watching._resume is not None  # the same build, watching: they are there
    assert looked._rules is None and looked._resume is None
    for monitor in looked._fleet.monitors.values():
        assert not monitor.intake.hooks and not monitor.intake.answers
        assert math.isinf(monitor.sessions.attach_pace().next_at()) and not monitor.store.names_appearances
        assert monitor.changes._on_event not in monitor.store._subscribers  # no baseline taken: its end waits on no git
    for monitor in watching._fleet.monitors.values():
        assert monitor.intake.hooks and monitor.intake.answers and monitor.sessions.attach_pace().next_at() == 0.0 and monitor.store.names_appearances
        assert monitor.changes._on_event in monitor.store._subscribers


def test_a_looks_transport_rings_nothing_and_its_rows_wait_for_the_first_look():
    looked = InProcess(build(True), looking=True)
    assert looked.ringer is None and looked.routes.settle is not None
    front_end = InProcess(build(False))
    assert front_end.ringer is not None and front_end.routes.settle is None  # a front end's first frame is drawn at once


def test_an_errand_stops_its_service_however_the_errand_ends():
    """``status`` and ``send --host`` run a service for one errand: an errand that fails leaves no service running (its monitors, its tasks)."""
    service = build(True)
    stopped: list[bool] = []
    stop = service.stop

    async def stopping() -> None:
        stopped.append(True)
        await stop()

    service.stop = stopping  # type: ignore[method-assign]

    async def failing() -> None:
        async with errand(service) as transport:
            assert transport.ringer is None and transport.routes.settle is not None  # a look's transport
            raise RuntimeError("the errand failed")

    with pytest.raises(RuntimeError, match="the errand failed"):
        asyncio.run(asyncio.wait_for(failing(), 30))
    assert stopped == [True]
