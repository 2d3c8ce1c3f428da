"""Gemini CLI, the real pinned binary against the scripted Gemini API, read and answered by headspace.

Six Gemini CLI sessions share one private tmux server, each with its own
scripted API and HOME: one at its prompt, two at a shell-command approval,
one at its ``ask_user`` question, one whose reply asks a question in plain
text, one that gave up on an API error.  ``headspace status --json`` must
list each as ``gemini`` in its state; ``headspace send --approve`` must
answer one approval, ``--option 2`` the question (its digit) and ``--text``
the reply that asks, so that the scripted API receives the command's result,
the choice and the typed line, and
``--deny`` the other approval, so that its command never runs.  They start together so the whole file
stays well under a minute.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import gemini_api as api
from tests.harness.cli import headspace
from tests.harness.gemini_agent import PLACEHOLDER, GeminiSession, require_gemini
from tests.harness.record_gemini import BY_NAME, QUESTION_REPLY
from tests.harness.tmux import PrivateTmux
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def gemini_binary() -> str:
    """The pinned Gemini CLI; a missing one skips locally and fails under CI=true."""
    return require_gemini()


@pytest.fixture
def gemini(gemini_binary: str, private_tmux: PrivateTmux, tmp_path: Path) -> Iterator:
    """A factory: ``gemini(name, script)`` types ``gemini`` in a new pane with its own scripted API."""
    started: list[tuple[GeminiSession, api.FakeGeminiAPI]] = []

    def start(name: str, script: tuple[api.Step, ...] = ()) -> GeminiSession:
        fake = api.FakeGeminiAPI(script).start()
        session = GeminiSession(private_tmux, fake, gemini_binary, tmp_path / name, name=name, width=100, height=30)
        started.append((session, fake))
        session.launch(wait_ready=False)
        return session

    yield start
    for session, fake in started:
        session.close()
        fake.close()


def status(server: PrivateTmux) -> dict[str, dict]:
    rows = [json.loads(line) for line in headspace("status", "--json", "-L", server.name).stdout.splitlines()]
    return {row["pane_id"]: row for row in rows}


def test_gemini_agents_are_listed_in_their_states_and_an_approval_is_answered(gemini, private_tmux: PrivateTmux):
    idle = gemini("idle")
    asking = gemini("asking", (api.text(QUESTION_REPLY), api.text("One module it is.")))
    failing = gemini("failing", (api.fail(400, "API key not valid. Please pass a valid API key.", times=None),))
    approving = gemini("approving", (api.shell("touch x", "Create the file x"), api.text("Made x.")))
    choosing = gemini("choosing", (*BY_NAME["question"].script, api.text("SQLite it is.")))
    refusing = gemini("refusing", (api.shell("touch y", "Create the file y"),))
    for session in (idle, asking, failing, approving, choosing, refusing):
        session.wait_ready()

    asking.submit("how should I lay it out")
    failing.submit("check the key")
    approving.submit("make x")
    choosing.submit("pick a database")
    refusing.submit("make y")
    asking.wait_for(lambda s: "grammar.py" in s and PLACEHOLDER in s, what="the reply that asks")
    failing.wait_for("[API Error")
    approving.wait_for("Allow execution")
    choosing.wait_for("Enter a custom value")
    refusing.wait_for("Allow execution")

    def settled(rows: dict[str, dict]) -> bool:
        wanted = ((idle, "idle"), (asking, "input"), (failing, "error"), (approving, "permission"), (choosing, "question"), (refusing, "permission"))
        return all(rows.get(s.pane_id, {}).get("state") == state for s, state in wanted)

    rows = poll(lambda: status(private_tmux), settled, timeout=20)
    assert {row["agent"] for row in rows.values()} == {"gemini"}
    asked = rows[asking.pane_id]
    assert asked["question"] == QUESTION_REPLY
    assert "API key not valid" in rows[failing.pane_id]["error"]
    permission = rows[approving.pane_id]
    assert permission["tool"] == "Shell" and permission["detail"] == "touch x"
    assert permission["options"] == ["Allow once", "Allow for this session", "No, suggest changes (esc)"]

    assert rows[choosing.pane_id]["question"] == "Which database should we use?"
    assert rows[choosing.pane_id]["options"] == ["Postgres", "SQLite", "Enter a custom value"]

    # A typed reply at its input box: Enter only once the box shows the text (Gemini reads a fast
    # Enter as part of a paste and puts a newline in the box), then the line reaches the API.
    headspace("send", asking.pane_id, "--text", "keep it in one module please", "-L", private_tmux.name)
    replied = asking.api.wait_for(lambda req: "keep it in one module please" in req.user_text(), timeout=20)
    assert "keep it in one module please" in replied.user_text()

    headspace("send", choosing.pane_id, "--option", "2", "-L", private_tmux.name)
    picked = choosing.api.wait_for(lambda req: any(r.get("name") == "ask_user" for r in req.function_responses()), timeout=20)
    assert "SQLite" in json.dumps(picked.function_responses())

    # "No, suggest changes (esc)", found by its label: Gemini cancels the turn, the command never runs.
    headspace("send", refusing.pane_id, "--deny", "-L", private_tmux.name)
    refusing.wait_for(lambda s: "Request cancelled." in s and PLACEHOLDER in s, what="the refused command cancelled")
    assert not (refusing.workdir / "y").exists()

    headspace("send", approving.pane_id, "--approve", "-L", private_tmux.name)
    answered = approving.api.wait_for(lambda req: any(r.get("name") == "run_shell_command" for r in req.function_responses()), timeout=20)
    assert "Output" in json.dumps(answered.function_responses())
    assert (approving.workdir / "x").exists()
    approving.wait_for(lambda s: "Made x." in s and PLACEHOLDER in s, what="the reply after the approved command")
    poll(lambda: status(private_tmux)[approving.pane_id]["state"], lambda state: state == "idle", timeout=15)
