"""The app's own behaviour on a live private tmux server: discovery, exit, filter, help, remapped keys."""

from __future__ import annotations

import asyncio
import json
import shlex

import pytest

from headspace_tui.app.screens.help import HelpScreen
from headspace_tui.model import AgentState
from headspace_tui.shared.config import parse_config
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU
from tests.harness.session import SHELL_PROMPT
from tests.ui.apps import live_row, make_app, screen_open, service_of, wait_until
from tests.ui.test_app_live import select_agent

pytestmark = pytest.mark.e2e


def test_agents_appear_exit_and_leave_without_restart(claude_session, fake_api, private_tmux, tmp_path):
    first = claude_session(name="first")

    async def scenario():
        app = make_app(private_tmux.name, tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: first.pane_id in app.table.agents, "the first agent")
            # A plain shell pane is not an agent.
            private_tmux.new_session("plain", width=80, height=24, cwd="/", command=["bash", "--norc", "-i"])
            second = await asyncio.to_thread(claude_session, name="second")
            await wait_until(pilot, lambda: second.pane_id in app.table.agents, "the new agent", timeout=15)
            assert len(app.table.agents) == 2

            # Claude exits; the shell is back: the row stays, as exited.
            await asyncio.to_thread(second.submit, "/exit")
            await asyncio.to_thread(second.wait_for, lambda s: SHELL_PROMPT.search(s.rstrip()) is not None, timeout=20)
            await wait_until(pilot, lambda: app.table.agents[second.pane_id].state is AgentState.EXITED, "exited", timeout=15)
            assert app.table._order[-1] == second.pane_id  # exited sorts last

            # The pane closes: the row leaves.
            private_tmux.kill_session("second")
            await wait_until(pilot, lambda: second.pane_id not in app.table.agents, "the closed pane to leave", timeout=15)
            assert list(app.table.agents) == [first.pane_id]

    asyncio.run(scenario())


def test_filter_help_and_a_remapped_approve_key(claude_session, fake_api, private_tmux, tmp_path):
    session = claude_session([api.bash("touch remapped.txt", "Create a file"), api.text("ok")], name="remap")
    other = claude_session(name="other")
    session.submit("create it")
    session.wait_for(NUMBERED_MENU, what="the permission menu")
    config = parse_config({"keys": {"approve": "a"}})

    async def scenario():
        app = make_app(private_tmux.name, tmp_path, config=config)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.PERMISSION)
            await wait_until(pilot, lambda: other.pane_id in app.table.agents, "the second agent")

            await pilot.press("question_mark")
            await wait_until(pilot, lambda: screen_open(app, HelpScreen), "the help screen")
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("y")  # the old key does nothing on the help screen, nor anywhere now
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen), "the help screen to close")
            assert not isinstance(app.screen, HelpScreen)

            await pilot.press("slash", *"other")
            await wait_until(pilot, lambda: app.table._order == [other.pane_id], "the filter to leave one row")
            assert app.table._order == [other.pane_id]
            await pilot.press("escape")  # closes the filter; must not interrupt an agent
            await wait_until(pilot, lambda: len(app.table._order) == 2, "both rows back")
            assert len(app.table._order) == 2

            await select_agent(pilot, app, session.pane_id, AgentState.PERMISSION)
            await pilot.press("y")
            await pilot.pause(1.0)  # nothing to wait for: had y approved, Claude would have made the file by now
            assert not (session.workdir / "remapped.txt").exists()
            await pilot.press("a")
            await asyncio.to_thread(fake_api.wait_for, lambda r: bool(r.tool_results()), 30)

    asyncio.run(scenario())
    assert (session.workdir / "remapped.txt").exists()


def test_no_tmux_server_is_a_clear_empty_state(tmp_path):
    async def scenario():
        app = make_app("headspace-test-no-server-here", tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            empty = app.query_one("#empty")
            await wait_until(pilot, lambda: "no tmux server" in str(empty.render()).lower(), "the empty state")
            assert app.table.agents == {}

    asyncio.run(scenario())


def test_enter_outside_tmux_quits_with_the_attach_command(claude_session, private_tmux, monkeypatch, tmp_path):
    monkeypatch.delenv("TMUX", raising=False)
    session = claude_session(name="jumpy")

    async def scenario():
        app = make_app(private_tmux.name, tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.IDLE)
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.return_value is not None, "the app to end with the attach command")
        return app.return_value

    command = asyncio.run(scenario())
    # The pane id alone takes tmux to session, window and pane (checked with tmux 3.3a).
    assert shlex.split(command) == ["tmux", "-L", private_tmux.name, "attach", "-t", session.pane_id]


