"""What an agent costs, from the real Claude Code: the scripted API's counts, summed, on ``status --json``.

The scripted API reports known token counts for each reply; Claude writes
them to its transcript, and the resident service (as users run it) folds
them: the session's sums, the model, the context the last reply filled
against the model's window, and the estimate at the table's list prices.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from headspace_tui.app.screens.timeline import describe_event
from headspace_tui.state.eventlog import EventLog
from headspace_tui.state.eventlog import default_path as events_path
from headspace_tui.usage.model import Tokens
from headspace_tui.usage.prices import estimate, price_of
from tests.e2e.test_resident_service import started
from tests.harness import fake_api as api
from tests.harness.cli import headspace
from tests.harness.hooks_race import install_hooks
from tests.harness.scenarios import TURN_DONE
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e

MODEL = "claude-sonnet-4-5"


def row(server: str) -> dict:
    (line,) = headspace("-L", server, "status", "--json").stdout.splitlines()
    return json.loads(line)


def test_status_json_sums_each_replys_tokens_and_says_the_context_and_an_estimate(claude_session, fake_api, private_tmux, services):
    first, second = api.tokens(1200, 300, cache_read=5000, cache_write=800), api.tokens(200, 100, cache_read=7000)
    session = claude_session([api.text("One.", usage=first), api.text("Two.", usage=second)], name="spend", extra_args=["--model", MODEL])
    started(private_tmux.name, services)
    session.submit("the first part")
    session.wait_for(lambda s: "One." in s and TURN_DONE.search(s) is not None, what="the first reply")
    session.submit("the second part")
    session.wait_for(lambda s: "Two." in s and TURN_DONE.search(s) is not None, what="the second reply")
    models = {r.body.get("model") for r in fake_api.main_requests}
    assert models == {MODEL}, models
    sums = Tokens(1400, 400, 12000, 800)
    got = poll(lambda: row(private_tmux.name), lambda r: r["tokens"] == sums.to_dict(), timeout=30)
    assert got["model"] == MODEL
    assert got["context_tokens"] == 200 + 7000  # the last reply's prompt, uncached and cached (as Claude counts its context)
    assert got["context_pct"] == (7200 * 100) // 200_000
    assert got["cost_usd_est"] == estimate(MODEL, sums) and got["cost_usd_est"] > 0
    assert got["limited_until"] is None


def test_claudes_default_model_gets_a_context_share_and_an_estimate_from_the_table(claude_session, fake_api, private_tmux, services):
    """The pinned Claude as users run it, no --model: its default model is in the table, so the row has a context share and a cost."""
    session = claude_session([api.text("Done.", usage=api.tokens(900, 50, cache_read=30_000))], name="default")
    started(private_tmux.name, services)
    session.submit("hello")
    session.wait_for(lambda s: "Done." in s and TURN_DONE.search(s) is not None, what="the reply")
    (model,) = {r.body.get("model") for r in fake_api.main_requests}
    got = poll(lambda: row(private_tmux.name), lambda r: r["context_tokens"] == 900 + 30_000, timeout=30)
    price = price_of(model)
    assert got["model"] == model and price is not None, (model, got)
    assert (got["context_window"], got["context_window_source"]) == (price.window, "table")
    assert got["context_pct"] == (30_900 * 100) // price.window
    assert got["cost_usd_est"] == estimate(model, Tokens(900, 50, 30_000, 0)) and got["cost_leaves_out"] is None


def test_clear_starts_the_conversations_count_again_and_the_day_keeps_both(claude_session, fake_api, private_tmux, services):
    """/clear as users run it, hooks installed: the row's totals become the new conversation's, the day's events add both, and the timeline says so (not "exited")."""
    script = [api.text("One.", usage=api.tokens(1000, 100)), api.text("Two.", usage=api.tokens(50, 5)), api.text("Three.", usage=api.tokens(70, 7))]
    session = claude_session(script, name="clear", launch=False, extra_args=["--model", MODEL], extra_env={"XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"]})
    install_hooks(session)
    session.launch()
    started(private_tmux.name, services)
    session.submit("the first part")
    session.wait_for(lambda s: "One." in s and TURN_DONE.search(s) is not None, what="the first reply")
    poll(lambda: row(private_tmux.name), lambda r: r["tokens"] == Tokens(1000, 100, 0, 0).to_dict(), timeout=30)
    session.submit("/clear")
    session.wait_for(lambda s: "One." not in s, what="the conversation cleared")
    for prompt, reply in (("the second part", "Two."), ("the third part", "Three.")):
        session.submit(prompt)
        session.wait_for(lambda s, reply=reply: reply in s and TURN_DONE.search(s) is not None, what=reply)
    # The records can say the turn's tokens a moment before the row has waited out its idle grace: wait for both.
    got = poll(lambda: row(private_tmux.name), lambda r: r["tokens"] == Tokens(120, 12, 0, 0).to_dict() and r["state"] == "idle", timeout=30)
    assert got["cost_usd_est"] == estimate(MODEL, Tokens(120, 12, 0, 0))

    mine = f"local|L:{private_tmux.name}|{session.pane_id}|"
    with EventLog(events_path()) as log:
        spent = poll(lambda: [e for e in log.query(kind="usage") if (e.agent or "").startswith(mine)], lambda events: sum(e.payload["spent"][0] for e in events) == 1120, timeout=30)
        assert sum(e.payload["spent"][1] for e in spent) == 112 and len({e.payload["conversation"] for e in spent}) == 2
        mine_all = [e for e in log.query() if (e.agent or "").startswith(mine)]
    (cleared,) = [e for e in mine_all if e.kind == "conversation"]
    assert cleared.payload["how"] == "cleared" and describe_event(cleared, {}).plain.startswith("a new conversation (/clear)")  # the timeline's line
    assert "exited" not in [e.payload.get("to") for e in mine_all if e.kind == "agent_state"]


