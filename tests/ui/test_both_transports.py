"""The pilot tests run over both transports: an app built for a test is a client of its service in process, and over HTTP to a real server.

tests/conftest.py gives every test that builds an app with tests/ui/apps.py
an ``app_transport`` parameter: both transports in the fast stage, HTTP (as
users run the app) where real agents run.  Here: what each transport is, that
a row the service shows reaches the table through it, that the hosted server
ends with the app, and that no test that builds an app was left with one.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import stat
import threading

from headspace_tui.resident.transport import InProcess
from tests.conftest import LIVE_TRANSPORT
from tests.harness.hosted import TRANSPORTS, HostedClient
from tests.ui.apps import demo_app, service_of, settle, show_recorded, wait_until

BUILDS = re.compile(r"\b(app_of|make_app|demo_app|app_for)\(")


def test_an_app_is_a_client_of_its_service_over_the_tests_transport_and_a_hosted_server_ends_with_it(app_transport):
    app = demo_app(agents=[])
    client = app.service
    hosted = None
    if app_transport == "http":
        assert isinstance(client, HostedClient), "over HTTP the app holds a client of a real server"
        hosted = client.hosted
        assert stat.S_ISSOCK(hosted.place.socket.stat().st_mode) and stat.S_IMODE(hosted.place.socket.stat().st_mode) == 0o600
        assert hosted.thread.is_alive()
    else:
        assert isinstance(client.transport, InProcess)

    async def scenario() -> None:
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot)
            assert not app.table.agents
            told_on: list[int] = []
            service_of(app).subscribe(lambda event: told_on.append(threading.get_ident()))
            show_recorded(app, 1, "api", "permission_bash", 30)
            await wait_until(pilot, lambda: any(a.target == "api:0.0" for a in app.table.agents.values()), "the row the service showed")
            # Where the service told it: its own loop's thread over HTTP, as a resident service does; the app's in process.
            assert told_on and set(told_on) == {hosted.thread.ident if hosted is not None else threading.get_ident()}
            row = next(a for a in app.table.agents.values() if a.target == "api:0.0")
            assert row is not service_of(app).agent(row.pane_id), "the app holds a copy, never the service's own agent"
            assert row == service_of(app).agent(row.pane_id)

    asyncio.run(scenario())
    if hosted is not None:
        assert not hosted.thread.is_alive(), "the hosted server's thread ended with the app"
        assert not hosted.folder.exists(), "its folder was removed"


def test_every_test_that_builds_an_app_runs_over_the_transports(request):
    """Read from each test's source (not from the code names the conftest follows): both in the fast stage, one where agents run."""
    checked = 0
    # Each test's transports gathered in one pass (not a scan of the session per test).
    transports: dict[tuple[object, str | None], set[str | None]] = {}
    for other in request.session.items:
        transports.setdefault((other.path, getattr(other, "originalname", None)), set()).add(transport_of(other))
    for item in request.session.items:
        function = getattr(item, "function", None)
        if function is None or item.path.name == "test_both_transports.py" or getattr(item.module, "OWN_TRANSPORTS", False):
            continue
        if not builds_an_app(function):
            continue
        checked += 1
        callspec = getattr(item, "callspec", None)
        assert callspec is not None and "app_transport" in callspec.params, f"{item.nodeid} builds an app but runs over one transport only"
        live = item.get_closest_marker("e2e") is not None
        assert callspec.params["app_transport"] in ({LIVE_TRANSPORT} if live else set(TRANSPORTS)), item.nodeid
        if not request.config.getoption("keyword"):  # every test of the stage is here, each transport of it
            siblings = transports[(item.path, item.originalname)] - {None}
            assert siblings == ({LIVE_TRANSPORT} if live else set(TRANSPORTS)), f"{item.nodeid}: {sorted(siblings)}"
    if len(request.session.items) > 1000:  # the whole fast stage (not a run of one module)
        assert checked > 100, f"only {checked} tests were found building an app"


@functools.cache
def builds_an_app(function) -> bool:
    """Whether ``function``'s source builds an app (read once: a parametrised test is many items of one function)."""
    try:
        return bool(BUILDS.search(inspect.getsource(function)))
    except (OSError, TypeError):
        return False


def transport_of(item) -> str | None:
    """The transport ``item`` runs over, or None when it has no such parameter."""
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("app_transport") if callspec is not None else None