def test_e_explains_the_state_with_every_source(claude_session, fake_api, private_tmux, tmp_path):
    from headspace_tui.app.screens.why import WhyScreen

    session = claude_session([api.bash("touch why.txt", "Make a file")], name="why")
    session.submit("make it")
    session.wait_for(NUMBERED_MENU, what="the permission menu")

    async def scenario():
        app = make_app(private_tmux.name, tmp_path, claude_home=session.home)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.PERMISSION)
            await wait_until(pilot, lambda: "status-file" in service_of(app)._fleet.first.panes[session.pane_id].fuser.verdicts, "the status file")
            await pilot.press("e")
            await wait_until(pilot, lambda: screen_open(app, WhyScreen), "the why screen")
            assert isinstance(app.screen, WhyScreen)
            sources = [source for source, _ in app.screen.explanation.verdicts]
            assert set(sources) == {"screen", "status-file"}
            screen_verdict = dict(app.screen.explanation.verdicts)["screen"]
            assert any(e.rule == "permission-question" for e in screen_verdict.observation.evidence)
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, WhyScreen), "the why screen to close")
            assert not isinstance(app.screen, WhyScreen)

    asyncio.run(scenario())


async def _approve_with_y(pilot, app, session, prompt: str, reply: str, journal=None):
    """Give the idle agent ``prompt``, approve its permission dialog with ``y``, wait for Claude's ``reply`` and the end of the turn.

    With ``journal``, the key waits until the journal has read the call's line from the transcript: keys are
    matched only to a call read before they began (evidence.py), and under load the screen's dialog can be
    seen before that line is read; a test of what comes after the key needs the call known first.
    """
    from headspace_tui.service.records.command_tracker import who
    from tests.harness.scenarios import TURN_DONE

    await select_agent(pilot, app, session.pane_id, AgentState.IDLE)
    await asyncio.to_thread(session.submit, prompt)
    await select_agent(pilot, app, session.pane_id, AgentState.PERMISSION)
    await wait_until(pilot, lambda: app.selected_agent().observation.option_labels, "the dialog's options on screen")
    if journal is not None:
        key = who(live_row(app, session.pane_id))
        calls = lambda: journal.evidence._calls.get(key, {}).values()  # noqa: E731 (private: what evidence.py has read)
        await wait_until(pilot, lambda: any(call.outcome is None for call in calls()), "the call's line read from the transcript")
    await pilot.press("y")
    await asyncio.to_thread(session.wait_for, lambda s: reply in s and TURN_DONE.search(s) is not None, timeout=30)
    return live_row(app, session.pane_id)


def test_the_transcript_gives_the_command_outcome_and_timeline(claude_session, fake_api, private_tmux, tmp_path):
    from headspace_tui.app.screens.timeline import TimelineScreen, describe_event
    from headspace_tui.service.records.journal import Journal
    from headspace_tui.state.eventlog import EventLog

    session = claude_session([api.bash("touch ran.txt && echo '=== 12 passed in 0.10s ==='", "Run the tests"), api.text("All green.")], name="tl")
    journal = Journal(EventLog(tmp_path / "events.db"))

    async def scenario():
        app = make_app(private_tmux.name, tmp_path, claude_home=session.home, journal=journal)
        async with app.run_test(size=(160, 48)) as pilot:
            # With the journal: Claude's word is awaited below, and keys are matched only to a call read before they went.
            agent = await _approve_with_y(pilot, app, session, "run the tests", "All green.", journal)
            await wait_until(pilot, lambda: agent.outcome == "tests passed: 12 passed", "the outcome on the row")
            assert agent.command == "run the tests"
            # Claude writes its last turn to the transcript a moment after drawing it: wait for it, not a fixed time.
            # History is kept under the agent's identity (host, server, pane, Claude process), not its %N.
            assert agent.key.startswith("local|") and agent.key.split("|")[2] == session.pane_id and str(agent.agent_pid) in agent.key
            completed = lambda: any(e.kind == "state_transition" and e.payload["to"] == "complete" for e in journal.timeline(agent.key))  # noqa: E731
            await wait_until(pilot, completed, "the command's completion in the journal")
            # headspace's keys answered the dialog; Claude's transcript confirms it (a key in the dialog decided).
            confirmed = lambda: [e.payload for e in journal.timeline(agent.key) if e.kind == "answer_evidence"]  # noqa: E731
            await wait_until(pilot, confirmed, "Claude's word on the answer")
            assert [(w["channel"], w["tool"], w["first"]) for w in confirmed()] == [("keys", "Bash", "headspace")]
            await pilot.press("t")
            await wait_until(pilot, lambda: screen_open(app, TimelineScreen), "the timeline")
            assert isinstance(app.screen, TimelineScreen)
            kinds = [e.kind for e in app.screen.events]
            assert "agent_state" in kinds and "state_transition" in kinds and "outcome" in kinds
            shown = "\n".join(line.plain for line in map(lambda e: describe_event(e, app.state_styles), app.screen.events) if line is not None)
            assert "by keys: Bash" in shown and "Claude's transcript: headspace answered first (a key in the dialog allowed it)" in shown
            commands = [(e.payload["from"], e.payload["to"]) for e in app.screen.events if e.kind == "state_transition"]
            assert commands[0] == ("idle", "commanded") and commands[-1][1] == "complete"
            assert "waits today (sum): " in str(app.query_one("#summary").render())

    asyncio.run(scenario())
    journal.close()


