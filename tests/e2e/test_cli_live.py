"""``headspace status`` and ``headspace send`` against live Claude sessions on a private server."""

from __future__ import annotations

import json
import time

import pytest

from tests.harness import fake_api as api
from tests.harness.cli import headspace
from tests.harness.scenarios import INPUT_QUESTION, LONG_ANSWER, NUMBERED_MENU, QUESTION_DB, RETRYING, TURN_DONE
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e


def test_status_json_reports_six_states(claude_session, fake_api, private_tmux):
    fake_api.set_script([api.bash("touch x.txt", "Make x")])
    permission = claude_session(name="perm")
    permission.submit("make x")
    permission.wait_for(NUMBERED_MENU, what="permission")

    fake_api.set_script([api.ask(QUESTION_DB)])
    question = claude_session(name="quest")
    question.submit("pick")
    question.wait_for("Enter to select", what="question")

    fake_api.set_script([api.text(LONG_ANSWER, seconds=120)])
    working = claude_session(name="work")
    working.submit("explain")
    working.wait_for("rune at a time", what="streaming")

    fake_api.set_script([api.text(INPUT_QUESTION)])
    asking = claude_session(name="ask")
    asking.submit("fix it")
    asking.wait_for(lambda s: "leave them alone?" in s and TURN_DONE.search(s) is not None, what="input")

    claude_session(name="idle")

    fake_api.set_script([api.fail(500, times=None)])
    failing = claude_session(name="fail")
    failing.submit("hello")
    failing.wait_for(RETRYING, timeout=40, what="retrying")

    plain = private_tmux.new_session("plain", width=80, height=24, cwd="/", command=["bash", "--norc", "-i"])

    rows = [json.loads(line) for line in headspace("status", "--json", "-L", private_tmux.name).stdout.splitlines()]
    by_target = {row["target"]: row for row in rows}
    assert set(by_target) == {"perm:0.0", "quest:0.0", "work:0.0", "ask:0.0", "idle:0.0", "fail:0.0"}
    assert {row["agent"] for row in rows} == {"claude"}  # every row names its agent's family
    assert by_target["perm:0.0"]["state"] == "permission" and by_target["perm:0.0"]["tool"] == "Bash"
    assert by_target["quest:0.0"]["state"] == "question"
    assert by_target["quest:0.0"]["options"][:2] == ["Postgres", "SQLite"]
    assert by_target["quest:0.0"]["question"] == "Which database should we use?"
    assert by_target["work:0.0"]["state"] == "working"
    assert by_target["ask:0.0"]["state"] == "input"
    assert by_target["idle:0.0"]["state"] == "idle"
    # A request Claude retries is still its turn (issue 23): working, marked.
    assert by_target["fail:0.0"]["state"] == "working" and by_target["fail:0.0"]["retrying"] is True
    assert by_target["fail:0.0"]["error"].startswith("retrying ")
    for row in rows:
        assert row["pane_id"].startswith("%") and isinstance(row["since"], float)
    # Agents that need you come first.
    assert [r["state"] for r in rows][:3].count("working") == 0

    everything = headspace("status", "--all", "-L", private_tmux.name).stdout
    assert "plain:0.0" in everything and plain in everything


def test_send_approves_and_refuses_when_no_prompt(claude_session, fake_api, private_tmux):
    session = claude_session([api.bash("touch sent.txt && echo sent-ok", "Make a file"), api.text("Made it.")], name="s")
    session.submit("make the file")
    session.wait_for(NUMBERED_MENU, what="permission")
    # Straight away: a digit sent within ~0.1 s of the menu being drawn would be
    # dropped by Claude; send lets a fresh menu settle and checks it again first.
    done = headspace("send", "s:0.0", "--approve", "-L", private_tmux.name)
    # It says exactly what it answered, and that Claude reacted.
    assert "Bash: touch sent.txt && echo sent-ok → 1. Yes: sent; Claude moved on" in done.stdout
    request = fake_api.wait_for(lambda r: bool(r.tool_results()), timeout=30)
    assert "sent-ok" in api.block_text(request.tool_results()[0])
    session.wait_for(lambda s: "Made it." in s and TURN_DONE.search(s) is not None, what="idle")

    refused = headspace("send", session.pane_id, "--option", "2", "-L", private_tmux.name, check=False)
    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1 and "no numbered menu" in refused.stderr
    input_box = [line for line in session.screen().splitlines() if line.startswith("❯")][-1]
    assert input_box.strip() == "❯"  # nothing was typed into the input box

    nudged = headspace("send", "s", "--nudge", "-L", private_tmux.name)
    assert "submitted" in nudged.stdout
    fake_api.wait_for(lambda r: r.user_text().strip().endswith("continue"), timeout=30)


