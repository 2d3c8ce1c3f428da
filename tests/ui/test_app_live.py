"""The app against live Claude sessions: one key in the app, checked at the scripted API.

Each test brings a real Claude session to a prompt (synchronously, before the
app starts), then drives the real app with Textual's pilot, pointed at the
same private tmux server.  What counts is what Claude sent back to the API.
"""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from textual.widgets import Input

from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.reply import ReplyScreen
from headspace_tui.model import AgentState
from tests.harness import fake_api as api
from tests.harness.fake_api import block_text
from tests.harness.scenarios import INPUT_QUESTION, NUMBERED_MENU, QUESTION_DB, TURN_DONE
from tests.ui.apps import live_row, make_app, notices, press_as_a_person, readable, ringer_of, screen_open, service_of, wait_until

pytestmark = pytest.mark.e2e


def app_for(private_tmux, session) -> HeadspaceApp:
    return make_app(private_tmux.name, session.root, claude_home=session.home)


async def select_agent(pilot, app: HeadspaceApp, pane_id: str, state: AgentState) -> None:
    """Wait until the table shows ``pane_id`` in ``state``, then put the cursor on it."""
    table = app.table
    await wait_until(pilot, lambda: pane_id in table.agents and table.agents[pane_id].state is state, f"{pane_id} to be {state.value}")
    table.select(pane_id)  # as a user picking the row: the selection stays with that agent
    await wait_until(pilot, lambda: (agent := app.selected_agent()) is not None and agent.pane_id == pane_id, f"the cursor on {pane_id}")
    assert app.selected_agent().pane_id == pane_id
    if state.is_menu:
        # As a person would: the options are on screen and have been there long
        # enough to be read (the app refuses keys for a prompt shown for less).
        agent = live_row(app, pane_id)
        await wait_until(pilot, lambda: agent.observation.option_labels, "the menu's options on screen")
        await wait_until(pilot, lambda: readable(app, pane_id), "the prompt to be readable")


def run(coro):
    return asyncio.run(coro)


def test_y_approves_a_permission(claude_session, fake_api, private_tmux):
    session = claude_session([api.bash("touch app-approved.txt && echo approved-by-app", "Create a file"), api.text("Done approving.")])
    session.submit("create the file")
    session.wait_for(NUMBERED_MENU, what="the permission menu")

    async def scenario():
        app = app_for(private_tmux, session)
        forked: list = []
        service_of(app)._server.send_keys = lambda *args, **kwargs: forked.append(args)  # must not be needed
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.PERMISSION)
            assert app.selected_agent().observation.tool == "Bash"
            # The row comes before the control client (read by a capture first): the key is to go through the client.
            await wait_until(pilot, lambda: service_of(app)._fleet.first.sessions.clients, "a control client to serve the session")
            await press_as_a_person(pilot, app, session.pane_id, "y", lambda: fake_api.seen(lambda r: bool(r.tool_results())), "the command's result at the API", timeout=30)
            request = await asyncio.to_thread(fake_api.wait_for, lambda r: bool(r.tool_results()), 30)
            assert "approved-by-app" in block_text(request.tool_results()[0])
            await wait_until(pilot, lambda: app.table.agents[session.pane_id].state is AgentState.IDLE, "idle after approval")
        assert forked == []  # the key went through the control client, not a forked tmux

    run(scenario())
    assert (session.workdir / "app-approved.txt").exists()


def test_n_denies_by_label(claude_session, fake_api, private_tmux):
    session = claude_session([api.bash("touch app-denied.txt", "Create a file")])
    session.submit("create the file")
    session.wait_for(NUMBERED_MENU, what="the permission menu")

    async def scenario():
        app = app_for(private_tmux, session)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.PERMISSION)
            await press_as_a_person(pilot, app, session.pane_id, "n", lambda: "What should Claude do instead?" in session.screen(), "Claude asking what instead", timeout=15)

    run(scenario())
    assert not (session.workdir / "app-denied.txt").exists()
    assert all(not r.tool_results() for r in fake_api.main_requests)


