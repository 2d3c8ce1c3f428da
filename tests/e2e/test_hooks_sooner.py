"""Hooks make headspace know sooner: on live Claude, a hook's permission is news at once.

Two monitors watch the same real session (``tests/harness/hooks_race.py``):
one reads only the screen, the other also reads the hook spool.  What must
hold on every run, however loaded the machine:

* every PermissionRequest hook Claude starts reaches the hooks monitor;
* the moment it is handled, that monitor says ``permission``: a hook is never
  held back to wait for the screen's word;
* the monitor with hooks is never later than the screen alone, except by
  scheduling (both share one event loop).

How much sooner is a race between two processes on a busy machine: Claude
starts the hook and draws the dialog within a few tens of milliseconds of
each other, and which of the two paths (hook process and spool, or tmux
output and capture) finishes first depends on what else the machine is
doing (a CI run once measured hooks 358 ms, screen 309 ms at the median).
So the gain is measured, over many trials, by ``benchmarks/hooks_sooner.py``;
this test prints its three trials (run with -s).
"""

from __future__ import annotations

import pytest

from headspace_tui.model import AgentState
from tests.harness.hooks_race import install_hooks, ms, race, script

pytestmark = pytest.mark.e2e
TRIALS = 3
# Both monitors share one event loop: when the dialog is drawn before the
# hook event lands (it happens under load), whichever monitor is scheduled
# first sees it first. A strict hooks <= screen failed on that jitter (242 vs
# 226 ms in a CI run); more than a capture round late would be a real regression.
SCHEDULING_JITTER_MS = 100


def test_a_permission_hook_is_news_at_once_and_never_later_than_the_screen(claude_session, private_tmux, tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    session = claude_session(script(TRIALS), launch=False, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
    install_hooks(session)
    session.launch()

    trials = race(session, private_tmux.name, runtime, tmp_path / "no-claude-config", TRIALS)

    table = [(ms(t.hook_started), ms(t.hook_arrived), ms(t.hooks), ms(t.screen)) for t in trials]
    print(f"\nper trial, ms after submit (hook started, hook arrived, hooks monitor, screen alone): {table}")
    for trial in trials:
        assert trial.hook_arrived is not None, ("a PermissionRequest hook never reached the monitor", table)
        assert trial.state_after_hook is AgentState.PERMISSION, (trial.state_after_hook, table)
        assert trial.hooks is not None and trial.screen is not None, table
        assert trial.hooks <= trial.hook_arrived, table  # the hook's word was taken when it came, if not sooner from the screen
        assert ms(trial.hooks) <= ms(trial.screen) + SCHEDULING_JITTER_MS, table
