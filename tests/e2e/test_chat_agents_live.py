"""The pinned GitHub Copilot CLI and Qwen Code against the scripted OpenAI-compatible API, seen through ``headspace status`` and ``send``.

One agent of each family walks through its states in turn: idle at its
prompt (in the mode that asks, read from its footer), working on a slow
reply, a shell permission approved by the approve key's path (``send
--approve``: the command runs, the once-only option and never the one that
adds a standing rule), a reply that asks something (input), an error it
gives up on, and a draft in its box that a typed reply refuses to join;
a typed reply to its question, a refusal by its dialog's own key, and an
interrupt of a turn that waits on the model (Qwen's: see below for Copilot's).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from headspace_tui.detect.families import BY_NAME
from tests.harness import opencode_api as api
from tests.harness.cli import headspace
from tests.harness.copilot_agent import require_copilot
from tests.harness.qwen_agent import require_qwen
from tests.harness.record_chat_agents import AGENTS, QUESTION_REPLY, REJECTED, Agent, ask_user
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

    # The reply after it asks something: input, with its question; answered by a typed reply, which reaches the API.
    waiting = poll(lambda: row(server), lambda r: r["state"] == "input", timeout=30)
    assert " ".join(waiting["question"].split()) == QUESTION_REPLY
    fake.extend(api.text("Added it."))
    replied = headspace("send", session.pane_id, "--text", "yes, add it", "-L", server.name)
    assert "submitted" in replied.stdout, replied.stdout + replied.stderr
    fake.wait_for(lambda r: r.is_main and "yes, add it" in json.dumps(r.messages[-1]), timeout=30)
    session.wait_for(lambda screen: "Added it." in screen and family.ready(screen), timeout=30, what="the reply to the answer")

    # Qwen's question tool, answered in words of one's own through its "Type something..." field; Copilot's form has
    # no keys, and a digit sent to it is refused.
    fake.extend(ask_user(family), api.text("Noted."))
    session.submit("pick a database")
    poll(lambda: row(server), lambda r: r["state"] == "question" and r["question"] == "Which database should we use?", timeout=60)
    if family.name == "qwen":
        answered = headspace("send", session.pane_id, "--text", "MariaDB please", "-L", server.name)
        assert "submitted" in answered.stdout or "sent" in answered.stdout, answered.stdout + answered.stderr
        fake.wait_for(lambda r: any("MariaDB please" in t for t in r.tool_results()), timeout=30)
    else:
        digit = headspace("send", session.pane_id, "--option", "1", "-L", server.name, check=False)
        assert digit.returncode != 0 and "answer it in the pane itself" in digit.stdout + digit.stderr
        session.press("Enter")  # the person takes the selected choice in the pane
        fake.wait_for(lambda r: any("Postgres" in t for t in r.tool_results()), timeout=30)
    session.wait_for(lambda screen: "Noted." in screen and family.ready(screen), timeout=30, what="the reply to the answer")

    # Refused by send: the dialog's own refusal; the command does not run and the agent is at rest, not in error.
    fake.extend(family.shell("touch refused.txt", "Create another file"))
    session.submit("then create another file")
    session.wait_for(family.permission, timeout=60, what="the second dialog")
    poll(lambda: row(server), lambda r: r["state"] == "permission" and r["detail"] == "touch refused.txt", timeout=15)
    refused = headspace("send", session.pane_id, "--deny", "-L", server.name)
    assert "sent" in refused.stdout, refused.stdout + refused.stderr
    poll(lambda: row(server), lambda r: r["state"] == "idle", timeout=30)
    assert not (session.workdir / "refused.txt").exists()

    # Interrupted by send: a reply that never comes; the turn stops.  Qwen only: Copilot stops on two Esc presses
    # 0.2-0.3 s apart (0 s, 0.5 s and 1 s apart do nothing, measured), and under a loaded CI run the pair once did not
    # stop it (headspace said "not delivered", nothing more was sent): its interrupt is not yet one a test can hold.
    if family.name == "qwen":
        fake.extend(api.stall(seconds=30, times=1))
        session.submit("take your time over this")
        poll(lambda: row(server), lambda r: r["state"] == "working", timeout=30)
        stopped = headspace("send", session.pane_id, "--interrupt", "-L", server.name)
        assert "stopped" in stopped.stdout, stopped.stdout + stopped.stderr
        poll(lambda: row(server), lambda r: r["state"] == "idle", timeout=30)
        # Both put the stopped prompt back in the box: a typed line is refused now, as for any draft; the person clears it.
        box = BY_NAME[family.name].box_text
        assert box(session.ansi()) == "take your time over this"
        assert headspace("send", session.pane_id, "--text", "go on", "-L", server.name, check=False).returncode != 0
        session.press("C-u")
        session.wait_for(lambda screen: box(session.ansi()) == "", timeout=10, what="the box cleared")

    # An error it gives up on.
    fake.extend(api.fail(400, message=REJECTED, times=None))
    session.submit("check the key")
    failed = poll(lambda: row(server), lambda r: r["state"] == "error", timeout=60)
    assert REJECTED in failed["error"]

    # A draft in the box: a typed reply refuses to join it, and the draft is left as it was.
    session.type("my own unsent words")
    session.wait_for("my own unsent words", what="the draft")
    before = len(fake.requests)
    refused = headspace("send", session.pane_id, "--text", "ship it now", "-L", server.name, check=False)
    assert refused.returncode != 0 and "holds text you did not send" in refused.stdout + refused.stderr
    assert BY_NAME[family.name].box_text(session.ansi()) == "my own unsent words" and "ship it now" not in session.screen()
    assert len(fake.requests) == before
