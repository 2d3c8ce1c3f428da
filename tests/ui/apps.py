"""Building the app for tests: private tmux, and never the user's ~/.claude, spool or event log."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from textual.screen import Screen

from headspace_tui.answering.policy import REACTION_TIME
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.detect.claude import classify_capture
from headspace_tui.model import Agent
from headspace_tui.resident.facade_client import ServiceClient
from headspace_tui.resident.ringer import Ringer
from headspace_tui.resident.transport import InProcess
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.config import Config
from headspace_tui.tmux.server import PaneRecord, TmuxServer
from tests.harness.hosted import TRANSPORTS, Hosted, HostedClient, caught_up
from tests.harness.record import DEFAULT_OUT

# How app_of reaches its service: "in-process" (``--no-service``) or "http" (a resident service, as users run it).
# tests/conftest.py runs every test that builds an app once with each (its ``transport`` parameter).
transport = TRANSPORTS[0]


def app_of(service: Service, **options) -> HeadspaceApp:
    """The app on ``service`` behind the same seam as a resident service's client, over the test's transport: it holds copies.

    In process, ``ServiceClient.in_process``; over HTTP, the real server
    around the same service on a thread of its own (tests/harness/hosted.py),
    ended with the app.
    """
    if transport == "http":
        return HeadspaceApp(Hosted(service).client(), **options)
    return HeadspaceApp(ServiceClient.in_process(service), **options)


def service_of(app: HeadspaceApp) -> Service:
    """The service behind ``app`` (tests only: to show a recorded pane, or look at its insides); the app itself holds only the client.

    Over HTTP its methods run on the service's own loop (``OnItsLoop``), as
    its own changes do; what they tell reaches the app down the stream
    (``settle`` waits for it).
    """
    client = app.service
    if isinstance(client, HostedClient):
        return client.hosted.on_its_loop()  # type: ignore[return-value]
    assert isinstance(client, ServiceClient) and isinstance(client.transport, InProcess), "an app built by app_of (make_app, demo_app)"
    return client.transport.service


def ringer_of(app: HeadspaceApp) -> Ringer:
    """The ringer of the service behind ``app`` (resident/ringer.py: the one that rings, in process as in a resident service)."""
    client = app.service
    if isinstance(client, HostedClient):
        return client.hosted.ringer
    assert isinstance(client, ServiceClient) and isinstance(client.transport, InProcess), "an app built by app_of (make_app, demo_app)"
    return client.transport.ringer


class LiveRow:
    """A pane's row as the table holds it now, read again at each attribute.

    Agents cross the seam as immutable values: each change is a new copy in
    the table, so a test that kept the ``Agent`` it first saw would wait on
    that copy for ever.  This reads ``app.table.agents[pane_id]`` every time.
    """

    def __init__(self, app: HeadspaceApp, pane_id: str) -> None:
        self._app, self._pane_id = app, pane_id

    def __getattr__(self, name: str):
        return getattr(self._app.table.agents[self._pane_id], name)


def live_row(app: HeadspaceApp, pane_id: str) -> Agent:
    """The row of ``pane_id`` as it is whenever it is read (``LiveRow``), typed as the ``Agent`` it reads through to."""
    return LiveRow(app, pane_id)  # type: ignore[return-value]


def readable(app: HeadspaceApp, pane_id: str, read: float = REACTION_TIME + 0.05) -> bool:
    """``pane_id``'s prompt has been shown long enough for a person to read it (``read`` s), by both clocks a key answers to.

    The answerer's: since the service first saw the prompt (``prompt_since``).
    The key's: since this table first showed it (``prompt_shown_at``), a
    moment later, or much later when the app is slow to draw.
    """
    agent = app.table.agents.get(pane_id)
    if agent is None or agent.observation.prompt is None or app.clock() - agent.prompt_since < read:
        return False
    shown = app.table.prompt_shown_at(agent)
    return shown is None or time.monotonic() - shown >= read


def make_app(socket_name: str, tmp: Path, *, claude_home: Path | None = None, journal: Journal | None = None, spool: Path | None = None, **options) -> HeadspaceApp:
    """The app on a private tmux server, reading Claude's status from ``claude_home`` (a test HOME)."""
    config_dir = (claude_home / ".claude") if claude_home is not None else tmp / "no-claude-config"
    spool = spool or tmp / "spool"
    service = Service.build(
        TmuxServer(socket_name=socket_name),
        config_dir=config_dir,
        spool=spool,
        journal=journal if journal is not None else Journal(None),
        **options,
    )
    return app_of(service)


# A demo table: the app with its detectors off, shown real recorded panes from
# the corpus (screens the real Claude drew, classified by the real detector),
# with a fixed clock, so what it shows depends only on the code.
NOW = 1_800_000_000.0
# (session, recorded screen, seconds in state)
AGENTS = [
    ("api", "permission_bash", 95),
    ("web", "question_two_options", 40),
    ("docs", "input_plain_question", 610),
    ("parser", "working_streaming", 12),
    ("ci", "working_retrying_500", 5),
    ("notes", "idle_finished", 3600 + 120),
    ("old", "exited_shell_back", 7200),
]


