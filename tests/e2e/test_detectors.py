"""A session's detector ends once it is no longer its session's, even when its cancellation was lost.

Under heavy load (the storm, load 9-16 on two cores) the supervisor logged
detectors that "ignored cancellation for 10 s; left behind": Python 3.11's
``asyncio.wait_for`` can lose a cancel (supervise.end), and such a detector
went on for good, attaching again and again to a session long gone.  Here
a real tmux session's detector attaches its control client; then it is
taken off its session as ``Sessions.end`` does, without a cancel reaching
it (the lost one), and it must end by itself at its next turn, detaching.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from headspace_tui.service.watching.sessions import Sessions
from headspace_tui.service.watching.supervise import Supervisor
from headspace_tui.tmux.server import TmuxServer

pytestmark = pytest.mark.e2e


def test_a_detector_whose_cancel_was_lost_ends_once_its_session_has_gone(private_tmux):
    private_tmux.run("new-session", "-d", "-s", "one", "sleep 600")
    session_id = private_tmux.run("display-message", "-p", "-t", "one", "#{session_id}").strip()

    async def read(pane_id, client):
        return None

    async def scenario() -> tuple[bool, str, str]:
        sessions = Sessions(TmuxServer(socket_name=private_tmux.name), Supervisor(), {}, read=read, request_discovery=lambda: None, state_of=lambda pane: None, clock=time.monotonic)
        sessions.start()
        await sessions.discovered(1, {session_id}, [])
        deadline = time.monotonic() + 15
        while session_id not in sessions.clients and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        attached = private_tmux.run("list-clients", "-F", "#{client_control_mode} #{session_id}")
        detector = sessions._loops.pop(session_id)  # no longer its session's; the cancel that should follow is lost
        sessions._wake_session(session_id)
        await asyncio.wait({detector}, timeout=5)
        ended = detector.done()
        left = private_tmux.run("list-clients")
        await sessions.supervisor.stop()
        await sessions.stop()
        return ended, attached, left

    ended, attached, left = asyncio.run(scenario())
    assert attached.strip() == f"1 {session_id}", f"the detector never attached its control client: {attached!r}"
    assert ended, "the detector went on although its session has no detector any more"
    assert left.strip() == "", f"its control client stayed attached: {left!r}"


def test_a_quiet_attached_session_sleeps_with_no_timer_of_its_own(private_tmux, monkeypatch):
    """At rest a session's detector waits for news only: a timer per session (it was 30 s) is a wake per session for nothing.

    Its waits are recorded as it makes them (``asyncio.wait_for``, passed
    through): once its control client is attached and its pane read, the
    detector's wait has no timeout, and a change said to it still wakes it.
    """
    private_tmux.run("new-session", "-d", "-s", "quiet", "sleep 600")
    session_id = private_tmux.run("display-message", "-p", "-t", "quiet", "#{session_id}").strip()
    waits: list[float | None] = []
    real_wait_for = asyncio.wait_for

    def recorded(awaitable, timeout=None):
        import sys

        if sys._getframe(1).f_code.co_name == "_session_loop":
            waits.append(timeout)
        return real_wait_for(awaitable, timeout)

    monkeypatch.setattr(asyncio, "wait_for", recorded)

    async def read(pane_id, client):
        return None

    async def scenario() -> list[float | None]:
        sessions = Sessions(TmuxServer(socket_name=private_tmux.name), Supervisor(), {}, read=read, request_discovery=lambda: None, state_of=lambda pane: None, clock=time.monotonic)
        sessions.start()
        try:
            await sessions.discovered(1, {session_id}, [])
            deadline = time.monotonic() + 15
            while session_id not in sessions.clients and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert session_id in sessions.clients, "the detector never attached its control client"
            settled = time.monotonic() + 5
            while (not waits or waits[-1] is not None) and time.monotonic() < settled:
                await asyncio.sleep(0.05)  # the rounds right after the attach may still have a look due
            at_rest = list(waits)
            sessions._wake_session(session_id)  # news: it wakes, looks, and sleeps again
            woken = time.monotonic() + 5
            while len(waits) == len(at_rest) and time.monotonic() < woken:
                await asyncio.sleep(0.05)
            assert len(waits) > len(at_rest), "news did not wake the detector"
            return at_rest
        finally:
            await sessions.supervisor.stop()
            await sessions.stop()

    at_rest = asyncio.run(scenario())
    assert at_rest and at_rest[-1] is None, f"the detector's waits at rest: {at_rest[-5:]}"
