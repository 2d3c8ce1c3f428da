"""A jump runs tmux: in either mode it runs beside the app's loop, never on it.

The trial: with ``--no-service`` (the service in the app's process), a
stubbed tmux that took 0.5 s froze the UI for 0.5 s on every jump.  Here the
jump's tmux is held until the app has moved its cursor: if the jump ran on
the loop, the key could never be handled and the test would wait for ever
(its state, not a time, tells).  Both ways a front end reaches its service:
in process (``--no-service``), and over HTTP to a real service in its own
process (tests/ui/held_jump.py).  A stand-in for the jump's tmux only,
because what is tested is where the call runs, not what tmux does.  How
long the loop stalls around a 0.5 s jump, in both modes, is measured by
``benchmarks/jump_stall.py``.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from headspace_tui.app.main import HeadspaceApp
from tests.ui.apps import notices, settle, wait_until
from tests.ui.held_jump import Held, in_process, over_http

OWN_TRANSPORTS = True  # each test runs in process and over HTTP to a service in a process of its own (its ``mode``)
GAVE_UP = "the jump's notice (a jump asked on the app's loop gives up before tmux answers)"


@pytest.mark.parametrize("mode", ["in_process", "over_http"])
def test_a_jump_held_in_tmux_leaves_the_keys_working_and_lands_when_tmux_answers(mode, tmp_path):
    async def scenario(app: HeadspaceApp, held: Held) -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await held.load(pilot)
            await settle(pilot)
            first = app.table.selected_pane_id
            assert first is not None
            target = app.table.agents[first].target
            await pilot.press("enter")
            await wait_until(pilot, held.entered, "the jump to reach tmux", timeout=20, every=0.01)
            await pilot.press("j")  # handled while the jump waits on tmux
            await pilot.pause()
            moved = app.table.selected_pane_id
            held.release()
            assert moved != first, "the cursor did not move while the jump waited: the jump held the app's loop"
            await wait_until(pilot, lambda: any(f"jumped to {target}" in line for line in notices(app)), GAVE_UP, timeout=30, every=0.01)
            assert held.jumps() == [target], "the jump waited on the app's loop until it gave up, or went twice"

    os.chmod(tmp_path, 0o700)  # the service's folder must be private, its parent too
    with in_process() if mode == "in_process" else over_http(tmp_path) as (app, held):
        asyncio.run(scenario(app, held))
