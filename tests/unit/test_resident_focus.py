"""Each client of the resident service previews its own pane (resident/facade_routes.py ``FacadeStream``).

The service reads one pane at the preview's pace (the newest focus wins)
and tells the captures of every pane a client previews; a client whose
stream ends takes its preview with it, so a closed popup leaves no pane
read at the preview's pace.  A real ``Service`` (not run: nothing attaches).
"""

from __future__ import annotations

from headspace_tui.resident.facade_routes import FacadeStream
from headspace_tui.service.facade import Service
from headspace_tui.tmux.server import TmuxServer


def stream() -> tuple[FacadeStream, Service]:
    service = Service.build(TmuxServer(socket_name="headspace-unit-never-started"), live=False, hooks=False)
    return FacadeStream(service), service


def test_the_newest_focus_is_read_at_the_preview_pace_and_every_clients_pane_is_told():
    facade, service = stream()
    facade.focus("tui", "%1")
    facade.focus("popup", "%2")
    assert service.focused == "%2" and service._shown == frozenset({"%1", "%2"})
    facade.focus("tui", "%3")  # the TUI moves: now the newest
    assert service.focused == "%3" and service._shown == frozenset({"%2", "%3"})


def test_a_client_that_goes_takes_its_preview_with_it():
    facade, service = stream()
    facade.focus("tui", "%1")
    facade.focus("popup", "%2")
    facade.gone("popup")
    assert service.focused == "%1" and service._shown == frozenset({"%1"})
    facade.gone("tui")
    assert service.focused is None and service._shown == frozenset()


def test_a_client_that_goes_leaves_no_answer_of_its_own_to_route():
    facade, service = stream()
    facade.asked_by["%4"] = "popup"
    facade.asked_by["%5"] = "tui"
    facade.gone("popup")
    assert facade.asked_by == {"%5": "tui"}
