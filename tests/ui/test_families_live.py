"""Agents of three families in one tmux server, in one table, answered from it with one key each.

A Claude Code at its prompt, a Gemini CLI and an opencode each at their
approval dialog, all real pinned binaries against their scripted APIs.  The
app must show which kind each row is (the Kind column appears once kinds
mix), find a kind by the filter, and answer each dialog with `y` through the
guarded keys in that agent's own key (Gemini's digit, opencode's Enter on
its selected "Allow once"); what counts is the tool result each scripted
API receives.  (Codex answered from the table: tests/e2e/test_codex_live.py.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from headspace_tui.app.widgets.agent_table import COLUMN_INDEX
from headspace_tui.model import AgentState
from tests.harness import gemini_api, opencode_api
from tests.harness.gemini_agent import GeminiSession, require_gemini
from tests.harness.opencode_agent import PERMISSION, OpencodeSession, require_opencode
from tests.ui.apps import make_app, press_as_a_person, wait_until
from tests.ui.test_app_live import select_agent

pytestmark = pytest.mark.e2e


def test_three_kinds_in_one_table_each_answered_with_y(claude_session, private_tmux, tmp_path: Path):
    gemini_bin, opencode_bin = require_gemini(), require_opencode()
    claude = claude_session([])
    gemini_fake = gemini_api.FakeGeminiAPI((gemini_api.shell("touch g.txt", "Create g"), gemini_api.text("Made g."))).start()
    gemini = GeminiSession(private_tmux, gemini_fake, gemini_bin, tmp_path / "gemini", name="gem", width=100, height=30)
    opencode_fake = opencode_api.OpenAICompatibleAPI().start()
    opencode = OpencodeSession(private_tmux, opencode_fake, opencode_bin, tmp_path / "opencode", name="oc", width=100, height=30)
    try:
        gemini.launch(wait_ready=False)
        opencode.launch(wait_ready=False)
        gemini.wait_ready()
        opencode.wait_ready()
        opencode_fake.extend(opencode_api.bash("touch o.txt && echo o-made", "Create o"), opencode_api.text("Made o."))
        gemini.submit("make g")
        opencode.submit("make o")
        gemini.wait_for("Allow execution")
        opencode.wait_for(PERMISSION, timeout=60, what="opencode's approval")  # its first request, on a busy machine, can take half a minute

        async def scenario():
            app = make_app(private_tmux.name, tmp_path, claude_home=claude.home)
            async with app.run_test(size=(120, 40)) as pilot:
                table = app.table
                await wait_until(pilot, lambda: {claude.pane_id, gemini.pane_id, opencode.pane_id} <= set(table.agents), "all three rows")
                kinds = {p: table.agents[p].family for p in (claude.pane_id, gemini.pane_id, opencode.pane_id)}
                assert kinds == {claude.pane_id: "claude", gemini.pane_id: "gemini", opencode.pane_id: "opencode"}
                await wait_until(pilot, lambda: "kind" in table._columns.keys, "the Kind column, kinds being mixed")
                shown = {p: table._cells[p][COLUMN_INDEX["kind"]].plain for p in kinds}
                assert shown == {claude.pane_id: "Claude", gemini.pane_id: "Gemini", opencode.pane_id: "opencode"}

                table.set_filter("gemini")
                await wait_until(pilot, lambda: table.order == [gemini.pane_id], "the filter to keep the Gemini row alone")
                table.set_filter("")
                await wait_until(pilot, lambda: len(table.order) == 3, "every row back")

                await select_agent(pilot, app, gemini.pane_id, AgentState.PERMISSION)
                ran = lambda r: any(f.get("name") == "run_shell_command" for f in r.function_responses())  # noqa: E731
                await press_as_a_person(pilot, app, gemini.pane_id, "y", lambda: gemini_fake.seen(ran), "Gemini's command run", timeout=30)
                done = await asyncio.to_thread(gemini_fake.wait_for, ran, 30)
                assert "Output" in json.dumps(done.function_responses())

                await select_agent(pilot, app, opencode.pane_id, AgentState.PERMISSION)
                made = lambda r: any("o-made" in t for t in r.tool_results())  # noqa: E731
                await press_as_a_person(pilot, app, opencode.pane_id, "y", lambda: opencode_fake.seen(made), "opencode's command run", timeout=30)
                await wait_until(pilot, lambda: table.agents[opencode.pane_id].state is not AgentState.PERMISSION, "opencode moved on")

        asyncio.run(scenario())
        assert (gemini.workdir / "g.txt").exists() and (opencode.workdir / "o.txt").exists()
    finally:
        gemini.close()
        opencode.close()
        gemini_fake.close()
        opencode_fake.close()
