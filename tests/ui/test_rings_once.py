"""A headspace of its own leaves the ringing to the resident service of its tmux server: each wait rings once.

Live Claude, the app under pilot, and the lock a resident service holds for
the watched tmux server (taken here by the test, as ``headspace serve``
takes it: what the app asks is the lock, so the service itself need not
run). While it is held, a new permission is due but written nowhere by the
app; once it is let go, the next permission reaches the terminal as before.
"""

from __future__ import annotations

import asyncio
import os
import time

from headspace_tui.model import AgentState
from headspace_tui.notifications.decide import SETTLE
from headspace_tui.shared.resident_place import make_folder, place_of, take_lock
from headspace_tui.tmux.server import TmuxServer
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU, TURN_DONE
from tests.ui.apps import make_app, wait_until


def test_while_a_service_watches_the_server_the_app_does_not_ring_and_rings_again_once_it_is_gone(claude_session, private_tmux):
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
        asked = app.service.rings_elsewhere
        deferred: list[bool] = []

        on_loop: list[bool] = []

        def rings_elsewhere() -> bool:
            try:
                on_loop.append(asyncio.get_running_loop() is not None)  # asked on the app's loop: it would hold the keys
            except RuntimeError:
                on_loop.append(False)
            deferred.append(asked())
            return deferred[-1]

        app.service.rings_elsewhere = rings_elsewhere  # type: ignore[method-assign]  # a spy on the real answer
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_until(pilot, lambda: session.pane_id in app.table.agents, "the agent's row")
            started = time.monotonic()
            await wait_until(pilot, lambda: time.monotonic() - started > SETTLE + 0.5, "the notifier's quiet start to pass")
            await asyncio.to_thread(session.submit, "create one")
            await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30)
            await wait_until(pilot, lambda: deferred == [True], "the permission's notification to come due")
            assert app.table.agents[session.pane_id].state is AgentState.PERMISSION
            assert written == []  # the service rings it: not the app
            await asyncio.to_thread(session.answer, "1")
            await asyncio.to_thread(session.wait_for, lambda s: "Made one." in s and TURN_DONE.search(s) is not None, timeout=30)
            let_go()  # the service is gone
            await asyncio.to_thread(session.submit, "create two")
            await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30)
            await wait_until(pilot, lambda: len(written) == 1, "the second permission's notification, written by the app")
            assert deferred == [True, False]
            assert on_loop == [False, False], "asked on the app's loop"
            assert "Create two" in written[0] or "two.txt" in written[0], written

    try:
        asyncio.run(scenario())
    finally:
        let_go()
