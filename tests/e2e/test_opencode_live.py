"""The real pinned opencode against a scripted OpenAI-compatible API, seen through ``headspace status`` and ``send``.

One opencode (about 0.8 GB resident) walks through the states in turn, so
the file stays within its time budget: idle at its prompt, its approval
dialog answered with ``send --approve`` (the scripted API receives the
command's result), a reply that asks something (answered with ``send
--text``), an error it gives up on,
and a second dialog refused with ``send --deny``.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import opencode_api as api
from tests.harness.cli import headspace
from tests.harness.opencode_agent import PERMISSION, OpencodeSession, require_opencode
from tests.harness.tmux import PrivateTmux
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e

DONE = re.compile(r"▣ .*· \d")  # a turn's last row, with its duration: the turn ended
ASKS = "Created it. Should I add marker.txt to .gitignore as well?"
REJECTED = "The scripted model rejected the request"


def row(server: PrivateTmux) -> dict:
    rows = [json.loads(line) for line in headspace("status", "--json", "-L", server.name).stdout.splitlines()]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.fixture
def opencode() -> Iterator[OpencodeSession]:
    binary = require_opencode()
    root = Path(tempfile.mkdtemp(prefix="hs-oc-live-"))
    server = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"})
    with api.OpenAICompatibleAPI() as fake:
        session = OpencodeSession(server, fake, binary, root, name="oc", width=120, height=40)
        try:
            yield session
        finally:
            session.close()
            server.close()
            shutil.rmtree(root, ignore_errors=True)


def test_idle_permission_input_and_error_read_and_answered_through_status_and_send(opencode):
    opencode.launch()
    server = opencode.tmux
    idle = poll(lambda: row(server), lambda r: r["state"] == "idle", timeout=15)
    assert idle["agent"] == "opencode" and idle["pane_id"] == opencode.pane_id

    opencode.api.extend(api.bash("touch marker.txt && echo marker-made", "Create the marker file"), api.text(ASKS))
    opencode.submit("create the marker file")
    opencode.wait_for(PERMISSION, timeout=60, what="the approval dialog")  # its first request, on a busy machine, can take half a minute
    asked = poll(lambda: row(server), lambda r: r["state"] == "permission", timeout=10)
    assert asked["tool"] == "bash" and asked["detail"] == "touch marker.txt && echo marker-made"
    assert asked["options"] == ["Allow once", "Allow always", "Reject"]

    done = headspace("send", opencode.pane_id, "--approve", "-L", server.name)
    assert "→ Enter. Allow once: sent; opencode moved on" in done.stdout, done.stdout
    result = opencode.api.wait_for(lambda r: any("marker-made" in t for t in r.tool_results()), timeout=30)
    assert result.is_main
    assert (opencode.workdir / "marker.txt").exists()

    opencode.wait_for(lambda s: "Should I add" in s and DONE.search(s) is not None, timeout=20, what="the reply that asks")
    waiting = poll(lambda: row(server), lambda r: r["state"] == "input", timeout=10)
    assert waiting["question"] == "Should I add marker.txt to .gitignore as well?"

    # Answered by send --text: the reply reaches the API as the next user message.
    opencode.api.extend(api.text("Added it."))
    replied = headspace("send", opencode.pane_id, "--text", "yes, add it", "-L", server.name)
    assert "submitted" in replied.stdout, replied.stdout
    opencode.api.wait_for(lambda r: r.is_main and r.messages[-1].get("content") == "yes, add it", timeout=20)
    opencode.wait_for(lambda s: "Added it." in s and DONE.search(s) is not None, timeout=20, what="the reply to the answer")

    opencode.api.extend(api.fail(400, times=1))
    opencode.submit("no, add a parser instead")
    opencode.wait_for(lambda s: REJECTED in s and "esc interrupt" not in s, timeout=20, what="the error")
    failed = poll(lambda: row(server), lambda r: r["state"] == "error", timeout=10)
    assert failed["error"] == REJECTED

    # Refused by send: Esc, the dialog's own refusal; no result goes back, the turn ends.
    opencode.api.extend(api.bash("touch refused.txt", "Create another file"))
    opencode.submit("then create another file")
    opencode.wait_for("touch refused.txt", timeout=20, what="the second dialog")
    poll(lambda: row(server), lambda r: r["state"] == "permission" and r["detail"] == "touch refused.txt", timeout=15)
    before = len(opencode.api.main_requests)
    refused = headspace("send", opencode.pane_id, "--deny", "-L", server.name)
    assert "touch refused.txt → Escape. Reject: sent; opencode moved on" in refused.stdout, refused.stdout
    poll(lambda: row(server), lambda r: r["state"] == "idle", timeout=15)
    assert not (opencode.workdir / "refused.txt").exists()
    assert len(opencode.api.main_requests) == before

    # Interrupted by send: opencode's Esc only arms the interrupt, a second separate one stops the turn.
    opencode.api.extend(api.stall(seconds=20, times=1))
    opencode.submit("take your time over this")
    poll(lambda: row(server), lambda r: r["state"] == "working", timeout=15)
    stopped = headspace("send", opencode.pane_id, "--interrupt", "-L", server.name)
    assert "interrupt sent; opencode stopped" in stopped.stdout, stopped.stdout
    poll(lambda: row(server), lambda r: r["state"] == "idle", timeout=15)
