"""The service in the front end's own process, behind the same client (resident/transport.py ``InProcess``): copies, and one set of snoozes."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

import pytest

from headspace_tui.api.errors import ServiceError
from headspace_tui.api.facade import Jump
from headspace_tui.notifications.snooze import UNTIL_IT_CHANGES, key_of
from headspace_tui.resident.facade_client import ServiceClient
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.tmux.server import TmuxServer
from tests.ui.apps import NOW, show_recorded


def _client(clock=lambda: NOW) -> tuple[ServiceClient, Service]:
    service = Service.build(TmuxServer(socket_name="headspace-in-process-unused"), live=False, clock=clock, journal=Journal(None), hooks=False)
    return ServiceClient.in_process(service), service


def test_the_front_end_holds_copies_that_the_stream_keeps_current():
    client, service = _client()
    show_recorded(SimpleNamespace(service=client, clock=lambda: NOW), 1, "api", "permission_bash", 30)  # type: ignore[arg-type]
    [agent] = client.agents()
    own = service.agent("%1")
    assert own is not None and agent is not own and agent.key == own.key
    assert agent.observation is not own.observation and agent.observation == own.observation and agent.observation.id == own.observation.id
    show_recorded(SimpleNamespace(service=client, clock=lambda: NOW), 1, "api", "idle_finished", 5)  # type: ignore[arg-type]
    [now] = client.agents()
    assert now.state == service.agent("%1").state and now.observation.id == service.agent("%1").observation.id != agent.observation.id  # type: ignore[union-attr]


def test_a_snooze_the_service_ended_by_its_time_is_said_ended_by_the_client_too():
    """The resident's ringer, or another front end, ends a snooze first: this client still says it ran out (its row wakes, its wait rings again)."""
    now = [NOW]
    client, service = _client(lambda: now[0])
    show_recorded(SimpleNamespace(service=client, clock=lambda: NOW), 1, "api", "permission_bash", 30)  # type: ignore[arg-type]
    [agent] = client.agents()
    assert client.snooze(agent, NOW + 60) is not None and client.snooze_of(agent) is not None
    assert service.snooze_of(service.agent("%1")) is not None  # type: ignore[arg-type]  # one set: the service's
    assert client.snoozes_ended(NOW + 30) == []
    now[0] = NOW + 61
    assert service.snoozes_ended(now[0]) == [key_of(agent)]  # as the ringer does
    show_recorded(SimpleNamespace(service=client, clock=lambda: NOW + 61), 2, "web", "idle_finished", 5)  # any event carries the snoozes as they are
    assert client.snooze_of(agent) is None
    assert client.snoozes_ended(NOW + 61) == [key_of(agent)]
    assert client.snoozes_ended(NOW + 62) == []


def test_a_wait_snoozed_again_before_the_clients_tick_stays_snoozed():
    """The ringer ends a snooze, the user snoozes the wait again at once ("until it changes"): the client's next tick ends nothing.

    The client keeps the keys the service ended by their time until its tick
    says them ended; a key snoozed again meanwhile is not among them (the
    new snooze was dropped from the copy, and the row shown awake, before).
    """
    now = [NOW]
    client, service = _client(lambda: now[0])
    show_recorded(SimpleNamespace(service=client, clock=lambda: NOW), 1, "api", "permission_bash", 30)  # type: ignore[arg-type]
    [agent] = client.agents()
    assert client.snooze(agent, NOW + 60) is not None
    now[0] = NOW + 61
    assert service.snoozes_ended(now[0]) == [key_of(agent)]  # the ringer, first
    show_recorded(SimpleNamespace(service=client, clock=lambda: NOW + 61), 2, "web", "idle_finished", 5)  # the stream tells the client
    assert client.snooze_of(agent) is None
    again = client.snooze(agent, UNTIL_IT_CHANGES)
    assert again is not None and client.snooze_of(agent) == again
    assert client.snoozes_ended(NOW + 62) == []
    assert client.snooze_of(agent) == again and service.snooze_of(service.agent("%1")) == again  # type: ignore[arg-type]


def test_a_call_that_runs_tmux_is_served_beside_the_loop_and_never_on_it():
    """In process as over HTTP: a jump (tmux) is asked from a thread, served on the service's loop, and run in a thread beside it.

    The jump's tmux (a stub: what is tested is where the call runs, not
    what tmux does) holds until the loop has beaten three times: run on the
    loop, it could never see a beat and would give up.  Asked on the loop
    itself, the transport refuses it rather than hold every front end's keys.
    """
    client, service = _client()
    show_recorded(SimpleNamespace(service=client, clock=lambda: NOW), 1, "api", "permission_bash", 30)  # type: ignore[arg-type]
    [agent] = client.agents()
    beats, held = threading.Event(), []

    def slow_jump(agent, here=None) -> Jump:
        held.append((threading.get_ident(), beats.wait(10)))  # tmux answers once the loop has shown it still runs
        return Jump(notice="jumped")

    service.jump = slow_jump  # type: ignore[method-assign]

    async def scenario() -> tuple[Jump, int, str]:
        loop_thread = threading.get_ident()
        with pytest.raises(ServiceError) as refused:
            client.jump(agent)  # on the service's own loop: refused, never run
        assert held == []

        async def beat() -> None:
            for _ in range(3):
                await asyncio.sleep(0.01)
            beats.set()

        beating = asyncio.get_running_loop().create_task(beat())
        jump = await asyncio.to_thread(client.jump, agent)
        await beating
        return jump, loop_thread, str(refused.value)

    async def with_the_service_running() -> tuple[Jump, int, str]:
        client.transport._loop = asyncio.get_running_loop()  # type: ignore[attr-defined]  # as run() sets it
        return await scenario()

    jump, loop_thread, refusal = asyncio.run(with_the_service_running())
    assert "runs tmux" in refusal
    assert jump == Jump(notice="jumped")
    [(thread, answered)] = held
    assert answered, "the jump held the loop: it never beat while tmux was held"
    assert thread != loop_thread
