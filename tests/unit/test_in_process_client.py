"""The service in the front end's own process, behind the same client (resident/transport.py ``InProcess``): copies, and one set of snoozes."""

from __future__ import annotations

from types import SimpleNamespace

from headspace_tui.notifications.snooze import key_of
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