def test_2_picks_option_two_of_a_question(claude_session, fake_api, private_tmux):
    session = claude_session([api.ask(QUESTION_DB), api.text("SQLite then.")])
    session.submit("pick a database")
    session.wait_for("Enter to select", what="the question")

    async def scenario():
        app = app_for(private_tmux, session)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.QUESTION)
            assert app.selected_agent().observation.option_labels[:2] == ["Postgres", "SQLite"]
            await pilot.press("2")
            request = await asyncio.to_thread(fake_api.wait_for, lambda r: bool(r.tool_results()), 30)
            answer = block_text(request.tool_results()[0])
            assert "SQLite" in answer and "Postgres" not in answer

    run(scenario())


def test_r_replies_with_text(claude_session, fake_api, private_tmux):
    session = claude_session([api.text(INPUT_QUESTION), api.text("Leaving them.")])
    session.submit("fix the flaky test")
    session.wait_for("leave them alone?", what="the plain-text question")

    async def scenario():
        app = app_for(private_tmux, session)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.INPUT)
            await pilot.press("r")
            await wait_until(pilot, lambda: screen_open(app, ReplyScreen) and isinstance(app.focused, Input), "the reply box, open and focused")
            # Letters typed into the reply box must not act on the agent (y, n, 2 ...).
            await pilot.press(*"leave them, try #2 y n")
            await pilot.press("enter")
            request = await asyncio.to_thread(fake_api.wait_for, lambda r: "leave them, try #2 y n" in r.user_text(), 30)
            assert request.tool_results() == []

    run(scenario())


def test_c_nudges_an_idle_agent(claude_session, fake_api, private_tmux):
    session = claude_session([api.text("First part done."), api.text("Continuing now.")])
    session.submit("do the first part")
    session.wait_for(lambda s: "First part done." in s and TURN_DONE.search(s) is not None, what="the first turn")

    async def scenario():
        app = app_for(private_tmux, session)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.IDLE)
            await pilot.press("c")
            await asyncio.to_thread(fake_api.wait_for, lambda r: r.user_text().strip().endswith("continue"), 30)

    run(scenario())


def test_a_prompt_that_changed_after_looking_gets_no_keys(claude_session, fake_api, private_tmux, app_transport):
    """The table shows prompt A; the pane moves on to prompt B; pressing y must send nothing."""
    session = claude_session(
        [
            api.bash("touch first.txt", "First command"),
            api.bash("touch second.txt", "Second command"),
            api.text("Both done."),
        ]
    )
    session.submit("make two files")
    session.wait_for("touch first.txt", what="prompt A")
    session.wait_for(NUMBERED_MENU, what="prompt A's menu")

    async def scenario():
        app = app_for(private_tmux, session)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.PERMISSION)
            seen = app.selected_agent().observation
            assert seen.prompt.detail == "touch first.txt"
            # Freeze what the user sees: stop the detectors, so the table keeps prompt A.
            app.workers.cancel_group(app, "monitor")
            await wait_until(pilot, lambda: all(w.is_finished for w in app.workers if w.group == "monitor"), "the monitor to stop")
            # Meanwhile, someone answers A in the pane itself; Claude shows prompt B.
            await asyncio.to_thread(session.answer, "1")
            await asyncio.to_thread(session.wait_for, "touch second.txt", timeout=20)
            await asyncio.to_thread(session.wait_stable, quiet=0.5, timeout=3, strict=False)
            requests_before = len(fake_api.main_requests)
            assert app.selected_agent().observation.id == seen.id  # the table still shows A (the same reading; rows are copies)

            await pilot.press("y")
            await pilot.pause(1.5)  # nothing to wait for: a key that went to prompt B would show in the pane and at the API by now
            assert session.info().current_command == "claude"
            assert "touch second.txt" in session.screen() and "Do you want to proceed?" in session.screen()
            assert len(fake_api.main_requests) == requests_before  # B was not answered
            if app_transport == "in-process":
                # The row's word, as the service keeps it: the freeze above stopped the service's run, and with it the
                # stream that would bring the changed row to this client (the display is the stream's, tested elsewhere).
                # The service still held A: its guard's own read of the pane found B and sent nothing.
                assert service_of(app).agent(session.pane_id).delivery == "not sent"
            else:
                # A resident service watched on (the freeze stopped only this client's stream): it knew B, and
                # refused the answer drawn for A before any read, saying so to the user.
                assert service_of(app).agent(session.pane_id).observation.prompt.detail == "touch second.txt"
                assert any("the prompt changed since it was shown" in note for note in notices(app)), notices(app)

    run(scenario())
    assert (session.workdir / "first.txt").exists() and not (session.workdir / "second.txt").exists()