def recorded(n: int, session: str, screen: str, *, cwd: str | None = None) -> tuple[PaneRecord, str, dict]:
    """Pane ``%n`` of session ``session`` as the recorded ``screen`` shows it: its record, its screen's bytes, the recording's notes."""
    base = DEFAULT_OUT / "alt" / "120x40" / screen
    meta = json.loads(base.with_suffix(".json").read_text())
    ansi = base.with_suffix(".ansi").read_text()
    record = PaneRecord(
        pane_id=f"%{n}",
        session_id=f"${n}",
        session_name=session,
        window_index=0,
        pane_index=0,
        target=f"{session}:0.0",
        pid=1000 + n,
        current_command=meta["pane_command"],
        cwd=cwd if cwd is not None else f"/home/dev/src/{session}",
        width=meta["width"],
        height=meta["height"],
        alternate_on=meta["alternate_on"],
        in_mode=False,
        title=meta["pane_title"],
        dead=False,
        dead_status=None,
    )
    return record, ansi, meta


def show_recorded(app: HeadspaceApp, n: int, session: str, screen: str, age: float, *, cwd: str | None = None) -> None:
    """Pane ``%n`` of session ``session`` shows the recorded ``screen``, in that state for ``age`` seconds."""
    record, ansi, meta = recorded(n, session, screen, cwd=cwd)
    service_of(app).replay(record, ansi, classify_capture(ansi, command=meta["pane_command"]), app.clock() - age, family="claude")


def demo_app(agents: list[tuple[str, str, float]] = AGENTS, *, config: Config | None = None, clock: Callable[[], float] = lambda: NOW, journal: Journal | None = None) -> HeadspaceApp:
    """The demo app; ``await app.snapshot_loader(pilot)`` fills its table.  ``clock``: a test that needs time to pass gives its own."""
    # The theme is named: left to itself the app picks one by the terminal's colours.
    app = app_of(
        Service.build(
            TmuxServer(socket_name="headspace-snapshot-unused"),
            live=False,
            clock=clock,
            journal=journal if journal is not None else Journal(None),
            hooks=False,
            config=config or Config(theme="headspace-dark"),
        )
    )

    async def load(pilot) -> None:
        for n, (session, screen, age) in enumerate(agents):
            show_recorded(app, n, session, screen, age)
        await pilot.pause()  # the monitor's reports reach the table as messages
        await settle(pilot)

    app.snapshot_loader = load  # type: ignore[attr-defined]
    return app


def asked_all(app: HeadspaceApp) -> bool:
    """No question of ``app`` to its service is out (they go from threads, in process too) and the previewed pane's screen came."""
    client = app.service
    if any(worker.group == "service" and not worker.is_finished for worker in app.workers):
        return False
    if isinstance(client, ServiceClient):
        if client._asides or (client._focusing is not None and not client._focusing.done()):
            return False
        if client.focused is not None and client.agents() and client.screen(client.focused) is None:
            return False
    return True


async def settle(pilot) -> None:
    """Until everything the service said reached the app, and every question it asked came back, and was drawn (a frame with nothing still on its way)."""
    await caught_up(pilot.app.service, pause=pilot.pause)
    await wait_until(pilot, lambda: asked_all(pilot.app), "the app's questions to its service to come back")
    await pilot.pause()
    await pilot.pause()


async def wait_until(pilot, predicate: Callable[[], object], what: str | Callable[[], str], timeout: float = 20.0, every: float = 0.1) -> None:
    """Let the app run until ``predicate`` holds (checked every ``every`` s); after ``timeout`` s fail, saying what was awaited.

    ``what`` may be a function, read when the wait fails (what the app showed then), and the
    failure adds every notice the app showed during the wait (a key it refused says why; a
    refusal's line is gone after a few seconds, so each look keeps what it saw).
    """
    deadline = time.monotonic() + timeout
    shown: list[str] = []
    while not predicate():
        shown.extend(line for line in notices(pilot.app) if line not in shown)
        if time.monotonic() > deadline:
            said = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout:g}s waiting for {said}; the app said: {shown or 'nothing'}")
        await pilot.pause(every)


PRESS_AGAIN = "read it, then press again; nothing sent"  # the app's refusal of a key meant for a prompt that changed, or a row, just now


async def press_as_a_person(pilot, app: HeadspaceApp, pane_id: str, key: str, done: Callable[[], object], what: str, *, presses: int = 3, timeout: float = 20.0) -> None:
    """Press ``key`` for ``pane_id``'s prompt until ``done`` holds, as a person does: again when the app says to.

    The app refuses an answering key whose prompt began to show (or whose row
    came under the cursor) less than a reaction time before the press, and
    says "read it, then press again".  On a loaded machine a dialog's reading
    can change after the test saw it readable (a capture caught mid-redraw
    makes a new appearance of the same words); a person reads it again and
    presses again, so this does, at most ``presses`` times, each once the
    prompt is readable again.  Any other refusal fails the wait as before.
    """

    def refusals() -> set[int]:
        return {id(note) for note in getattr(app, "_notifications", ()) if PRESS_AGAIN in str(note.message)}

    for _ in range(presses):
        before = refusals()
        await pilot.press(key)
        await wait_until(pilot, lambda before=before: done() or refusals() - before, what, timeout=timeout)
        if done():
            return
        await wait_until(pilot, lambda: readable(app, pane_id), "the prompt readable again")
    raise AssertionError(f"{what}: {key!r} refused {presses} times; the app said: {notices(app)}")


def notices(app) -> list[str]:
    """The notices the app shows now (its toasts), oldest first."""
    return [str(note.message) for note in getattr(app, "_notifications", ())]  # Textual keeps them there while shown


def screen_open(app: HeadspaceApp, kind: type[Screen]) -> bool:
    """A ``kind`` screen is on top and built (its widgets composed and mounted): what a user sees once it opened."""
    return isinstance(app.screen, kind) and app.screen.is_mounted
