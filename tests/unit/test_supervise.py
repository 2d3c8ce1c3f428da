"""Supervised loops: an error is logged and told once, the loop comes back after a back-off."""

from __future__ import annotations

import asyncio
import logging

import pytest

from headspace_tui.remote.host import RemoteHost
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.watching.monitor import REMOTE_RESTART_LIMIT, REMOTE_RETRY_PACE, Monitor, remote_retry
from headspace_tui.service.watching.supervise import Backoff, Supervisor
from headspace_tui.shared.config import HostSpec
from headspace_tui.tmux.server import TmuxServer


def test_backoff_doubles_after_quick_failures_and_resets_after_a_good_run():
    backoff = Backoff(first=0.5, limit=4.0, healthy_after=60.0)
    assert [backoff.after_failure(1.0) for _ in range(6)] == [0.0, 0.5, 1.0, 2.0, 4.0, 4.0]
    assert backoff.after_failure(120.0) == 0.0  # it ran well for two minutes: start again at once
    assert backoff.after_failure(1.0) == 0.5


def test_a_remote_hosts_reconnects_back_off_to_the_cap_and_stay_there_however_long_it_is_away():
    """Attempts back off, but never past REMOTE_RETRY_PACE (2 s): an hour away is retried as often as ten seconds away.

    This is what lets the live test's 20 s silence stand for a night's sleep:
    past the cap (reached after 3.5 s) nothing changes with the length of the silence.
    """
    retry = remote_retry()
    delays = [retry.after_failure(0.0) for _ in range(1800)]  # an hour of attempts every 2 s
    assert delays[:4] == [0.0, 0.5, 1.0, 2.0]
    assert max(delays) == REMOTE_RETRY_PACE <= 2.0
    assert set(delays[3:]) == {REMOTE_RETRY_PACE}


def test_a_loop_that_raises_is_restarted_with_backoff_and_said_once_per_failure(caplog):
    slept: list[float] = []
    told: list[str] = []
    runs = 0

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    async def flaky() -> None:
        nonlocal runs
        runs += 1
        if runs <= 3:
            raise ValueError(f"bad reading {runs}")
        # the fourth run ends normally: the supervisor is done with it

    async def scenario() -> None:
        supervisor = Supervisor(lambda name, message: told.append(message), clock=lambda: 0.0, sleep=fake_sleep)
        await supervisor.start("the detector of tmux session $1", flaky)
        assert supervisor.failures == {"the detector of tmux session $1": 3}

    with caplog.at_level(logging.ERROR, logger="headspace_tui.service.watching.supervise"):
        asyncio.run(scenario())
    assert runs == 4
    assert slept == [0.0, 0.5, 1.0]
    assert told == [f"the detector of tmux session $1 stopped on an error (ValueError: bad reading {i}); restarted" for i in (1, 2, 3)]
    assert all("\n" not in line for line in told)
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 3 and "bad reading 1" in str(tracebacks[0].exc_info[1])


def test_cancelling_ends_a_supervised_loop_and_runs_its_cleanup():
    cleaned = []

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            cleaned.append(True)

    async def scenario() -> None:
        supervisor = Supervisor()
        task = supervisor.start("a watcher", forever)
        await asyncio.sleep(0)
        assert supervisor.running("a watcher")
        await supervisor.stop()
        assert task.cancelled() and not supervisor.running("a watcher")

    asyncio.run(scenario())
    assert cleaned == [True]


def test_starting_a_running_name_again_keeps_the_one_running():
    async def scenario() -> None:
        supervisor = Supervisor()
        first = supervisor.start("x", lambda: asyncio.sleep(3600))
        assert supervisor.start("x", lambda: asyncio.sleep(3600)) is first
        await supervisor.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit])
def test_a_request_to_exit_is_not_swallowed(error):
    async def leave() -> None:
        raise error()

    async def scenario() -> None:
        await Supervisor().start("x", leave)

    with pytest.raises(error):
        asyncio.run(scenario())


def test_a_loop_that_loses_its_cancellation_is_cancelled_again_and_never_waited_for_forever():
    """Python 3.11's wait_for can swallow a cancel; stopping such a loop must still end (issue 22)."""
    swallowed = []

    async def stubborn() -> None:
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                if not swallowed:  # the first cancel is lost, as wait_for loses one
                    swallowed.append(True)
                    continue
                raise

    async def scenario() -> None:
        supervisor = Supervisor()
        supervisor.start("stubborn", stubborn)
        await asyncio.sleep(0.01)
        await asyncio.wait_for(supervisor.cancel("stubborn"), 5.0)

    asyncio.run(scenario())
    assert swallowed


def test_a_remote_hosts_loops_come_back_within_ten_seconds_after_any_error():
    """A remote link always comes back within 10 s (issue 22): discovery retries "can't reach" itself,
    and any other error in a remote host's loop restarts it no later than that either."""

    def delays(monitor: Monitor) -> list[float]:
        backoff = monitor.supervisor.backoff()
        return [backoff.after_failure(0.0) for _ in range(12)]

    remote = RemoteHost(HostSpec(name="box", destination="box"))  # nothing is started: no ssh here
    far = Monitor(remote.server, journal=Journal(None), host=remote)
    near = Monitor(TmuxServer(socket_name="headspace-unit-unused"), journal=Journal(None))
    assert max(delays(far)) == REMOTE_RESTART_LIMIT <= 10.0
    assert max(delays(near)) == 30.0  # a local loop that keeps failing is let go more slowly