def test_markup_in_a_question_and_a_reply_is_just_text(claude_session, fake_api, private_tmux):
    """A question containing 'a[/b]' (the reply screen's label) and a reply 'use arr[/] ok' (the toast) once crashed the app."""
    session = claude_session([api.text("Should I rename a[/b] to c[/d]?"), api.text("Renamed.")])
    session.submit("tidy the names")
    session.wait_for("c[/d]?", what="the question")

    async def scenario():
        app = app_for(private_tmux, session)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.INPUT)
            await pilot.press("r")
            await wait_until(pilot, lambda: screen_open(app, ReplyScreen), "the reply screen")
            assert "a[/b]" in str(app.screen.query_one("Label.dim").render())
            await pilot.press(*"use arr[/] ok")
            await pilot.press("enter")
            await asyncio.to_thread(fake_api.wait_for, lambda r: "use arr[/] ok" in r.user_text(), 30)
            await wait_until(pilot, lambda: any("use arr[/] ok" in str(n.message) for n in app._notifications), "the toast")
            assert app.is_running

    run(scenario())


def test_esc_never_reaches_an_agent_and_x_interrupts_only_a_working_one(claude_session, fake_api, private_tmux):
    # Not a bare "sleep": 2.1.330 refuses long sleeps in the foreground.
    session = claude_session([api.bash("bash deploy.sh", "Wait for the deploy")], files={"deploy.sh": "sleep 30\necho long-done\n"})
    session.submit("run the long command")
    session.wait_for(NUMBERED_MENU, what="the permission dialog")

    async def scenario():
        app = app_for(private_tmux, session)
        reports: list = []
        app.service.on_answer_report(reports.append)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.PERMISSION)
            await pilot.press("escape")  # every TUI user's "close": must not cancel the live dialog
            await pilot.press("x")  # interrupt is for a working agent, not a dialog
            await pilot.pause(1.0)  # nothing to wait for: a key that reached Claude would have closed the dialog by now
            assert NUMBERED_MENU.search(session.screen()), "the permission dialog was cancelled"
            assert app.table.agents[session.pane_id].state is AgentState.PERMISSION
            await press_as_a_person(pilot, app, session.pane_id, "y", lambda: bool(reports), "the approval's first report")
            await select_agent(pilot, app, session.pane_id, AgentState.WORKING)
            # x is refused while the approval's keys are still on their way ("a key is already on its way"):
            # until its final report (the first one only says the keys went).
            await wait_until(pilot, lambda: any(r.final for r in reports), "the approval's final report")
            await pilot.press("x")
            await wait_until(pilot, lambda: app.table.agents[session.pane_id].state is not AgentState.WORKING, "Claude to stop", timeout=15)
            assert "long-done" not in session.screen()

    run(scenario())


# -- issue 23: retrying is working; a dialog taller than the pane ---------------------
STALL_RETRIED = re.compile(r"retrying\b.*attempt [3-9]/\d+", re.I)