@pytest.mark.parametrize(
    "args,message",
    [
        (["status", "-L", "headspace-no-such-server"], "no tmux server"),
        (["send", "%99", "--approve", "-L", "headspace-no-such-server"], "no tmux server"),
        (["classify", "/nonexistent/capture.txt"], "cannot read"),
    ],
)
def test_user_errors_are_one_line_without_traceback(args, message):
    proc = headspace(*args, check=False)
    assert proc.returncode == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_unknown_target_is_a_clear_error(private_tmux):
    private_tmux.new_session("only", width=80, height=24, cwd="/", command=["bash", "--norc", "-i"])
    proc = headspace("send", "nosuch:1.2", "--approve", "-L", private_tmux.name, check=False)
    assert proc.returncode == 1 and "no pane 'nosuch:1.2'" in proc.stderr and "Traceback" not in proc.stderr


def test_a_dead_pane_reports_its_exit_status(private_tmux, tmp_path):
    """With remain-on-exit, tmux keeps a dead pane and knows how its program ended.

    Measured on tmux 3.3a: when the pty closes before tmux reaps the child
    (about 1 run in 6 here), the pane is dead but its status is lost, and
    headspace rightly reports exited without a status.  The background sleep
    keeps the pty open past the exit so this test sees the status every time.
    The program waits for a file made once remain-on-exit is on: a program
    that ended before (a busy machine) took its session and the server with it.
    """
    go = tmp_path / "go"
    program = "echo starting; while [ ! -e go ]; do sleep 0.05; done; (sleep 0.5 &); exit 3"  # go: in its working folder
    private_tmux.new_session("boot", width=80, height=24, cwd=str(tmp_path), command=["sh", "-c", program])
    private_tmux.run("set-option", "-t", "boot", "remain-on-exit", "on")
    go.touch()
    rows = poll(
        lambda: [json.loads(line) for line in headspace("status", "--json", "--all", "-L", private_tmux.name).stdout.splitlines()],
        lambda rows: rows and rows[0]["exit_status"] == 3,
        timeout=10,
    )
    assert rows[0]["target"] == "boot:0.0" and rows[0]["state"] == "exited"
    text = headspace("status", "--all", "-L", private_tmux.name).stdout
    assert "exit status 3" in text


def test_send_refuses_a_pane_in_copy_mode(claude_session, fake_api, private_tmux):
    session = claude_session([api.bash("touch copy.txt", "Make a file")], name="cm")
    session.submit("make it")
    session.wait_for(NUMBERED_MENU, what="permission")
    private_tmux.run("copy-mode", "-t", session.pane_id)
    refused = headspace("send", session.pane_id, "--approve", "-L", private_tmux.name, check=False)
    assert refused.returncode == 1 and "copy mode" in refused.stderr
    private_tmux.send_keys(session.pane_id, "q")  # leave copy mode: the prompt is still there, unanswered
    assert "Do you want to proceed?" in session.wait_for("Do you want to proceed?", timeout=5)
    assert not (session.workdir / "copy.txt").exists() and all(not r.tool_results() for r in fake_api.main_requests)


def test_interrupt_goes_only_to_a_working_claude(claude_session, private_tmux):
    """'send --interrupt' once delivered Esc to whatever ran in the pane and said it worked."""
    private_tmux.new_session("notclaude", width=80, height=24, cwd="/", command=["cat", "-v"])
    refused = headspace("send", "notclaude", "--interrupt", "-L", private_tmux.name, check=False)
    # The service that answers (started for this send) watches no agent in a pane that runs cat.
    assert refused.returncode == 1 and "no agent is watched there; nothing sent" in refused.stderr, refused.stderr
    time.sleep(0.3)  # nothing to wait for: an Esc that reached cat would show by now
    assert "^[" not in private_tmux.capture("notclaude"), "an Esc reached the other program"

    idle = claude_session([], name="idleone")
    refused = headspace("send", idle.pane_id, "--interrupt", "-L", private_tmux.name, check=False)
    assert refused.returncode == 1 and "not working" in refused.stderr