def test_a_429_that_claude_gives_up_on_reads_limited_on_status_json(claude_session, fake_api, private_tmux, services):
    """An API key's rate limit, after Claude's retries (none here, so the test is quick): ``limited``, not ``error``.

    With an API key Claude names no reset time (it reads the plan's limit
    headers only when signed in to a plan): the row says so.
    """
    session = claude_session([api.fail(429, times=None)], name="capped", extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"})
    started(private_tmux.name, services)
    session.submit("hello")
    session.wait_for(lambda s: "API Error" in s and "429" in s, timeout=60, what="Claude giving up on the 429")
    got = poll(lambda: row(private_tmux.name), lambda r: r["state"] == "limited", timeout=30)
    assert got["limited_until"] is None and "429" in got["error"]
    text = headspace("-L", private_tmux.name, "status").stdout
    assert "limited (no reset time given)" in text, text


def test_go_on_after_limit_sends_the_nudge_once_when_the_named_reset_comes(claude_session, fake_api, private_tmux, services, tmp_path):
    """A limit whose words name its reset (a minute ahead here), and ``go_on_after_limit`` on: the nudge goes once, after it.

    The scripted 429 carries a plan limit's words as its message; the pinned
    Claude (an API key: it reads no plan headers) shows them in its error
    line, which is where headspace reads them, as it reads a plan's own.
    """
    reset = (int(time.time()) // 60 + 1) * 60
    if reset - time.time() < 20:
        reset += 60  # time to read the limit before it resets
    at = time.localtime(reset)
    words = f"You've hit your 5-hour limit · resets {at.tm_hour % 12 or 12}:{at.tm_min:02d}{'pm' if at.tm_hour >= 12 else 'am'}"
    session = claude_session([api.fail(429, message=words), api.text("Going on.")], name="resume", extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"})
    config = tmp_path / "config.toml"
    config.write_text('go_on_after_limit = true\nnudge_text = "go on please"\n')
    started(private_tmux.name, services, "--config", str(config))
    session.submit("hello")
    session.wait_for(lambda s: "resets" in s and "429" in s, timeout=60, what="the limit's words")
    got = poll(lambda: row(private_tmux.name), lambda r: r["state"] == "limited", timeout=30)
    assert got["limited_until"] == reset, (got["limited_until"], reset)
    request = fake_api.wait_for(lambda r: "go on please" in r.user_text(), timeout=reset - time.time() + 45)
    assert time.time() >= reset, "not before the reset"
    assert "go on please" in request.user_text()
    session.wait_for(lambda s: "Going on." in s and TURN_DONE.search(s) is not None, what="the turn the nudge began")
    time.sleep(6.0)  # past AFTER_RESET again: a second nudge would be here by now
    assert sum("go on please" in r.user_text() for r in fake_api.main_requests) == 1
