"""A first reading of a pane is dated by the one clock: Claude's status file, the event log's memory, or sight.

The reading goes to the store as the monitor hands it (the claims a
``PaneWatch`` makes, its fuser fed the status file at its own time, as
monitor.py does): in the resident service, and in the service ``headspace
status`` runs for a look alike, so both date an agent the same way.
"""

from __future__ import annotations

import pytest

from headspace_tui.detect.claude.status_files import ClaudeStatus, status_observation
from headspace_tui.detect.families import CLAUDE
from headspace_tui.detect.fusion import Fuser
from headspace_tui.model import Agent, AgentState, Observation, Prompt
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


def _first_reading(observation: Observation, status: ClaudeStatus | None, logged: tuple[str, float] | None = None) -> Agent:
    def remember(key: str) -> tuple[str, float] | None:
        return logged if key == KEY else None

    watch = PaneWatch(RECORD, KEY, agent_pid=7, family=CLAUDE, fuser=Fuser())
    if status is not None:
        watch.fuser.observe(status_observation(status), NOW, at=status.updated_at or NOW)
    return AgentStore().observed(RECORD, KEY, observation, NOW, agent_pid=7, status=status, agent_version="2.1.330", family=CLAUDE.name, claims=watch.claims(observation.state, remember))


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
def test_a_first_reading_starts_when_the_one_clock_says(case):
    observation, status, since, source, *logged = CASES[case]
    live = _first_reading(observation, status, *logged)
    # One appearance of a prompt is the live store's to name (service/records/appearances.py).
    fingerprint = observation.prompt.fingerprint if observation.prompt else ""
    assert live.observation.request.startswith(f"{fingerprint}~") if fingerprint else live.observation.request == ""
    assert (live.since, live.since_source) == (since, source)
    assert (live.cwd, live.name) == ((status.cwd, status.name) if status else (RECORD.cwd, ""))


def test_the_store_of_a_look_names_no_appearance():
    """``headspace status`` with no service: the look's store names none (no service keeps the name after it), and dates alike."""
    store = AgentStore()
    store.names_appearances = False
    agent = store.observed(RECORD, KEY, PERMISSION, NOW, agent_pid=7, status=None, agent_version="2.1.330", family=CLAUDE.name, claims={})
    assert agent.observation.request == "" and (agent.since, agent.since_source) == (NOW, "sight")
