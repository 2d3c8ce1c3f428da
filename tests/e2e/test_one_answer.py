"""One request, one answer, with the real Claude Code 2.1.330 and the resident service a user runs.

Claude asks for the same command twice (``echo run >> runs.txt``: one
fingerprint, two requests).  The first is approved in time with the request
``status --json`` showed; then a late answer naming that first request
(``send --expect`` written for it, or the tap of a phone page whose stream
froze) reaches the second, identical dialog: it is refused with one line,
nothing runs (the file keeps one line), and the second is still answerable
by its own request.  Both ways an answer can go: the answer hook holding
the call, and the guarded keys.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from headspace_tui.hooks import settings as hook_settings
from tests.e2e.test_jump import wait
from tests.e2e.test_resident_service import rows, run, started
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU

pytestmark = pytest.mark.e2e

COMMAND = "echo run >> runs.txt"


def _session(claude_session, *, hook: bool):
    """Claude asking for ``COMMAND`` twice, then saying so; with the answer hook installed (``hook``) where the service's channel is."""
    script = [api.bash(COMMAND, "Log a run"), api.bash(COMMAND, "Log a run"), api.text("Logged twice.")]
    session = claude_session(script, launch=False, extra_env={"XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"]})
    if hook:
        hook_settings.install(session.home / ".claude" / "settings.json", answer_wait=60)
    session.launch()
    return session


def _runs(session) -> int:
    path = session.workdir / "runs.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _waiting(server: str, pane_id: str, other_than: str = "") -> dict:
    """The service's row of ``pane_id`` once it waits on a permission with a request other than ``other_than``."""
    found: list[dict] = []

    def asks() -> bool:
        found[:] = [r for r in rows(run("-L", server, "status", "--json")) if r["pane_id"] == pane_id]
        return bool(found) and found[0]["state"] == "permission" and bool(found[0]["request"]) and found[0]["request"] != other_than

    wait(asks, f"a permission in {pane_id}" + (" asked anew" if other_than else ""), timeout=60)
    return found[0]


@pytest.mark.parametrize("hook", [False, True], ids=["keys", "hook"])
def test_send_expect_for_the_first_request_is_refused_at_the_second_with_the_same_words(claude_session, private_tmux, services, hook):
    session = _session(claude_session, hook=hook)
    started(private_tmux.name, services)
    session.submit("log two runs")
    session.wait_for(NUMBERED_MENU, timeout=60)
    first = _waiting(private_tmux.name, session.pane_id)
    assert first["request"].startswith(first["fingerprint"] + "~"), first

    answered = run("-L", private_tmux.name, "send", session.pane_id, "--approve", "--expect", first["request"])
    assert answered.returncode == 0, answered.stderr
    assert ("via hook" in answered.stdout) is hook, answered.stdout
    wait(lambda: _runs(session) == 1, "the first run")

    second = _waiting(private_tmux.name, session.pane_id, other_than=first["request"])
    assert second["fingerprint"] == first["fingerprint"] and second["detail"] == first["detail"] == COMMAND, (first, second)
    late = run("-L", private_tmux.name, "send", session.pane_id, "--approve", "--expect", first["request"])
    assert late.returncode == 1, late.stdout
    assert "that request was already answered; this is a new one; nothing sent" in late.stderr, late.stderr
    time.sleep(1.5)  # time enough for a command that was let through to run
    assert _runs(session) == 1, "a late answer to the first request ran the second"
    assert NUMBERED_MENU.search(session.screen()), "the second dialog is gone after a refused answer"

    own = run("-L", private_tmux.name, "send", session.pane_id, "--approve", "--expect", second["request"])
    assert own.returncode == 0, own.stderr
    session.wait_for("Logged twice.", timeout=60)
    assert _runs(session) == 2


def test_the_expected_request_needs_the_service_that_names_it(claude_session, private_tmux):
    """An --expect names one appearance, which only the service that watched it come knows: one that no service named is refused, never taken as words only.

    No service runs: ``status`` looks by itself (its rows name no
    appearance), and ``send`` starts the service to answer through, which
    never saw the appearance the asker made up from the words.
    """
    session = _session(claude_session, hook=False)
    session.submit("log two runs")
    session.wait_for(NUMBERED_MENU, timeout=60)
    (row,) = [json.loads(line) for line in run("-L", private_tmux.name, "status", "--json").stdout.splitlines()]
    assert row["state"] == "permission" and row["fingerprint"] and row["request"] is None, row  # a look of its own names no appearance
    refused = run("-L", private_tmux.name, "send", session.pane_id, "--approve", "--expect", row["fingerprint"] + "~x1")
    assert refused.returncode == 1 and "this is a new one" in refused.stderr and "nothing sent" in refused.stderr, refused.stderr
    time.sleep(1.0)
    assert _runs(session) == 0 and NUMBERED_MENU.search(session.screen())
