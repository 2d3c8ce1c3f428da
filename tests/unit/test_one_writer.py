"""The store is an agent's one writer, and one reading is told once.

A reading of a pane may change the agent's state, the answer desk's hook tag
and its last answer at once; subscribers (the journal, the front end) get
one ``AgentChanged`` for all of it, in the place of the first, followed by
what else happened (an ``Answered``).  The journal hands back an agent's
command and outcome instead of writing them; the store applies them and
tells only a change.
"""

from __future__ import annotations

from headspace_tui.events import AgentChanged, Answered
from headspace_tui.model import AgentState, Channel, Observation
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.records.store import AgentStore
from tests.unit.test_monitor_store import _record


def test_one_reading_that_changes_state_tag_and_answer_is_one_agent_changed():
    store = AgentStore()
    seen: list = []
    store.subscribe(seen.append)
    agent = store.observed(_record("%1"), "k1", Observation(AgentState.PERMISSION), 10.0, agent_pid=7)
    seen.clear()
    with store.one_reading():
        store.observed(_record("%1"), "k1", Observation(AgentState.WORKING), 11.0, agent_pid=7)
        store.channel("%1", Channel.HOOK, 11.0)
        store.answered("%1", "answered in the pane: Bash: make", 11.0)
        store.emit(Answered(agent=agent, channel=Channel.PANE, what="Bash: make", tool="Bash", tool_input="", at=11.0))
        assert seen == []  # nothing is told while the reading is under way
    assert [type(e) for e in seen] == [AgentChanged, Answered]
    changed = seen[0]
    assert changed.old_state is AgentState.PERMISSION and changed.agent.state is AgentState.WORKING and changed.state_changed
    assert changed.agent.channel == Channel.HOOK and changed.agent.answered.startswith("answered in the pane")


def test_outside_a_reading_each_change_is_told_at_once():
    store = AgentStore()
    seen: list = []
    store.subscribe(seen.append)
    store.observed(_record("%1"), "k1", Observation(AgentState.IDLE), 10.0, agent_pid=7)
    store.channel("%1", Channel.HOOK, 11.0)
    assert [type(e) for e in seen] == [AgentChanged, AgentChanged]


def test_the_journal_hands_back_command_and_outcome_and_the_store_tells_only_a_change():
    from headspace_tui.detect.claude.transcript import Turn

    store = AgentStore()
    seen: list = []
    store.subscribe(seen.append)
    agent = store.observed(_record("%1"), "k1", Observation(AgentState.WORKING), 10.0, agent_pid=7)
    journal = Journal(None, clock=lambda: 20.0)
    turns = [Turn(role="user", text="run the tests", uuid="u1"), Turn(role="tool_result", text="=== 3 passed in 0.1s ===", uuid="r1")]
    work = journal.turns(agent, turns)
    assert work == ("run the tests", "tests passed: 3 passed")
    assert (agent.command, agent.outcome) == ("", "")  # the journal only reads the agent
    seen.clear()
    store.work("%1", *work, 20.0)
    store.work("%1", *work, 21.0)  # the same again: nothing to tell
    assert len(seen) == 1 and (agent.command, agent.outcome) == work
