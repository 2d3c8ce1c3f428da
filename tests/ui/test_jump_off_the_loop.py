"""A jump runs tmux: with the service in this process too, it runs beside the app's loop, never on it.

The trial: with ``--no-service`` (the service in the app's process), a
stubbed tmux that took 0.5 s froze the UI for 0.5 s on every jump.  Here the
jump's tmux is held until the app has moved its cursor: if the jump ran on
the loop, the key could never be handled and the test would wait for ever
(its state, not a time, tells).  A stub for the jump's tmux only, because
what is tested is where the call runs, not what tmux does.
"""

from __future__ import annotations

import asyncio
import threading

from headspace_tui.api.facade import Jump
from tests.ui.apps import demo_app, service_of, wait_until


def test_a_jump_held_in_tmux_leaves_the_keys_working_and_lands_when_tmux_answers():
    async def scenario() -> None:
        app = demo_app()
        released, entered = threading.Event(), threading.Event()
        jumped: list[tuple[str, bool]] = []

        def slow_jump(agent, here=None) -> Jump:
            entered.set()
            # tmux, not answering until the app has shown it still takes keys; on the app's loop it never would, and gives up.
            jumped.append((agent.target, released.wait(10)))
            return Jump(notice=f"jumped to {agent.target}")

        service_of(app).jump = slow_jump  # type: ignore[method-assign]
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            first = app.table.selected_pane_id
            await pilot.press("enter")
            await wait_until(pilot, entered.is_set, "the jump to reach tmux", timeout=20, every=0.01)
            await pilot.press("j")  # handled while the jump waits on tmux
            await pilot.pause()
            moved = app.table.selected_pane_id
            released.set()
            assert moved != first, "the cursor did not move while the jump waited: the jump held the app's loop"
            await wait_until(pilot, lambda: bool(jumped), "the jump to end", timeout=20, every=0.01)
            assert jumped == [(app.table.agents[first].target, True)], "the jump waited on the app's loop until it gave up"

    asyncio.run(scenario())
