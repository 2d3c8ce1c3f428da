"""The whole loop against the real Claude Code binary: prompt on screen, key, result at the API.

These tests are the ground truth every detector and action is built on: they
prove that what the harness scripts is what the real program draws, and that
the keys a person presses reach Claude and come back as API requests.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.harness import fake_api as api
from tests.harness.fake_api import block_text
from tests.harness.scenarios import QUESTION_DB, TURN_DONE
from tests.harness.session import READY
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e


def _idle_after(marker: str):
    return lambda s: marker in s and TURN_DONE.search(s) is not None and READY.search(s) is not None


@pytest.mark.parametrize("inline", [False, True], ids=["alt", "inline"])
def test_permission_approved_by_keystroke_runs_the_command(claude_session, fake_api, inline):
    session = claude_session(
        [api.bash("touch approved.txt && echo headspace-approved", "Create a marker file"), api.text("The marker file exists now.")],
        inline=inline,
        width=100,
        height=30,
    )
    session.submit("create the marker file")
    screen = session.wait_for("Do you want to proceed?", what="the Bash permission dialog")
    assert "touch approved.txt" in screen
    assert session.info().alternate_on is (not inline)

    session.answer("1")

    request = fake_api.wait_for(lambda r: bool(r.tool_results()), timeout=30)
    (result,) = request.tool_results()
    assert result["is_error"] is False
    assert "headspace-approved" in block_text(result)
    assert (session.workdir / "approved.txt").exists()
    final = session.wait_for(_idle_after("The marker file exists now."), timeout=30, what="idle after the answer")
    assert "Do you want to proceed?" not in final


def test_permission_denied_by_keystroke_sends_a_rejection(claude_session, fake_api):
    session = claude_session([api.bash("touch denied.txt", "Create a file"), api.text("Understood, I will not.")])
    session.submit("create a file")
    screen = session.wait_for(re.compile(r"\d\. No\b"), what="the permission menu's No")  # the whole menu, not its first line
    # Find "No" by its label, never by its position.
    no_line = next(line for line in screen.splitlines() if re.search(r"\d\. No\b", line))
    digit = re.search(r"(\d)\. No", no_line).group(1)

    session.answer(digit)

    # 2.1.330: "No" interrupts the turn and asks for directions; the rejection
    # travels to the API with the user's next message.
    session.wait_for("What should Claude do instead?", what="the deny follow-up")
    assert not (session.workdir / "denied.txt").exists()
    assert len(fake_api.main_requests) == 1
    session.submit("use a temp file instead")
    request = fake_api.wait_for(lambda r: bool(r.tool_results()), timeout=30)
    (result,) = request.tool_results()
    assert result["is_error"] is True
    assert "use a temp file instead" in request.user_text()


def test_question_option_two_reaches_the_api(claude_session, fake_api):
    session = claude_session([api.ask(QUESTION_DB), api.text("SQLite it is.")])
    session.submit("pick a database")
    screen = session.wait_for("Enter to select", what="the question dialog")
    assert "Which database should we use?" in screen
    assert re.search(r"2\. SQLite", screen)

    session.answer("2")

    request = fake_api.wait_for(lambda r: bool(r.tool_results()), timeout=30)
    (result,) = request.tool_results()
    answer = block_text(result)
    assert "SQLite" in answer and "Postgres" not in answer
    session.wait_for(_idle_after("SQLite it is."), timeout=30, what="idle after the answer")


def test_typed_prompt_reaches_the_api_verbatim(claude_session, fake_api):
    """A nudge or reply is literal text plus Enter; the API must see exactly that text."""
    session = claude_session([api.text("Continuing.")])
    session.submit("continue with the #2 plan; don't stop")
    request = fake_api.wait_for(lambda r: "continue with the #2 plan; don't stop" in r.user_text(), timeout=30)
    assert request.last_user_message()["role"] == "user"
    session.wait_for(_idle_after("Continuing."), timeout=30, what="idle after the nudge")


def test_status_file_follows_the_session(claude_session, fake_api):
    """Claude's own ~/.claude/sessions/<pid>.json: idle at the prompt, busy mid-turn, gone after exit."""
    session = claude_session([api.text("Thinking it over.", delay=4)])
    folder = session.home / ".claude" / "sessions"

    def status() -> dict:
        files = list(folder.glob("*.json"))
        return json.loads(files[0].read_text()) if len(files) == 1 else {}

    idle = poll(status, lambda st: st.get("status") == "idle")
    assert idle["cwd"] == str(session.workdir)
    assert idle["pid"] > 0

    session.submit("think")
    busy = poll(status, lambda st: st.get("status") == "busy")
    assert busy["sessionId"] == idle["sessionId"]
    session.wait_for(_idle_after("Thinking it over."), timeout=30, what="the answer")
    poll(status, lambda st: st.get("status") == "idle")

    session.submit("/exit")
    poll(lambda: list(folder.glob("*.json")), lambda files: files == [])
