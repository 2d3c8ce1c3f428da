"""One ringer: the service's rings each wait once, and leaves it to a resident service of the same tmux server.

Live Claude, the app under pilot with its service in its own process
(``--no-service``: the service's ringer runs beside it, as in a resident
service), and the lock a resident service holds for the watched tmux server
(taken here by the test, as ``headspace serve`` takes it: what the ringer
asks is the lock, so the service itself need not run).  While it is held, a
new permission comes due but is rung nowhere; once it is let go, the next
permission is rung, and the app, outside tmux (no client of the rung server
shows it), says it on its own terminal.
"""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from headspace_tui.model import AgentState
from headspace_tui.notifications.decide import SETTLE
from headspace_tui.shared.resident_place import make_folder, place_of, take_lock
from headspace_tui.tmux.server import TmuxServer
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU, TURN_DONE
from tests.ui.apps import make_app, ringer_of, wait_until


def test_while_a_service_watches_the_server_nothing_is_rung_here_and_rung_once_it_is_gone(claude_session, private_tmux, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TMUX", raising=False)  # the app outside tmux: its own terminal is no client of the rung server
    monkeypatch.delenv("TMUX_PANE", raising=False)
    session = claude_session([api.bash("touch one.txt", "Create one"), api.text("Made one."), api.bash("touch two.txt", "Create two"), api.text("Made two.")])
    place = place_of(TmuxServer(socket_name=private_tmux.name).identity)
    make_folder(place)
    held = [take_lock(place)]  # its descriptor while held

    def let_go() -> None:
        if held:
            os.close(held.pop())  # the kernel lets go of the flock with it

    async def scenario() -> None:
        app = make_app(private_tmux.name, session.root, claude_home=session.home)
        written: list[str] = []
        app._write_terminal = written.append  # type: ignore[method-assign]  # what would reach the user's terminal
        ringer = ringer_of(app)
        asked = ringer.elsewhere
        deferred: list[bool] = []
        on_loop: list[bool] = []

        def elsewhere() -> bool:
            try:
                on_loop.append(asyncio.get_running_loop() is not None)  # asked on the loop: it would hold every front end's keys
            except RuntimeError:
                on_loop.append(False)
            deferred.append(asked())
            return deferred[-1]

        ringer.elsewhere = elsewhere  # a spy on the real answer (the lock)
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_until(pilot, lambda: session.pane_id in app.table.agents, "the agent's row")
            started = time.monotonic()
            await wait_until(pilot, lambda: time.monotonic() - started > SETTLE + 0.5, "the ringer's quiet start to pass")
            await asyncio.to_thread(session.submit, "create one")
            await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30)
            await wait_until(pilot, lambda: deferred == [True], "the permission's notification to come due")
            assert app.table.agents[session.pane_id].state is AgentState.PERMISSION
            assert written == [] and ringer.rung == []  # the resident service rings it: not this one
            await asyncio.to_thread(session.answer, "1")
            await asyncio.to_thread(session.wait_for, lambda s: "Made one." in s and TURN_DONE.search(s) is not None, timeout=30)
            let_go()  # the service is gone
            await asyncio.to_thread(session.submit, "create two")
            await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30)
            await wait_until(pilot, lambda: len(written) == 1, "the second permission's ring, said on the app's terminal")
            assert deferred == [True, False]
            assert on_loop == [False, False], "asked on the loop"
            assert len(ringer.rung) == 1 and ("Create two" in written[0] or "two.txt" in written[0]), (written, ringer.rung)
            assert written[0].startswith("\x1b]") and written[0].endswith("\x07"), written  # the OSC, bare (no tmux to pass it through), and the bell

    try:
        asyncio.run(scenario())
    finally:
        let_go()
