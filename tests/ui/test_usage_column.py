"""The table's Ctx column and the why screen's usage lines: shown when known, coloured by how full, hidden by key or config."""

from __future__ import annotations

import asyncio
import dataclasses

from headspace_tui.app.screens.why import WhyScreen
from headspace_tui.shared.config import Config, parse_config
from headspace_tui.usage.model import Tokens, Usage
from tests.ui.apps import demo_app, screen_open, wait_until
from tests.ui.test_diff_view import screen_text


def usage(context: int, window: int = 200_000) -> Usage:
    return Usage("claude-sonnet-4-5", Tokens(1400, 400, 12000, 800), context, window, 0.0123)


def test_the_ctx_column_shows_each_known_context_coloured_by_how_full_and_hides_by_key_and_by_config():
    async def scenario(config: Config) -> None:
        app = demo_app(config=config)
        async with app.run_test(size=(160, 40)) as pilot:
            await app.snapshot_loader(pilot)
            table = app.table
            assert "context" not in table.columns  # nothing known of any agent's context: the table reads as before
            agents = sorted(table.agents.values(), key=lambda a: a.target)[:3]
            for agent, tokens in zip(agents, (20_000, 162_000, 190_000), strict=True):
                table.upsert(dataclasses.replace(agent, usage=usage(tokens)))
            await pilot.pause()
            if not config.context_column:
                assert "context" not in table.columns
                await pilot.press("percent_sign")
                await pilot.pause()
            assert "context" in table.columns
            cells = {a.pane_id: table.get_row(a.pane_id)[list(table.columns).index("context")] for a in agents}
            assert [cells[a.pane_id].plain for a in agents] == ["10%", "81%", "95%"]
            assert [str(cells[a.pane_id].style) for a in agents] == ["dim", "yellow", "bold red"]
            await pilot.press("percent_sign")
            await pilot.pause()
            assert "context" not in table.columns and "95%" not in screen_text(app)

    asyncio.run(scenario(Config(theme="headspace-dark")))
    hidden = parse_config({"context_column": False, "theme": "headspace-dark"})
    assert hidden.context_column is False
    asyncio.run(scenario(hidden))


def test_percent_with_no_context_known_says_why_instead_of_nothing():
    async def scenario() -> None:
        app = demo_app(config=Config(theme="headspace-dark"))
        async with app.run_test(size=(160, 40)) as pilot:
            await app.snapshot_loader(pilot)
            table = app.table
            assert table.show_context and "context" not in table.columns
            await pilot.press("percent_sign")
            await wait_until(pilot, lambda: any("no agent's context share is known yet" in str(n.message) for n in app._notifications), "the reason said")
            assert table.show_context and "context" not in table.columns  # not turned off by a press meant to show it
            agent = table.agents[table.selected_pane_id]
            table.upsert(dataclasses.replace(agent, usage=usage(20_000)))
            await wait_until(pilot, lambda: "context" in table.columns, "the column, once a share is known")

    asyncio.run(scenario())


def test_e_says_the_context_the_tokens_and_the_estimate():
    async def scenario() -> None:
        app = demo_app(config=Config(theme="headspace-dark"))
        async with app.run_test(size=(160, 48)) as pilot:
            await app.snapshot_loader(pilot)
            table = app.table
            agent = table.agents[table.selected_pane_id]
            table.upsert(dataclasses.replace(agent, usage=usage(7200)))
            await pilot.pause()
            await pilot.press("e")
            await wait_until(pilot, lambda: screen_open(app, WhyScreen), "the why screen")
            text = screen_text(app)
            assert "Context: 7,200 of 200,000 tokens (3%) · claude-sonnet-4-5" in text
            assert "Tokens: 1,400 in · 400 out · 12,000 cache read · 800 cache write" in text
            assert "Cost: $0.01 est." in text

    asyncio.run(scenario())


def test_the_palette_sorts_by_context_and_by_cost_with_the_unknown_last():
    async def scenario() -> None:
        app = demo_app(config=Config(theme="headspace-dark"))
        async with app.run_test(size=(160, 40)) as pilot:
            await app.snapshot_loader(pilot)
            table = app.table
            agents = sorted(table.agents.values(), key=lambda a: a.target)
            assert len(agents) >= 4
            known = {agents[0].pane_id: (20_000, 0.5), agents[1].pane_id: (190_000, 0.1), agents[2].pane_id: (90_000, 2.0)}
            for agent in agents[:3]:
                tokens, cost = known[agent.pane_id]
                table.upsert(dataclasses.replace(agent, usage=dataclasses.replace(usage(tokens), cost_usd=cost)))
            await pilot.pause()
            table.set_sort("context", False)
            await pilot.pause()
            assert table.order[:3] == [agents[1].pane_id, agents[2].pane_id, agents[0].pane_id]
            assert set(table.order[3:]) == {a.pane_id for a in agents[3:]}, "no context known: after the rest"
            table.set_sort("cost", False)
            await pilot.pause()
            assert table.order[:3] == [agents[2].pane_id, agents[0].pane_id, agents[1].pane_id]

    asyncio.run(scenario())
