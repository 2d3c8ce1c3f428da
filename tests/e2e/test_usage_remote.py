"""What an agent on an SSH host costs: its transcript read there by the probe, its numbers (not the file) sent here.

A real sshd on 127.0.0.1 (tests/harness/sshd.py) and a live Claude there
whose scripted API reports known counts; the app is the client of a service
that watches only that host, as the user's TUI is.  The row holds the same
sums, context and estimate as a local agent's would.
"""

from __future__ import annotations

import asyncio

import pytest

from headspace_tui.model import AgentState
from headspace_tui.usage.model import Tokens
from headspace_tui.usage.prices import estimate
from tests.e2e.test_remote import box, private_tmux, remote_app  # noqa: F401 (the host's fixtures)
from tests.e2e.test_usage_live import MODEL
from tests.harness import codex_api
from tests.harness import fake_api as api
from tests.harness.codex_agent import CodexSession, find_codex
from tests.harness.npm_binary import require
from tests.harness.scenarios import TURN_DONE
from tests.ui.apps import live_row
from tests.ui.test_app_live import select_agent, wait_until

pytestmark = pytest.mark.e2e


def test_an_agent_on_a_host_over_ssh_has_its_tokens_context_and_estimate_on_its_row(claude_session, fake_api, private_tmux, box, tmp_path):  # noqa: F811
    first, second = api.tokens(900, 50, cache_read=3000, cache_write=400), api.tokens(120, 80, cache_read=4100)
    session = claude_session([api.text("One.", usage=first), api.text("Two.", usage=second)], name="far", extra_args=["--model", MODEL])
    address = session.pane_id + "@box"
    sums = Tokens(1020, 130, 7100, 400)

    async def scenario() -> None:
        app = remote_app(box, private_tmux.name, tmp_path)
        async with app.run_test(size=(160, 40)) as pilot:
            await select_agent(pilot, app, address, AgentState.IDLE)
            for prompt, said in (("the first part", "One."), ("the second part", "Two.")):
                await asyncio.to_thread(session.submit, prompt)
                await asyncio.to_thread(session.wait_for, lambda s, said=said: said in s and TURN_DONE.search(s) is not None, timeout=40)
            await wait_until(pilot, lambda: (u := live_row(app, address).usage) is not None and u.tokens == sums, "the sums on the row", 30)
            usage = live_row(app, address).usage
            assert usage is not None
            assert usage.model == MODEL and usage.context_tokens == 120 + 4100 and usage.context_pct == 2
            assert usage.cost_usd == estimate(MODEL, sums)

    asyncio.run(scenario())


def test_a_codex_agent_on_a_host_over_ssh_has_its_rollouts_sums_on_its_row(private_tmux, box, tmp_path):  # noqa: F811
    """Codex keeps its own record (its rollout file): the probe finds and reads it there and sends the numbers."""
    binary = require(find_codex, "Codex CLI")
    one, two = codex_api.usage(1000, 50, cached=200), codex_api.usage(1500, 60, cached=1000, reasoning=9)
    sums = Tokens(800 + 500, 110, 1200, 0)
    with codex_api.FakeResponsesAPI([codex_api.text("First far.", usage=one), codex_api.text("Second far.", usage=two)]) as fake:
        session = CodexSession(private_tmux, fake, binary, tmp_path / "cx", name="cx")
        try:
            session.launch()
            address = session.pane_id + "@box"

            async def scenario() -> None:
                app = remote_app(box, private_tmux.name, tmp_path)
                async with app.run_test(size=(160, 40)) as pilot:
                    await select_agent(pilot, app, address, AgentState.IDLE)
                    for prompt, said in (("part one", "First far."), ("part two", "Second far.")):
                        await asyncio.to_thread(session.submit, prompt)
                        await asyncio.to_thread(session.wait_for, said, timeout=40)
                    await wait_until(pilot, lambda: (u := live_row(app, address).usage) is not None and u.tokens == sums, "the sums on the row", 30)
                    usage = live_row(app, address).usage
                    assert usage is not None and usage.model == "gpt-5.1-codex"
                    assert usage.context_tokens == 1560 - 9 and usage.context_window > 0  # the window Codex named, sent from there
                    assert usage.cost_usd == estimate("gpt-5.1-codex", sums)

            asyncio.run(scenario())
        finally:
            session.close()
