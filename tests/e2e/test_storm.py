"""The session storm, a minute of it: tmux 3.3a survives headspace's resident service.

``benchmarks/storm.py --arm service`` (its docstring says what it runs): a
private tmux server with 20 fake Claude agents in 5 sessions, a new session
every 0.7-2.3 s killed a second later, windows and whole sessions of agents
killed and made again, a popup of headspace's UI opened and SIGKILLed every
10 s, and a CPU hog beside it, with headspace's resident service
attached throughout.  tmux before 3.7 crashes its server when a session
notification reaches a control client that is still identifying; plain
``tmux -C`` clients attached again and again under this storm kill it within
seconds (``--arm plain``).  This asserts that the server survives headspace
(same pid, no segfault of it in the kernel log), that the service runs to
the end, and that the storm really happened (sessions and popups made).
A minute and one hog, not the benchmark's two and three: the tests beside
it in a parallel run load the machine too, and plain clients are dead in
seconds, so a minute still tells a harmless service from a harmful one.
The hog runs at nice 19: it keeps the machine busy whatever runs beside
the storm, yet takes only the time the other tests leave (at nice 0 it was
a whole core for a minute, the largest single cost of the live stage).

The long runs, and the comparison with plain ``tmux -C`` clients, headspace's
direct attach alone and no client at all, are ``python benchmarks/storm.py
--arm {service,plain,direct,none} --minutes 10`` (not part of the tests).
"""

from __future__ import annotations

import pytest

from tests.harness.benchmark import run_benchmark

pytestmark = pytest.mark.e2e


@pytest.mark.timeout(300)
@pytest.mark.xdist_group("soak")  # never beside the churn soak: each would be the other's load, and both their own
def test_a_minute_of_session_storm_leaves_tmux_and_the_service_running():
    result, proc = run_benchmark("storm.py", "--arm", "service", "--minutes", "1", "--hogs", "1", "--hog-nice", "19", timeout=280)
    assert result["tmux_survived"], result
    assert not result["tmux_segfaults_ours"], result["tmux_segfaults_ours"]
    assert result["service_running_at_end"], result
    assert result["ran_s"] >= 58, result
    assert result["sessions_made"] >= 20, "the storm did not make sessions"
    assert result["popups_opened"] >= 4, "the popups were not opened every 10 s"
    assert result["failures"] == [] and proc.returncode == 0, (result["failures"], proc.stderr[-2000:])
