"""One agent builder and one start time: ``headspace status`` (scan.to_agent) and the live table (the store) agree.

The same reading of a pane (its record, the fused observation, Claude's
status file, the event log's memory of an earlier run) goes both ways: once
as ``headspace status`` takes it, and once as the monitor hands a first
reading to the store (the claims a ``PaneWatch`` makes, its fuser fed the
status file at its own time, as monitor.py does).  The two agents are
equal, field by field, and dated alike.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from headspace_tui.detect.claude.process import ClaudeProcess
from headspace_tui.detect.claude.status_files import ClaudeStatus, status_observation
from headspace_tui.detect.families import CLAUDE
from headspace_tui.detect.fusion import Fuser
from headspace_tui.model import Agent, AgentState, Observation, Prompt
from headspace_tui.service.records.scan import PaneView, to_agent
from headspace_tui.service.records.store import AgentStore
from headspace_tui.service.watching.pane_watch import PaneWatch
from headspace_tui.tmux.server import PaneRecord

NOW = 1_000_000.0
KEY = "local|s|%1|7@1"
RECORD = PaneRecord(
    pane_id="%1",
    session_id="$0",
    session_name="s",
    window_index=0,
    pane_index=0,
    target="s:0.0",
    pid=100,
    current_command="claude",
    cwd="/home/u/proj",
    width=80,
    height=24,
    alternate_on=False,
    in_mode=False,
    title="",
    dead=False,
    dead_status=None,
)
PERMISSION = Observation(AgentState.PERMISSION, prompt=Prompt("permission", title="Do you want to proceed?", tool="Bash", detail="touch a", fingerprint="p1"))


def _status(status: str, ago: float, waiting_for: str = "") -> ClaudeStatus:
    return ClaudeStatus(pid=7, status=status, waiting_for=waiting_for, cwd="/work/x", name="fix-parser", updated_at=NOW - ago)


def _both(observation: Observation, status: ClaudeStatus | None, logged: tuple[str, float] | None = None) -> tuple[Agent, Agent]:
    def remember(key: str) -> tuple[str, float] | None:
        return logged if key == KEY else None

    shown = to_agent(PaneView(RECORD, 7, observation, status, ClaudeProcess(7, version="2.1.330"), CLAUDE, "", KEY), NOW, remember)
    watch = PaneWatch(RECORD, KEY, agent_pid=7, family=CLAUDE, fuser=Fuser())
    if status is not None:
        watch.fuser.observe(status_observation(status), NOW, at=status.updated_at or NOW)
    live = AgentStore().observed(RECORD, KEY, observation, NOW, agent_pid=7, status=status, agent_version="2.1.330", family=CLAUDE.name, claims=watch.claims(observation.state, remember))
    return shown, live


CASES = {
    "a turn Claude dates": (Observation(AgentState.WORKING), _status("busy", 30), NOW - 30, "status-file"),
    "a permission Claude dates": (PERMISSION, _status("waiting", 12, "permission prompt"), NOW - 12, "status-file"),
    "an input Claude calls idle": (Observation(AgentState.INPUT), _status("idle", 5), NOW - 5, "status-file"),
    "a status file that disagrees": (Observation(AgentState.WORKING), _status("idle", 40), NOW, "sight"),
    "no status file": (Observation(AgentState.IDLE), None, NOW, "sight"),
    "a time from the future": (Observation(AgentState.WORKING), _status("busy", -50), NOW, "status-file"),
    # The event log of an earlier run (a restart, or ``headspace status`` beside a headspace):
    "a wait an earlier run saw": (PERMISSION, None, NOW - 90, "journal", ("permission", NOW - 90)),
    "the same wait by another name": (PERMISSION, None, NOW - 90, "journal", ("question", NOW - 90)),
    "another state an earlier run saw": (Observation(AgentState.IDLE), None, NOW, "sight", ("working", NOW - 90)),
    "Claude's file and the log both": (PERMISSION, _status("waiting", 12, "permission prompt"), NOW - 12, "status-file", ("permission", NOW - 90)),
    "a logged time from the future": (Observation(AgentState.WORKING), None, NOW, "journal", ("working", NOW + 60)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_status_and_the_live_table_make_the_same_agent_with_the_same_start(case):
    observation, status, since, source, *logged = CASES[case]
    shown, live = _both(observation, status, *logged)
    # One appearance of a prompt is the live store's to name (service/records/appearances.py): a
    # one-shot look names none, so no --expect can carry an id that no one keeps.
    fingerprint = observation.prompt.fingerprint if observation.prompt else ""
    assert live.observation.request.startswith(f"{fingerprint}~") if fingerprint else live.observation.request == ""
    assert shown.observation.request == ""
    live.observation = replace(live.observation, request="")
    assert shown == live
    assert (live.since, live.since_source) == (since, source)
