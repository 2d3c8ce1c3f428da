"""The churn soak, a minute and a half of it: tmux survives headspace on a busy day, as users run it.

``benchmarks/soak.py`` (its docstring says what it runs) in its service mode:
the resident service watches the agents' server, and headspace under test
and a second headspace started and killed every 15 s are its clients; 40
fake agents come and go and a real client is attached, against this
machine's tmux.  Output floods are left out here: with them tmux 3.3a's
server died in its own control-mode code (a NULL control state in
``control_write``, and a "not enough data" fatal, found with a debug build),
also with plain ``tmux -C`` clients and no headspace at all
(docs/resilience.md, "Never the cause"), which no client can prevent;
floods are tested on their own in test_tmux_harmless.py.

Soaks are benchmarks: this one is left out of ``tests/run`` (and so of
CI) and run with ``pytest -m soak``; the session storm
(test_storm.py), which proves the attaches that could crash tmux are rare,
stays in it.

This asserts what must hold on any machine, however loaded (the tests run
side by side): the harm checks.  The agents' tmux server survives (same pid,
no segfault in the kernel log); the service and headspace run throughout and
headspace is the service's client; the churn happened; control-client
attaches stay within a few per session (tmux's own count), the clients
attaching none and nothing of a killed headspace left attached; every key
press reaches the screen.

The budgets, key-to-screen p95 under 150 ms in every minute and RSS growth
after minute 2 within 15 MB for headspace and the service, are timing and
memory of the machine it runs on: they are the benchmark's, measured, not
gated here (``--no-budgets`` reports them only).  Measure them with::

    nice python benchmarks/soak.py --minutes 5 --json     # or the 20-minute default
"""

from __future__ import annotations

import pytest

from tests.harness.benchmark import run_benchmark

pytestmark = [pytest.mark.e2e, pytest.mark.soak]  # a benchmark's run: not in tests/run (docs/testing.md), run with pytest -m soak

MINUTES = 1.5


@pytest.mark.xdist_group("soak")
@pytest.mark.timeout(360)
def test_a_minute_and_a_half_of_churn_and_a_second_headspace_through_the_service_harm_nothing():
    result, _ = run_benchmark("soak.py", "--mode", "service", "--minutes", str(MINUTES), "--no-floods", "--no-budgets", timeout=330)
    assert result["mode"] == "service" and result["budgets"] is False, result
    assert result["tmux_survived"], result
    assert not result["tmux_segfaults_ours"], result["tmux_segfaults_ours"]
    assert result["service_running"], result
    assert result["headspace_running"], result
    assert result["ran_s"] >= MINUTES * 60 - 10, "the soak ended early"
    # 40 agents of 3-40 s lives: about 130 started in three minutes, so at least 50 in a minute and a half.
    assert result["agents_started"] >= 50, "the soak did not churn"
    # one every 15 s: six in a minute and a half
    assert result["second_headspaces"] >= 5, "the second headspace was not started and killed every 15 s"
    # two keys (help open and closed) every 2 s or more: at least 60 in three minutes, 30 in a minute and a half
    assert result["key_presses"] >= 30 and result["key_misses"] == 0, result
    # The service watched every session, once each; its clients attached nothing of their own.
    assert result["headspaces_alone"] == 0, result
    assert result["control_attaches_by_service"] >= result["sessions_at_end"], result
    assert result["control_attaches_by_headspace"] == 0 and result["control_attaches_by_second_headspaces"] == 0, result
    assert result["failures"] == [], result["failures"]  # the harm checks only: --no-budgets
