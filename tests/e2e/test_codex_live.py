"""Codex CLI, live: the pinned binary against the scripted Responses API in a private tmux server.

``headspace status --json`` lists each Codex pane with ``"agent": "codex"``
and its state (idle, permission, input, error); ``headspace send --approve``
answers Codex's approval dialog with Codex's own key and the scripted API
receives the command's output; ``--deny`` refuses the next one with Esc.  Four sessions start at once (each with its
own CODEX_HOME, API and daemon) to keep the file well under a minute.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import pytest

from headspace_tui.model import AgentState
from tests.harness import cli
from tests.harness import codex_api as api
from tests.harness.codex_agent import APPROVAL, CodexSession, find_codex
from tests.harness.npm_binary import require
from tests.harness.tmux import PrivateTmux, temp_server
from tests.harness.wait import poll
from tests.ui.apps import make_app, press_as_a_person, readable, wait_until

pytestmark = pytest.mark.e2e

QUESTION = "I found two ways to fix the flaky test. Should I also update the snapshot files, or leave them alone?"


@pytest.fixture(scope="module")
def codex_binary() -> str:
    """The pinned Codex CLI; locally a missing one skips, under CI=true it fails."""
    return require(find_codex, "Codex CLI")


@pytest.fixture
def server() -> Iterator[PrivateTmux]:
    with temp_server("hs-cx-tmux-") as (_root, tmux):
        yield tmux


def headspace(tmux: PrivateTmux, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return cli.headspace(*args, "-L", tmux.name, check=check)


def _rows(tmux: PrivateTmux) -> dict[str, dict]:
    return {row["target"]: row for row in map(json.loads, headspace(tmux, "status", "--json").stdout.splitlines())}


def test_codex_reads_idle_permission_input_and_error_and_send_approves_and_refuses_its_commands(codex_binary, server, tmp_path: Path):
    scripts = {
        "idle": [],
        "perm": [
            api.command("touch x && echo approved-ok", justification="Do you want me to create the marker file x?"),
            api.text("Created x."),
            api.command("rm -f x", justification="Do you want me to remove x?"),
        ],
        "ask": [api.text(QUESTION)],
        "fail": [api.fail(400, "The scripted request was rejected.", times=None)],
    }
    with ExitStack() as stack:
        apis = {name: stack.enter_context(api.FakeResponsesAPI(script)) for name, script in scripts.items()}
        sessions = {name: CodexSession(server, apis[name], codex_binary, tmp_path / name, name=name) for name in scripts}
        for session in sessions.values():
            stack.callback(session.close)

        def drive(name: str) -> None:
            session = sessions[name]
            session.launch()
            if name == "perm":
                session.submit("create the marker file")
                session.wait_for(APPROVAL, what="the approval dialog")
            elif name == "ask":
                session.submit("fix the flaky test")
                session.wait_for(lambda s: "leave them alone?" in s and "Worked for" in s, what="the question and the turn's end")
            elif name == "fail":
                session.submit("break the build")
                session.wait_for(lambda s: "■ " in s and "esc to interrupt" not in s, what="the error")

        with ThreadPoolExecutor(max_workers=len(sessions)) as pool:
            list(pool.map(drive, sessions))

        rows = _rows(server)
        assert set(rows) == {f"{name}:0.0" for name in scripts}
        assert {row["agent"] for row in rows.values()} == {"codex"}
        assert rows["idle:0.0"]["state"] == "idle"
        perm = rows["perm:0.0"]
        assert perm["state"] == "permission" and perm["tool"] == "exec_command" and perm["detail"] == "touch x && echo approved-ok"
        assert perm["options"][0] == "Yes, proceed"
        assert rows["ask:0.0"]["state"] == "input" and rows["ask:0.0"]["question"] == QUESTION
        assert rows["fail:0.0"]["state"] == "error" and "rejected" in rows["fail:0.0"]["error"]

        done = headspace(server, "send", "perm:0.0", "--approve")
        assert "Yes, proceed" in done.stdout, done.stdout
        request = apis["perm"].wait_for(lambda r: bool(r.tool_outputs()), timeout=30)
        assert "approved-ok" in request.tool_outputs()[0]["output"]
        assert (tmp_path / "perm" / "work" / "x").exists()
        sessions["perm"].wait_for("Created x.", what="the reply after the command")
        poll(lambda: _rows(server)["perm:0.0"]["state"], lambda state: state == "idle", timeout=20)

        # Refusing takes Codex's own key for "No, …" (Esc): nothing runs, nothing is sent, the turn ends.
        sessions["perm"].submit("remove the marker file")
        sessions["perm"].wait_for(APPROVAL, what="the second approval dialog")
        turns = len(apis["perm"].turn_requests)
        denied = headspace(server, "send", "perm:0.0", "--deny")
        assert "Escape. No, and tell Codex what to do differently: sent" in denied.stdout, denied.stdout
        sessions["perm"].wait_for("You canceled the request to run rm -f x", what="the refusal")
        poll(lambda: _rows(server)["perm:0.0"]["state"], lambda state: state == "idle", timeout=20)
        assert len(apis["perm"].turn_requests) == turns and (tmp_path / "perm" / "work" / "x").exists()

        refused = headspace(server, "send", "idle:0.0", "--approve", check=False)
        assert refused.returncode == 1 and refused.stderr.count("\n") == 1
        daemons = [pid for session in sessions.values() for pid in session.daemon_processes()]
    # Every session's daemon, left running by Codex, was ended with it.
    assert daemons and [pid for pid in daemons if _running(pid)] == []


def _running(pid: int) -> bool:
    """The process exists and is not a zombie waiting for its (re)parent to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_y_in_the_table_approves_codexs_command_with_codexs_own_key(codex_binary, server, tmp_path: Path):
    script = [api.command("touch y.txt && echo table-approved", justification="Do you want me to create y.txt?"), api.text("Created y.txt.")]
    with api.FakeResponsesAPI(script) as fake:
        session = CodexSession(server, fake, codex_binary, tmp_path / "codex", name="tab")
        try:
            session.launch()
            app = make_app(server.name, tmp_path)

            async def scenario() -> None:
                async with app.run_test(size=(160, 48)) as pilot:
                    table = app.table
                    await wait_until(pilot, lambda: session.pane_id in table.agents, "the Codex row", timeout=15)
                    await asyncio.to_thread(session.submit, "create y.txt")
                    await wait_until(pilot, lambda: table.agents[session.pane_id].state is AgentState.PERMISSION, "permission", timeout=30)
                    agent = table.agents[session.pane_id]
                    assert agent.observation.tool == "exec_command" and agent.observation.prompt is not None
                    assert agent.observation.prompt.detail == "touch y.txt && echo table-approved"
                    await wait_until(pilot, lambda: readable(app, session.pane_id), "a readable prompt")
                    table.select(session.pane_id)
                    await wait_until(pilot, lambda: (a := app.selected_agent()) is not None and a.pane_id == session.pane_id, "the cursor on it")
                    # Again if the app says to (a dialog read anew just before the key): as a person would.
                    await press_as_a_person(pilot, app, session.pane_id, "y", lambda: any(r.tool_outputs() for r in fake.requests), "the command's output sent to the API", timeout=30)
                    request = await asyncio.to_thread(fake.wait_for, lambda r: bool(r.tool_outputs()), 30)
                    assert "table-approved" in request.tool_outputs()[0]["output"]
                    await wait_until(pilot, lambda: table.agents[session.pane_id].state is AgentState.IDLE, "idle after the approval", timeout=30)

            asyncio.run(scenario())
            assert (session.workdir / "y.txt").exists()
        finally:
            session.close()


def test_send_text_answers_codexs_question_and_the_reply_reaches_the_api(codex_binary, server, tmp_path: Path):
    with api.FakeResponsesAPI([api.text(QUESTION), api.text("Updated them.")]) as fake:
        session = CodexSession(server, fake, codex_binary, tmp_path / "codex", name="reply")
        try:
            session.launch()
            session.submit("fix the flaky test")
            session.wait_for(lambda s: "leave them alone?" in s and "Worked for" in s, what="the question and the turn's end")
            assert _rows(server)["reply:0.0"]["state"] == "input"
            sent = headspace(server, "send", "reply:0.0", "--text", "update them too")
            assert "submitted" in sent.stdout, sent.stdout
            fake.wait_for(lambda r: r.user_text() == "update them too", timeout=10)
            session.wait_for("Updated them.", what="the reply to the answer")
        finally:
            session.close()
