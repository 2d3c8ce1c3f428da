"""The agent store: the one writer of agents, and what it tells its subscribers."""

from __future__ import annotations

import dataclasses

from headspace_tui.detect.claude.status_files import ClaudeStatus
from headspace_tui.events import AgentChanged, AgentRemoved
from headspace_tui.model import AgentState, Evidence, Observation, Prompt
from headspace_tui.service.records.store import AgentStore
from headspace_tui.tmux.server import PaneRecord


def _record(pane_id: str = "%1", session: str = "s", window: int = 0) -> PaneRecord:
    return PaneRecord(
        pane_id=pane_id,
        session_id="$0",
        session_name=session,
        window_index=window,
        pane_index=0,
        target=f"{session}:{window}.0",
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


def _store() -> tuple[AgentStore, list]:
    store, told = AgentStore(), []
    store.subscribe(told.append)
    return store, told


def _permission(fingerprint: str) -> Observation:
    return Observation(AgentState.PERMISSION, prompt=Prompt("permission", title="Do you want to proceed?", tool="Bash", fingerprint=fingerprint))


def test_a_new_agent_takes_its_name_and_folder_from_claudes_status():
    store, told = _store()
    status = ClaudeStatus(pid=7, status="idle", session_id="abc", cwd="/work/x", name="fix-parser")
    agent = store.observed(_record(), "local|s|%1|7@1", Observation(AgentState.IDLE), 10.0, agent_pid=7, status=status, agent_version="2.1.330")
    assert (agent.cwd, agent.name, agent.agent_pid, agent.agent_version, agent.key) == ("/work/x", "fix-parser", 7, "2.1.330", "local|s|%1|7@1")
    assert told == [AgentChanged(agent, None, 10.0)]


def test_an_equal_reading_keeps_the_object_and_tells_no_one():
    store, told = _store()
    first = Observation(AgentState.IDLE, evidence=(Evidence("idle prompt", 20, "> "),))
    agent = store.observed(_record(), "k", first, 10.0, agent_pid=7)
    kept = agent.observation  # the reading as the store keeps it: ``first``, with an id of the store's (Observation.stamped)
    assert kept == first
    again = dataclasses.replace(first, evidence=(Evidence("another rule", 21, "> "),))  # evidence differs, the row does not
    assert store.observed(_record(), "k", again, 11.0, agent_pid=7) is agent
    assert agent.observation is kept and agent.observation.id == kept.id and len(told) == 1 and agent.since == 10.0


def test_a_new_prompt_restarts_the_prompts_clock_and_a_new_state_the_states():
    store, told = _store()
    changed_state: list[bool] = []  # as subscribers see it when told (the agent is the live object)
    store.subscribe(lambda event: changed_state.append(event.state_changed))
    agent = store.observed(_record(), "k", _permission("a"), 10.0, agent_pid=7)
    agent.delivery = "not delivered: the prompt changed"
    store.observed(_record(), "k", _permission("b"), 12.0, agent_pid=7)
    # Another command to approve is another wait (detect/clock.py), as the notifier counts it: its time starts again.
    assert (agent.prompt_since, agent.since, agent.delivery) == (12.0, 12.0, "not delivered: the prompt changed")
    store.observed(_record(), "k", Observation(AgentState.WORKING), 15.0, agent_pid=7)
    assert (agent.since, agent.delivery) == (15.0, "")  # a new state clears the last action's line
    assert [e.old_state for e in told] == [None, AgentState.PERMISSION, AgentState.PERMISSION]
    assert changed_state == [True, False, True]  # the second permission: the same state, its clock moved


def test_a_moved_pane_is_told_once_and_a_still_one_not_at_all():
    store, told = _store()
    agent = store.observed(_record(), "k", Observation(AgentState.IDLE), 10.0, agent_pid=7)
    store.moved(_record(session="renamed", window=2), 11.0)
    assert (agent.target, agent.session) == ("renamed:2.0", "renamed") and told[-1] == AgentChanged(agent, AgentState.IDLE, 11.0)
    store.moved(_record(session="renamed", window=2), 12.0)
    store.moved(_record("%9"), 12.0)  # not an agent
    assert len(told) == 2


def test_forgetting_tells_once_and_a_quiet_store_tells_nothing():
    store, told = _store()
    store.observed(_record(), "k", Observation(AgentState.IDLE), 10.0, agent_pid=7)
    store.forget("%1")
    store.forget("%1")
    assert told[1:] == [AgentRemoved("%1", "k")] and store.agents == {}  # with its identity: the journal keys histories by it
    store.quiet = True
    store.observed(_record("%2"), "k2", Observation(AgentState.IDLE), 10.0, agent_pid=8)
    store.marked("%2", "sent", 11.0)
    assert len(told) == 2 and store.agents["%2"].delivery == "sent"


def test_a_failing_subscriber_does_not_keep_the_next_from_hearing():
    store, told = AgentStore(), []

    def broken(event) -> None:
        raise RuntimeError("a subscriber's bug")

    store.subscribe(broken)
    store.subscribe(told.append)
    agent = store.observed(_record(), "k", Observation(AgentState.IDLE), 10.0, agent_pid=7)
    assert told == [AgentChanged(agent, None, 10.0)]


def test_a_state_seen_late_keeps_the_start_claude_gives_it():
    store, _ = _store()
    agent = store.observed(_record(), "k", Observation(AgentState.WORKING), 100.0, agent_pid=7, claims={"status-file": 15.0})
    assert agent.since == 15.0  # headspace started at 100; Claude has worked since 15
    agent = store.observed(_record(), "k", _permission("a"), 120.0, agent_pid=7, claims={"status-file": 118.5})
    assert agent.since == 118.5
    # A claim from before the state it would date (a status file not yet rewritten) is ignored.
    agent = store.observed(_record(), "k", Observation(AgentState.WORKING), 130.0, agent_pid=7, claims={"status-file": 15.0})
    assert agent.since == 130.0
    # Claude's word arriving after the screen's dates the state, if newer; never one from the future.
    agent = store.observed(_record(), "k", Observation(AgentState.WORKING), 131.0, agent_pid=7, claims={"status-file": 129.6})
    assert agent.since == 129.6
    agent = store.observed(_record(), "k", Observation(AgentState.WORKING), 132.0, agent_pid=7, claims={"status-file": 140.0})
    assert agent.since == 129.6