def test_a_stalled_request_is_working_with_its_retry_mark_notifies_nobody_and_x_stops_it(claude_session, fake_api, private_tmux):
    """The scripted API accepts the request and sends nothing; Claude's timeout fires and it retries."""
    session = claude_session([api.stall()], extra_env={"API_TIMEOUT_MS": "3000"})

    async def scenario():
        app = app_for(private_tmux, session)
        written: list[str] = []
        app._write_terminal = written.append  # type: ignore[method-assign]  # what would reach the user's terminal
        async with app.run_test(size=(120, 30)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.IDLE)
            await asyncio.to_thread(session.submit, "hello")
            await wait_until(pilot, lambda: app.table.agents[session.pane_id].state is AgentState.WORKING, "the turn to start")
            agent = live_row(app, session.pane_id)
            started = agent.since
            states, marks = set(), []
            deadline = time.monotonic() + 60
            while not (marks and STALL_RETRIED.search(session.screen())):
                assert time.monotonic() < deadline, f"no third attempt: {session.screen()}"
                states.add(agent.state)
                if agent.observation.retrying:
                    marks.append(app.table.get_row(session.pane_id)[-1].plain)
                await pilot.pause(0.1)
            # Working all along, one clock for the whole turn, the mark on the row.
            assert states == {AgentState.WORKING}, states
            # One clock: no retry restarted it (each attempt waits seconds first).  Claude's own claim may still refine
            # the turn's start by a few ms after it was first read, as it did once under load (28 ms).
            assert abs(agent.since - started) < 1.0, (started, agent.since)
            assert any(m.startswith("retrying ") and "/10" in m for m in marks), marks
            # Nothing needed the user: no notification was due or rung, nothing was written.
            assert ringer_of(app).notifier.next_due() is None and ringer_of(app).rung == [] and written == []
            assert app.check_action("interrupt", ()) is True  # x is offered: the footer shows it
            await pilot.press("x")
            await wait_until(pilot, lambda: agent.state is AgentState.IDLE, "Claude to stop retrying", timeout=20)
            # It stopped for real: no turn on screen, and no further attempt reaches the API.
            tries = len(fake_api.main_requests)
            await pilot.pause(6.0)  # two of Claude's 3 s timeouts
            assert len(fake_api.main_requests) == tries
            assert not re.search(r"esc to interrupt|retrying", session.screen(), re.I)

    run(scenario())


# Four options whose descriptions are far too long for 24 rows: Claude scrolls the dialog.
QUESTION_TALL = api.question(
    "Which rollout plan should the deploy follow this week?",
    [
        (label, f"{label} means: " + " ".join([f"step {n} of the {label.lower()} rollout is checked by the on-call engineer before the next one starts;" for n in range(1, 4)]))
        for label in ("Canary first", "Blue green", "Region by region", "All at once")
    ],
    header="Rollout",
)


def test_a_question_too_tall_for_an_80x24_pane_is_answered_by_the_label_on_screen(claude_session, fake_api, private_tmux):
    session = claude_session([api.ask(QUESTION_TALL), api.text("Rolling out then.")], width=80, height=24)
    session.submit("plan the rollout")
    session.wait_for("Enter to select", what="the question")
    session.wait_stable(quiet=0.8, timeout=10, strict=False)
    labels = [o["label"] for o in QUESTION_TALL["options"]]
    # It really does not fit: some option of ours is not on screen.
    assert not all(label in session.screen() for label in labels), session.screen()

    async def scenario():
        app = app_for(private_tmux, session)
        async with app.run_test(size=(80, 24)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.QUESTION)
            prompt = app.table.agents[session.pane_id].observation.prompt
            shown = [o for o in prompt.options if o.label in labels]
            assert shown and (prompt.hidden_options or prompt.more_below), prompt
            choice = shown[-1]  # the last of ours on screen: not the one under the cursor
            assert choice.key != "1" and not choice.selected
            await pilot.press(choice.key)
            request = await asyncio.to_thread(fake_api.wait_for, lambda r: bool(r.tool_results()), 30)
            answer = block_text(request.tool_results()[0])
            assert choice.label in answer
            assert not any(other in answer for other in labels if other != choice.label)

    run(scenario())
