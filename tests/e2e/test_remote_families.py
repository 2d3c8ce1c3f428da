"""Another family's agents on a remote host: Gemini CLI behind a real sshd, read and answered through the link.

The same far side as tests/e2e/test_remote.py (a real sshd on 127.0.0.1, the
sessions' private tmux in the login's ``TMUX_TMPDIR``): two Gemini CLI
sessions wait at their approval dialogs there.  ``status --json`` must list
them as ``gemini`` on host ``box``; ``y`` in the table answers one, and
``send --host box`` the other, which finds the pane's agent family from the
host's own process table (through the probe); what counts is the command's
result at each session's scripted API.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from headspace_tui.model import AgentState
from tests.e2e.test_remote import box, config_file, headspace, private_tmux, remote_app  # noqa: F401 - box and private_tmux are fixtures
from tests.harness import gemini_api as api
from tests.harness.gemini_agent import GeminiSession, require_gemini
from tests.ui.apps import press_as_a_person
from tests.ui.test_app_live import select_agent, wait_until

pytestmark = pytest.mark.e2e


def _ran(fake: api.FakeGeminiAPI) -> bool:
    return any(r.get("name") == "run_shell_command" for req in fake.requests for r in req.function_responses())


def test_gemini_on_a_remote_host_is_listed_and_answered_from_the_table_and_by_send(private_tmux, box, tmp_path: Path):  # noqa: F811 - pytest fixtures
    binary = require_gemini()
    sessions: list[tuple[GeminiSession, api.FakeGeminiAPI]] = []
    try:
        for name, touched in (("alpha", "a.txt"), ("beta", "b.txt")):
            fake = api.FakeGeminiAPI((api.shell(f"touch {touched}", f"Create {touched}"), api.text("Made it."))).start()
            session = GeminiSession(private_tmux, fake, binary, tmp_path / name, name=name, width=100, height=30)
            sessions.append((session, fake))
            session.launch(wait_ready=False)
        for session, _ in sessions:
            session.wait_ready()
            session.submit(f"make the file for {session.name}")
        for session, _ in sessions:
            session.wait_for("Allow execution")
        (alpha, alpha_api), (beta, beta_api) = sessions
        config = config_file(tmp_path, box, private_tmux.name)

        status = headspace("--config", str(config), "status", "--json", "--no-local")
        assert status.returncode == 0, status.stderr
        rows = {row["target"]: row for row in map(json.loads, status.stdout.splitlines())}
        assert set(rows) == {"alpha:0.0", "beta:0.0"}
        for name, session in (("alpha", alpha), ("beta", beta)):
            row = rows[f"{name}:0.0"]
            assert (row["host"], row["agent"], row["state"], row["tool"]) == ("box", "gemini", "permission", "Shell")
            assert row["pane_id"] == session.pane_id

        async def approve_in_the_table() -> None:
            app = remote_app(box, private_tmux.name, tmp_path)
            async with app.run_test(size=(120, 40)) as pilot:
                address = alpha.pane_id + "@box"
                await select_agent(pilot, app, address, AgentState.PERMISSION)
                assert app.selected_agent().family == "gemini"
                ran = lambda r: any(f.get("name") == "run_shell_command" for f in r.function_responses())  # noqa: E731
                await press_as_a_person(pilot, app, address, "y", lambda: alpha_api.seen(ran), "alpha's command run", timeout=30)
                await wait_until(pilot, lambda: app.table.agents[address].state is not AgentState.PERMISSION, "alpha moved on", 30)
                assert app.table.agents[beta.pane_id + "@box"].state is AgentState.PERMISSION  # the other one untouched

        asyncio.run(approve_in_the_table())
        assert (alpha.workdir / "a.txt").exists() and not _ran(beta_api)

        sent = headspace("--config", str(config), "send", "--host", "box", beta.pane_id, "--approve")
        assert sent.returncode == 0, sent.stderr
        assert "Gemini moved on" in sent.stdout, sent.stdout
        beta_api.wait_for(lambda r: any(f.get("name") == "run_shell_command" for f in r.function_responses()), timeout=30)
        assert (beta.workdir / "b.txt").exists()
    finally:
        for session, fake in sessions:
            session.close()
            fake.close()
