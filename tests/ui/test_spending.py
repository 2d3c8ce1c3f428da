"""The header's cost today and the palette's spending by day, from the event log an earlier run wrote."""

from __future__ import annotations

import asyncio
import re

from headspace_tui.app.screens.spending import SpendingScreen
from headspace_tui.model import Agent
from headspace_tui.service.records.event_writer import EventWriter
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.records.usage_ledger import UsageLedger
from headspace_tui.state.eventlog import EventLog
from headspace_tui.usage.model import Tokens, Usage
from tests.ui.apps import NOW, demo_app, screen_open, wait_until
from tests.ui.test_diff_view import screen_text
from tests.ui.test_papercuts import highlighted


def earlier_run(path) -> None:
    """Yesterday and this morning, as an earlier headspace logged them: two agents' replies."""
    with EventLog(path) as log:
        for at, grown in ((NOW - 86_400, 1), (NOW - 600, 3)):
            ledger = UsageLedger(log, EventWriter(log, lambda at=at: at, lambda events: None), lambda at=at: at)
            api = Usage("claude-sonnet-4-5", Tokens(1000 * grown, 100 * grown, 0, 0), 10, 200_000, cost_usd=0.5 * grown)
            ledger.used("k-api", Agent(pane_id="%0", target="api:0.0", session="api", cwd="/src/api", usage=api))
            web = Usage("mystery-model", Tokens(700 * grown, 7, 0, 0), 10, 0)
            ledger.used("k-web", Agent(pane_id="%1", target="web:0.0", session="web", cwd="/src/web", usage=web))


def test_the_header_says_todays_cost_and_the_palette_lists_each_agents_days(tmp_path):
    path = tmp_path / "events.db"
    earlier_run(path)

    async def scenario() -> None:
        app = demo_app(journal=Journal(EventLog(path), clock=lambda: NOW))
        async with app.run_test(size=(160, 40)) as pilot:
            await app.snapshot_loader(pilot)
            # Today: api grew from $0.50 to $1.50 this morning; web's model has no price (not added, not guessed).
            await wait_until(pilot, lambda: "spent today: $1.00 est." in screen_text(app), "today's estimate in the header")
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"spending")
            await wait_until(pilot, lambda: highlighted(app).startswith("Spending by day"), "the palette to offer the spending")
            await pilot.press("enter")
            await wait_until(pilot, lambda: screen_open(app, SpendingScreen), "the spending screen")
            text = screen_text(app)
            for line in ("all agents", "api:0.0 (api)", "web:0.0 (web)", "$0.50 est.", "$1.00 est.", "(+1,400 tokens unpriced)"):
                assert line in text, (line, text)
            days = re.findall(r"\b\d{4}-\d{2}-\d{2}\b", text)
            assert len(days) == 2 and days[0] > days[1], days  # newest first
            await pilot.press("escape")
            await wait_until(pilot, lambda: not screen_open(app, SpendingScreen), "the screen closed")

    asyncio.run(scenario())


def test_the_first_key_after_a_while_says_what_each_agent_did_meanwhile_in_a_toast(tmp_path):
    """Come back to the terminal (or a warm popup) after an hour: the first key does what it does, and a toast says what ran without you."""
    import time as _time

    from headspace_tui.service.records.command_tracker import who

    path = tmp_path / "events.db"
    EventLog(path).close()

    async def scenario() -> None:
        app = demo_app(journal=Journal(EventLog(path), clock=lambda: NOW))
        async with app.run_test(size=(160, 40)) as pilot:
            await app.snapshot_loader(pilot)
            agent = app.service.agents()[0]
            with EventLog(path) as log:  # a turn it finished half an hour ago, as the service logged it
                log.write_many([{"kind": "agent_state", "agent": who(agent), "ts": NOW - 1800, "from": "working", "to": "idle", "since": NOW - 1800}])
            app.screen._last_key_wall = NOW - 3600  # the last key an hour ago
            await pilot.press("j")
            toasts = lambda: [note for note in getattr(app, "_notifications", ()) if note.title.startswith("While you were away")]  # noqa: E731
            await wait_until(pilot, toasts, "the toast")
            (toast,) = toasts()
            assert toast.title == "While you were away (since " + _time.strftime("%H:%M", _time.localtime(NOW - 3600)) + ")", toast.title
            assert toast.message == f"{agent.target} (now {agent.state.value}): finished a turn", toast.message
            await pilot.press("k")  # a key a moment later says nothing more
            assert app.screen._last_key_wall == NOW

    asyncio.run(scenario())