def test_keys_recorded_after_claudes_result_was_read_still_get_claudes_word(claude_session, fake_api, private_tmux, tmp_path, monkeypatch):
    """Keys are recorded once the pane moved on; Claude writes the result up to 25 ms before that, and a quick read of the transcript
    came first: the answer found no call to wait for, and Claude's word was lost (a CI failure).  Here that order is made
    certain: the desk's record of the keys is held until the result is in the journal's hands."""
    from headspace_tui.answering.desk import AnswerDesk
    from headspace_tui.service.records.journal import Journal
    from headspace_tui.state.eventlog import EventLog

    session = claude_session([api.bash("touch late.txt", "Make a file"), api.text("Made.")], name="late")
    journal = Journal(EventLog(tmp_path / "events.db"))
    held: list = []
    record = AnswerDesk.record

    def held_record(desk, agent, channel, what, call=None, **kw):
        held.append(lambda: record(desk, agent, channel, what, call, **kw))

    monkeypatch.setattr(AnswerDesk, "record", held_record)

    async def scenario():
        app = make_app(private_tmux.name, tmp_path, claude_home=session.home, journal=journal)
        async with app.run_test(size=(160, 48)) as pilot:
            agent = await _approve_with_y(pilot, app, session, "make the file", "Made.", journal)
            completed = lambda: any(e.kind == "state_transition" and e.payload["to"] == "complete" for e in journal.timeline(agent.key))  # noqa: E731
            await wait_until(pilot, completed, "the command's completion: the result was read")
            (late,) = held
            assert not [e for e in journal.timeline(agent.key) if e.kind == "answer" or e.kind == "answer_evidence"]
            late()
            rows = [e.payload for e in journal.timeline(agent.key) if e.kind in ("answer", "answer_evidence")]
            assert [(w["channel"], w.get("tool"), w["first"]) for w in rows] == [("keys", "Bash", "headspace"), ("keys", "Bash", "headspace")]
            assert json.loads(rows[1]["input"])["command"] == "touch late.txt"

    asyncio.run(scenario())
    journal.close()


def test_the_preview_scrolls_back_through_the_panes_history_and_esc_returns_to_live(private_tmux, tmp_path):
    pane = private_tmux.new_session("history", width=80, height=24, cwd="/", command=["bash", "--norc", "--noprofile", "-i"])
    private_tmux.send_text(pane, "for i in $(seq 1 300); do echo history-line-$i; done")
    private_tmux.send_keys(pane, "Enter")

    async def scenario():
        app = make_app(private_tmux.name, tmp_path, include_all=True)  # a plain shell is a row with --all
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: pane in app.table.agents, "the shell pane")
            app.table.select(pane)
            preview = app.query_one("#preview")
            await wait_until(pilot, lambda: "history-line-300" in "\n".join(r.plain for r in preview._rows), "the live pane")
            live = [r.plain for r in preview._rows]
            assert not any("history-line-100" == line.strip() for line in live)
            # Eight pages back: the first [ fetches the pane's history and shows it a page back;
            # each next one goes a page further, up to the top.
            await pilot.press("left_square_bracket")
            await wait_until(pilot, lambda: preview.in_history, "the history")
            at_top = lambda: preview.back == max(0, len(preview._history) - max(1, preview.content_size.height))  # noqa: E731
            for _ in range(7):
                back = preview.back
                await pilot.press("left_square_bracket")
                await wait_until(pilot, lambda back=back: preview.back > back or at_top(), "a page further back")
            shown = "\n".join(r.plain for r in preview._rows)
            assert "history-line-300" not in shown and "history-line-1" in shown, shown[-300:]
            assert "history" in str(preview.border_title) and "Esc" in str(preview.border_title)
            back = preview.back
            await pilot.press("right_square_bracket")
            await wait_until(pilot, lambda: preview.back != back, "a page forward")
            assert preview.in_history and preview.back > 0
            await pilot.press("escape")  # one key: live again
            await wait_until(pilot, lambda: not preview.in_history, "the live pane again")
            assert not preview.in_history
            assert "history-line-300" in "\n".join(r.plain for r in preview._rows)

    asyncio.run(scenario())
