"""The demo table whose jump's tmux is held (or slow), in either mode a front end reaches its service: for a test and a benchmark.

* ``in_process``: the service in the app's process (``--no-service``, and
  most pilot tests), its jump replaced in place;
* ``over_http``: the real client over the real wire to a real service in its
  own process (tests/harness/held_service.py: the demo table, its jump held
  until a file appears, or slow).

Each yields the app and a ``Held``.  ``seconds``: the jump takes that long
(as a slow tmux would) instead of waiting to be released.  Only the jump's
tmux is stood in for: what is tested and measured is where the wait is felt
(the app's loop), not what tmux does.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

from headspace_tui.api.facade import Jump
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.resident.facade_client import ServiceClient
from headspace_tui.shared.config import Config
from headspace_tui.shared.resident_place import Place, read_card
from tests.ui.apps import AGENTS, demo_app, service_of, settle

HELD_SERVICE = Path(__file__).resolve().parents[1] / "harness" / "held_service.py"
HOLD_LIMIT = 60.0  # a held jump gives up after this, so a failed test never leaves it waiting for ever


class Held:
    """``load(pilot)`` fills the table; ``entered()`` once a jump reached tmux; ``release()`` lets it answer; ``jumps()`` the targets tmux answered for."""

    def __init__(self, load: Callable[[object], Awaitable[None]], entered: Callable[[], bool], release: Callable[[], None], jumps: Callable[[], list[str]]) -> None:
        self.load, self.entered, self.release, self.jumps = load, entered, release, jumps


@contextlib.contextmanager
def in_process(seconds: float | None = None) -> Iterator[tuple[HeadspaceApp, Held]]:
    app = demo_app()
    released, entered = threading.Event(), threading.Event()
    jumped: list[str] = []

    def held_jump(agent, here=None) -> Jump:
        entered.set()
        # tmux, not answering until released (or for ``seconds``); on the app's loop the release never comes, and it gives up.
        if released.wait(HOLD_LIMIT) if seconds is None else (time.sleep(seconds) or True):
            jumped.append(agent.target)
        return Jump(notice=f"jumped to {agent.target}")

    service_of(app).jump = held_jump  # type: ignore[method-assign]
    try:
        yield app, Held(app.snapshot_loader, entered.is_set, released.set, lambda: jumped)  # type: ignore[attr-defined]
    finally:
        released.set()


@contextlib.contextmanager
def over_http(folder: Path, seconds: float | None = None) -> Iterator[tuple[HeadspaceApp, Held]]:
    """``folder``: private (0700), the service's files go in it."""
    place = Place(folder / "service", "held")
    entered, landed, release = folder / "entered", folder / "landed", folder / "release"
    how = ["--release", str(release)] if seconds is None else ["--seconds", str(seconds)]
    proc = subprocess.Popen([sys.executable, str(HELD_SERVICE), str(place.folder), place.name, "--entered", str(entered), "--landed", str(landed), *how], cwd=folder)
    try:
        deadline = time.monotonic() + 60
        while read_card(place) is None:  # written once it listens
            assert proc.poll() is None, f"the held service ended ({proc.returncode}) before it listened"
            assert time.monotonic() < deadline, "the held service did not listen within 60 s"
            time.sleep(0.05)
        client = ServiceClient(place, config=Config(theme="headspace-dark"))
        client.connect(settle=0)  # its host never finishes a first look (it watches no tmux): the table is whole already
        assert len(client.agents()) == len(AGENTS)  # the demo table, from the service's first answer
        lines = lambda path: path.read_text().splitlines() if path.exists() else []  # noqa: E731
        yield HeadspaceApp(client), Held(settle, lambda: bool(lines(entered)), release.touch, lambda: lines(landed))
    finally:
        release.touch()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
