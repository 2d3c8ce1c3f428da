"""Snoozes: a wait put off lasts as long as the wait (by the notifier's own rule), or until its time; then it rings again."""

from __future__ import annotations

from headspace_tui.model import AgentState
from headspace_tui.notifications.decide import GATHER, Notifier
from headspace_tui.notifications.snooze import UNTIL_IT_CHANGES, Snoozes
from tests.unit.test_notify import ALL, LATER, START, agent, sent


class Wired:
    """A notifier and the snoozes as the app wires them: every report to both (snoozes first), z, and the one-second tick."""

    def __init__(self) -> None:
        self.notifier = Notifier(ALL, started=START)
        self.snoozes = Snoozes()

    def report(self, a, now: float):
        self.snoozes.observe(a)
        return self.notifier.observe(a, now)

    def snooze(self, a, until: float) -> None:
        assert self.snoozes.snooze(a, until) is not None
        self.notifier.snooze(a.key)

    def tick(self, a, now: float) -> None:
        if a.key in self.snoozes.expired(now):
            self.notifier.remind(a, now)


def test_only_a_wait_can_be_snoozed():
    snoozes = Snoozes()
    assert snoozes.snooze(agent(AgentState.WORKING), LATER + 60) is None
    assert snoozes.snooze(agent(AgentState.IDLE), LATER + 60) is None
    assert snoozes.snooze(agent(AgentState.PERMISSION, "p1"), LATER + 60) is not None
    assert len(snoozes) == 1


def test_a_snooze_lasts_while_its_wait_is_redrawn_or_read_half():
    snoozes = Snoozes()
    snoozes.snooze(agent(AgentState.PERMISSION, ""), UNTIL_IT_CHANGES)  # read from a hook before the screen had the menu
    for report in [agent(AgentState.PERMISSION, "p1"), agent(AgentState.PERMISSION, "p1"), agent(AgentState.UNKNOWN), agent(AgentState.PERMISSION, "")]:
        assert snoozes.observe(report) is False
        assert snoozes.get(report) is not None


def test_a_snooze_ends_with_its_wait_or_when_another_wait_begins():
    snoozes = Snoozes()
    snoozes.snooze(agent(AgentState.PERMISSION, "p1"), UNTIL_IT_CHANGES)
    assert snoozes.observe(agent(AgentState.PERMISSION, "p2")) is True  # another command to approve
    assert snoozes.get(agent(AgentState.PERMISSION, "p2")) is None
    snoozes.snooze(agent(AgentState.QUESTION, "q1"), UNTIL_IT_CHANGES)
    assert snoozes.observe(agent(AgentState.QUESTION, "q2")) is False  # a question's next page is the same wait
    assert snoozes.observe(agent(AgentState.WORKING)) is True
    assert not snoozes


def test_a_snooze_runs_out_at_its_time_and_goes_with_its_agent():
    snoozes = Snoozes()
    snoozes.snooze(agent(AgentState.INPUT, key="a"), LATER + 300)
    snoozes.snooze(agent(AgentState.INPUT, key="b"), UNTIL_IT_CHANGES)
    snoozes.snooze(agent(AgentState.INPUT, key="c"), LATER + 60)
    assert snoozes.expired(LATER + 299) == ["c"]
    assert snoozes.expired(LATER + 300) == ["a"]
    assert snoozes.expired(LATER + 10**9) == []  # "until it changes" never runs out
    snoozes.forget("b")
    assert not snoozes


def test_snoozing_silences_the_wait_and_its_end_rings_again():
    w = Wired()
    w.report(agent(AgentState.WORKING), LATER)
    assert w.report(agent(AgentState.PERMISSION, "p1"), LATER + 1) is not None
    w.snooze(agent(AgentState.PERMISSION, "p1"), LATER + 1.1 + 300)  # snoozed before it was said
    assert sent(w.notifier, LATER + 2) is None
    for i in range(10):
        w.report(agent(AgentState.PERMISSION, "p1"), LATER + 10 + i)
        w.tick(agent(AgentState.PERMISSION, "p1"), LATER + 10 + i)
    assert w.notifier.next_due() is None  # nothing to say while it is snoozed
    w.tick(agent(AgentState.PERMISSION, "p1"), LATER + 302)
    due = w.notifier.next_due()
    assert due is not None and due <= LATER + 302 + GATHER + 0.001
    note = w.notifier.due(due)
    assert note is not None and note.alerts[0].state is AgentState.PERMISSION and "touch a" in note.body


def test_a_new_wait_rings_at_once_though_the_last_was_snoozed():
    w = Wired()
    w.report(agent(AgentState.WORKING), LATER)
    w.report(agent(AgentState.PERMISSION, "p1"), LATER + 1)
    assert sent(w.notifier, LATER + 1) is not None
    w.snooze(agent(AgentState.PERMISSION, "p1"), UNTIL_IT_CHANGES)
    assert w.report(agent(AgentState.PERMISSION, "p2", detail="rm b"), LATER + 20) is not None
    note = sent(w.notifier, LATER + 20)
    assert note is not None and "rm b" in note.body


def test_a_snooze_that_ends_after_its_wait_ended_says_nothing():
    w = Wired()
    w.report(agent(AgentState.WORKING), LATER)
    w.report(agent(AgentState.INPUT), LATER + 1)
    sent(w.notifier, LATER + 1)
    w.snooze(agent(AgentState.INPUT), LATER + 60)
    w.report(agent(AgentState.WORKING), LATER + 30)  # answered in the pane meanwhile
    w.tick(agent(AgentState.WORKING), LATER + 61)
    assert w.notifier.next_due() is None


def test_remind_only_for_a_state_the_user_wants_announced():
    n = Notifier(("permission",), started=START)
    assert n.remind(agent(AgentState.QUESTION), LATER) is None
    assert n.remind(agent(AgentState.WORKING), LATER) is None
    assert n.remind(agent(AgentState.PERMISSION, "p1"), LATER) is not None
