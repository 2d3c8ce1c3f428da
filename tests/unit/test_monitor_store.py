"""The monitor's record of panes: forgetting a pane is one operation, and subscribers are told in order.

No tmux here: panes are shown through the monitor's replay path (what the
app uses for recorded screens); what is tested is the bookkeeping.
"""

from __future__ import annotations

import asyncio

from headspace_tui.detect.families import CLAUDE
from headspace_tui.events import AgentChanged, AgentRemoved
from headspace_tui.model import AgentState, Observation
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.watching.monitor import Monitor
from headspace_tui.tmux.server import PaneRecord, TmuxServer


def _record(pane_id: str) -> PaneRecord:
    return PaneRecord(
        pane_id=pane_id,
        session_id="$0",
        session_name="s",
        window_index=0,
        pane_index=int(pane_id[1:]),
        target=f"s:0.{pane_id[1:]}",
        pid=100,
        current_command="claude",
        cwd="/",
        width=80,
        height=24,
        alternate_on=False,
        in_mode=False,
        title="",
        dead=False,
        dead_status=None,
    )


def _monitor(events: list) -> Monitor:
    monitor = Monitor(TmuxServer(socket_name="headspace-unit-unused"), journal=Journal(None))
    monitor.subscribe(events.append)
    return monitor


def test_forgetting_a_pane_drops_everything_kept_about_it_at_once():
    events: list = []
    monitor = _monitor(events)
    monitor.replay(_record("%1"), "screen one", Observation(AgentState.IDLE), 10.0, CLAUDE)
    monitor.replay(_record("%2"), "screen two", Observation(AgentState.PERMISSION), 11.0, CLAUDE)
    watch = monitor.panes["%1"]
    key = monitor.store.agents["%1"].key
    watch.timing.look_again(99.0)
    monitor._forget("%1")
    assert "%1" not in monitor.panes and "%1" not in monitor.store.agents
    assert all(kept is not watch for kept in monitor.panes.values())  # its capture, fuser and record went with it
    assert set(monitor.panes) == {"%2"} and monitor.panes["%2"].capture == "screen two"
    assert events[-1] == AgentRemoved("%1", key)
    monitor._forget("%1")  # twice is harmless and says nothing more
    assert [e for e in events if isinstance(e, AgentRemoved)] == [AgentRemoved("%1", key)]


def test_the_journal_hears_state_changes_before_the_app_and_a_failing_subscriber_stops_nothing():
    journal = Journal(None)
    # What the app finds in the journal when it is told: the change is already there.
    journal_when_app_told: list[int] = []
    monitor = Monitor(TmuxServer(socket_name="headspace-unit-unused"), journal=journal)
    monitor.subscribe(lambda e: isinstance(e, AgentChanged) and journal_when_app_told.append(len(journal.agents[e.agent.key].changes)))

    def broken(event) -> None:
        raise RuntimeError("a subscriber's bug")

    monitor.subscribe(broken)
    seen: list = []
    monitor.subscribe(seen.append)
    agent = monitor.replay(_record("%1"), "x", Observation(AgentState.IDLE), 10.0, CLAUDE)
    monitor.replay(_record("%1"), "y", Observation(AgentState.WORKING), 12.0, CLAUDE)
    assert [type(e) for e in seen] == [AgentChanged, AgentChanged] and seen[1].old_state is AgentState.IDLE and seen[1].state_changed
    assert [(t[1], t[2]) for t in journal.agents[agent.key].changes] == [("", "idle"), ("idle", "working")]
    assert journal_when_app_told == [1, 2]


def test_nothing_is_told_once_the_monitor_stops():
    events: list = []
    monitor = _monitor(events)
    asyncio.run(monitor.stop())
    monitor.replay(_record("%1"), "x", Observation(AgentState.IDLE), 10.0, CLAUDE)
    assert events == []


def test_an_agents_spool_under_another_xdg_runtime_dir_is_watched_once_and_a_missing_one_not(tmp_path):
    """Its hooks write under its own XDG_RUNTIME_DIR (tests/e2e/test_spool_split.py runs the real hook program)."""
    from headspace_tui.detect.claude.process import ClaudeProcess
    from headspace_tui.hooks.spool import spool_dir

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir(mode=0o700)
    theirs.mkdir(mode=0o700)
    monitor = Monitor(TmuxServer(socket_name="headspace-unit-unused"), spool=spool_dir({"XDG_RUNTIME_DIR": str(ours)}))
    monitor.facts.processes = {
        1: ClaudeProcess(1, runtime=ours / "headspace"),  # headspace's own: watched already
        2: ClaudeProcess(2, runtime=theirs / "headspace"),
        3: ClaudeProcess(3, runtime=theirs / "headspace"),  # the same folder: one watcher
        4: ClaudeProcess(4, runtime=tmp_path / "gone" / "headspace"),  # no such XDG_RUNTIME_DIR: its hook drops events
        5: ClaudeProcess(5),  # environment unreadable
    }

    async def started() -> list[str]:
        monitor.intake._spools = {monitor.intake.spool.resolve()}
        monitor.intake.watch_agents_spools([1, 2, 3, 4, 5])
        names = sorted(monitor.supervisor.tasks)
        await monitor.supervisor.stop()
        return names

    assert asyncio.run(started()) == [f"the hook watcher of {theirs / 'headspace' / 'spool'}"]


def test_a_hook_event_counts_only_for_a_pane_whose_agent_family_has_hooks():
    """Family.hooks decides: Claude's pane takes its hook's word; a Codex pane's row is not moved by a hook event naming it."""
    from headspace_tui.detect.families import family_named
    from headspace_tui.hooks.spool import HookEvent

    async def run() -> dict[str, AgentState]:
        monitor = _monitor([])
        for pane_id, family in (("%1", "claude"), ("%2", "codex")):
            monitor.replay(_record(pane_id), "x", Observation(AgentState.IDLE), 10.0, family_named(family))
            monitor.hook_event(HookEvent(name=f"1-{pane_id}", event="UserPromptSubmit", pane_id=pane_id, ts=11.0))
        return {pane_id: agent.observation.state for pane_id, agent in monitor.store.agents.items()}

    assert asyncio.run(run()) == {"%1": AgentState.WORKING, "%2": AgentState.IDLE}


def test_a_row_read_before_tmux_knew_its_folder_learns_it_from_the_next_listing_and_a_known_one_stays():
    """A pane read the moment it was made can have no folder in tmux's listing; a quiet pane is not read again to learn it."""
    import dataclasses

    from headspace_tui.service.records.store import AgentStore

    store = AgentStore()
    told: list = []
    store.subscribe(told.append)
    blank = dataclasses.replace(_record("%1"), cwd="")
    store.observed(blank, "k1", Observation(AgentState.IDLE), 10.0, agent_pid=7)
    assert store.agents["%1"].cwd == ""
    told.clear()
    store.moved(dataclasses.replace(blank, cwd="/src/api"), 11.0)  # the next discovery's listing
    assert store.agents["%1"].cwd == "/src/api" and [type(e) for e in told] == [AgentChanged]
    told.clear()
    store.moved(dataclasses.replace(blank, cwd="/elsewhere"), 12.0)  # a folder the row knows is not replaced here
    assert store.agents["%1"].cwd == "/src/api" and told == []
