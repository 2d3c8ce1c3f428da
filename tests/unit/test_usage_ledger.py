"""What agents spent per day: each agent's growth written to the event log once, summed by day, the same after a restart."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

from headspace_tui.model import Agent
from headspace_tui.service.records.event_writer import EventWriter
from headspace_tui.service.records.usage_ledger import KIND, UsageLedger, added, by_day
from headspace_tui.state.eventlog import EventLog, StoredEvent
from headspace_tui.usage.model import Spent, Tokens, Usage

NOON = dt.datetime(2026, 11, 28, 12, 0).timestamp()
MODEL = "claude-sonnet-4-5"


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def agent(usage: Usage | None, target: str = "w:0.0") -> Agent:
    return Agent(pane_id="%1", target=target, session="w", cwd="/home/me/repo", usage=usage)


def usage(i: int, o: int, cost: float | None) -> Usage:
    return Usage(MODEL, Tokens(i, o, 0, 0), i, 200_000, cost_usd=cost)


def ledger(log: EventLog | None, clock: Clock) -> UsageLedger:
    return UsageLedger(log, EventWriter(log, clock, lambda events: None), clock)


def test_what_is_added_is_the_growth_and_totals_that_went_down_are_a_new_conversation():
    assert added(None, usage(100, 10, 0.5)) == Spent(Tokens(100, 10, 0, 0), 0.5, 0)
    assert added((Tokens(100, 10, 0, 0), 0.5, ""), usage(150, 30, 0.75)) == Spent(Tokens(50, 20, 0, 0), 0.25, 0)
    assert added((Tokens(100, 10, 0, 0), 0.5, ""), usage(20, 5, 0.1)) == Spent(Tokens(20, 5, 0, 0), 0.1, 0)  # /new: all of it
    assert added((Tokens(100, 10, 0, 0), None, ""), usage(150, 30, None)) == Spent(Tokens(50, 20, 0, 0), 0.0, 70)  # no price: said as unpriced
    # Another conversation (Claude's /clear): all of it is new, even where each count is bigger than the last one's.
    assert added((Tokens(100, 10, 0, 0), 0.5, "a"), replace(usage(150, 30, 0.75), conversation="b")) == Spent(Tokens(150, 30, 0, 0), 0.75, 0)
    assert added((Tokens(100, 10, 0, 0), 0.5, "a"), replace(usage(150, 30, 0.75), conversation="a")) == Spent(Tokens(50, 20, 0, 0), 0.25, 0)


def test_clear_starts_the_count_again_and_the_day_keeps_both_after_a_restart_too(tmp_path):
    clock = Clock(NOON)
    with EventLog(tmp_path / "events.db") as log:
        first = ledger(log, clock)
        first.used("k1", agent(replace(usage(1000, 100, 1.0), conversation="a")))
        first.used("k1", agent(replace(usage(0, 0, None), conversation="b")))  # /clear: the new conversation, nothing yet
        first.used("k1", agent(replace(usage(1200, 150, 1.5), conversation="b")))  # bigger than the first's: all of it still new
        assert first.today(clock.now).cost_usd == 2.5 and [e.payload["conversation"] for e in log.query(kind=KIND)] == ["a", "b"]
        again = ledger(log, clock)  # a restart reads the last conversation's totals back: nothing counted twice
        again.used("k1", agent(replace(usage(1200, 150, 1.5), conversation="b")))
        assert again.today(clock.now).cost_usd == 2.5 and log.count() == 2


def test_the_days_spending_is_this_tmux_servers_and_the_remote_hosts_not_another_local_servers(tmp_path):
    clock = Clock(NOON)
    with EventLog(tmp_path / "events.db") as log:
        mine, other = ledger(log, clock), ledger(log, clock)
        for one, server in ((mine, "L:work"), (other, "L:play")):
            one.local, one.server = "local", server
        mine.used("local|L:work|%1|10@t", agent(usage(100, 10, 0.5)))
        mine.used("box|L:default|%2|11@t", agent(usage(100, 10, 0.25), target="b:0.0"))  # a remote host's agent, watched from this server
        other.used("local|L:play|%1|12@t", agent(usage(100, 10, 4.0)))
        assert ledger(log, clock).today(clock.now).cost_usd == 4.75  # nothing set: every server's, as before
        fresh = ledger(log, clock)
        fresh.local, fresh.server = "local", "L:work"
        assert fresh.today(clock.now).cost_usd == 0.75 and [r.spent.cost_usd for r in fresh.days(clock.now, 1)] == [0.5, 0.25]


def test_each_growth_is_one_event_the_days_sum_them_and_a_restart_counts_nothing_twice(tmp_path):
    clock = Clock(NOON)
    with EventLog(tmp_path / "events.db") as log:
        first = ledger(log, clock)
        first.used("k1", agent(usage(100, 10, 0.5)))
        first.used("k1", agent(usage(100, 10, 0.5)))  # the same totals: nothing
        clock.now += 60
        first.used("k1", agent(usage(300, 40, 1.25)))
        first.used("k2", agent(usage(50, 5, None), target="x:0.0"))
        first.used("k3", agent(None))  # nothing counted yet: nothing written
        assert [e.payload["spent"] for e in log.query(kind=KIND)] == [[100, 10, 0, 0], [200, 30, 0, 0], [50, 5, 0, 0]]
        assert first.today(clock.now) == Spent(Tokens(350, 45, 0, 0), 1.25, 55)

        # A restart: the transcripts are read again from the start, the same totals come back; then one more reply.
        clock.now += 3600
        again = ledger(log, clock)
        assert again.today(clock.now) == Spent(Tokens(350, 45, 0, 0), 1.25, 55)
        again.used("k1", agent(usage(300, 40, 1.25)))
        again.used("k1", agent(usage(400, 50, 1.5)))
        assert again.today(clock.now).cost_usd == 1.5 and log.count() == 4

        # The next day: today starts from nothing, and the days view has both.
        clock.now = NOON + 86_400
        assert again.today(clock.now) == Spent()
        again.used("k1", agent(usage(500, 60, 1.75)))
        rows = again.days(clock.now, 7)
        assert [(r.day, r.agent, r.spent.cost_usd) for r in rows] == [
            ("2026-11-29", "w:0.0 (repo)", 0.25),
            ("2026-11-28", "w:0.0 (repo)", 1.5),
            ("2026-11-28", "x:0.0 (repo)", 0.0),
        ]
        assert again.days(clock.now, 1) == rows[:1]


def test_an_edited_log_row_is_skipped_not_believed():
    good = StoredEvent(1, NOON, "k", KIND, {"name": "w:0.0", "spent": [1, 2, 3, 4], "spent_usd": 0.5, "unpriced": 0})
    bad = [
        StoredEvent(2, NOON, "k", KIND, {"spent": [1, 2, 3], "spent_usd": 0.5, "unpriced": 0}),
        StoredEvent(3, NOON, "k", KIND, {"spent": [1, 2, 3, -4], "spent_usd": 0.5, "unpriced": 0}),
        StoredEvent(4, NOON, "k", KIND, {"spent": [1, 2, 3, 4], "spent_usd": "lots", "unpriced": 0}),
        StoredEvent(5, NOON, "k", KIND, {"value": json.dumps([1])}),
    ]
    (row,) = by_day([good, *bad])
    assert row.spent == Spent(Tokens(1, 2, 3, 4), 0.5, 0) and row.agent == "w:0.0"


def test_without_an_event_log_the_run_still_counts_its_own_day():
    clock = Clock(NOON)
    memory = ledger(None, clock)
    memory.used("k1", agent(usage(100, 10, 0.5)))
    memory.used("k1", agent(usage(200, 20, 1.0)))
    assert memory.today(clock.now).cost_usd == 1.0
    assert [r.spent.cost_usd for r in memory.days(clock.now, 14)] == [1.0]


def test_an_agent_that_ended_is_let_go_and_counts_nothing_twice_if_it_comes_back(tmp_path):
    """Under churn thousands of agents come and go: the ledger keeps no totals for those gone, and the log still knows them."""
    clock = Clock(NOON)
    with EventLog(tmp_path / "events.db") as log:
        kept = ledger(log, clock)
        kept.used("k1", agent(usage(100, 10, 0.5)))
        kept.forget("k1")
        assert kept._last == {}
        kept.used("k1", agent(usage(100, 10, 0.5)))  # the same agent's totals read again: the log says they were counted
        assert log.count() == 1 and kept.today(clock.now).cost_usd == 0.5
