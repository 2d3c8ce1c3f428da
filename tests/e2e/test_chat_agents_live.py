"""The pinned GitHub Copilot CLI and Qwen Code against the scripted OpenAI-compatible API, seen through ``headspace status`` and ``send``.

One agent of each family walks through its states in turn: idle at its
prompt (in the mode that asks, read from its footer), working on a slow
reply, a shell permission approved by the approve key's path (``send
--approve``: the command runs, the once-only option and never the one that
adds a standing rule), a reply that asks something (input), an error it
gives up on, and a draft in its box that a typed reply refuses to join.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import opencode_api as api
from tests.harness.cli import headspace
from tests.harness.copilot_agent import require_copilot
from tests.harness.qwen_agent import require_qwen
from tests.harness.record_chat_agents import AGENTS, QUESTION_REPLY, REJECTED, Agent
from tests.harness.tmux import PrivateTmux
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e

APPROVED = {"copilot": "1. Yes: sent", "qwen": "1. Yes, allow once: sent"}


def row(server: PrivateTmux) -> dict:
    rows = [json.loads(line) for line in headspace("status", "--json", "-L", server.name).stdout.splitlines()]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.fixture(params=sorted(AGENTS))
def agent(request) -> Iterator[tuple[Agent, object]]:
    family = AGENTS[request.param]
    binary = {"copilot": require_copilot, "qwen": require_qwen}[family.name]()
    root = Path(tempfile.mkdtemp(prefix=f"hs-{family.name[:3]}-live-"))
    server = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"})
    with api.OpenAICompatibleAPI() as fake:
        session = family.session(server, fake, binary, root, width=100, height=30)
        try:
            yield family, session
        finally:
            session.close()
            server.close()
            shutil.rmtree(root, ignore_errors=True)


def test_listed_in_five_states_a_shell_call_approved_once_and_a_draft_never_typed_into(agent):
    family, session = agent
    server, fake = session.tmux, session.api
    session.launch()
    idle = poll(lambda: row(server), lambda r: r["state"] == "idle", timeout=30)
    assert idle["agent"] == family.name and idle["pane_id"] == session.pane_id
    assert idle["mode"] == "manual"

    # Working: a reply that streams for a while.
    fake.extend(api.text(" ".join(f"word{i}" for i in range(40)), seconds=8))
    session.submit("write a slow answer")
    poll(lambda: row(server), lambda r: r["state"] == "working", timeout=30)
    session.wait_for(family.ready, timeout=60, what="the slow reply's end")

    # A shell permission, approved by the approve key's path: the once-only option; the command runs.
    fake.extend(family.shell("touch marker.txt && echo marker-made", "Create the marker file"), api.text(QUESTION_REPLY))
    session.submit("create the marker file")
    session.wait_for(family.permission, timeout=60, what="the approval dialog")
    asked = poll(lambda: row(server), lambda r: r["state"] == "permission", timeout=15)
    assert asked["tool"] == "Shell" and asked["detail"] == "touch marker.txt && echo marker-made"
    done = headspace("send", session.pane_id, "--approve", "-L", server.name)
    assert APPROVED[family.name] in done.stdout, done.stdout + done.stderr
    fake.wait_for(lambda r: any("marker-made" in t for t in r.tool_results()), timeout=30)
    assert (session.workdir / "marker.txt").exists()

    # The reply after it asks something: input, with its question.
    waiting = poll(lambda: row(server), lambda r: r["state"] == "input", timeout=30)
    assert " ".join(waiting["question"].split()) == QUESTION_REPLY

    # An error it gives up on.
    fake.extend(api.fail(400, message=REJECTED, times=None))
    session.submit("check the key")
    failed = poll(lambda: row(server), lambda r: r["state"] == "error", timeout=60)
    assert REJECTED in failed["error"]

    # A draft in the box: a typed reply refuses to join it, and the draft is left as it was.
    session.type("my own unsent words")
    session.wait_for("my own unsent words", what="the draft")
    before = len(fake.requests)
    refused = headspace("send", session.pane_id, "--text", "yes, add it", "-L", server.name, check=False)
    assert refused.returncode != 0 and "holds text you did not send" in refused.stdout + refused.stderr
    screen = session.screen()
    assert "my own unsent words" in screen and "yes, add it" not in screen
    assert len(fake.requests) == before
