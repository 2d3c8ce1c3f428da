"""The inbox, live: three real Claude agents waiting at once, answered one after another from the app.

Three Claude Code sessions in the test's private tmux server, each with its
own throwaway HOME, asked one after the other (the scripted API plays its
steps in that order):

* ``perm``: a Bash permission (the ``permission_bash`` scenario), answered
  with ``y`` by keys (no hooks in its HOME);
* ``quest``: a question with numbered options (``question_two_options``),
  answered with ``2`` by keys;
* ``hooked``: the same Bash permission, but with ``headspace hooks install
  --answer`` in its own HOME's Claude config (``.claude/settings.json``, as
  tests/e2e/test_answer_channel.py does), so Claude's answer hook holds the
  dialog and ``y`` goes through the hook, not a key.

Once approved, ``perm`` runs its command and asks again (a Write permission,
the ``permission_write`` scenario): so after the third answer there is an
agent that needs you to move to as well.  Each answer must move the
selection (``app.table.selected_pane_id``) to the next agent that needs you,
longest-waiting first: ``perm`` → ``quest`` → ``hooked`` → ``perm`` again.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from headspace_tui.answering.answerer import Report
from headspace_tui.answering.policy import REACTION_TIME
from headspace_tui.api.facade import ServiceError
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.timeline import describe_event
from headspace_tui.hooks import settings as hook_settings
from headspace_tui.model import AgentState, Channel
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.config import Config
from headspace_tui.state.eventlog import EventLog
from tests.e2e.test_answer_channel import app_for, private_runtime, record_keys
from tests.harness import fake_api as api
from tests.harness.fake_api import block_text
from tests.harness.pane_session import SHELL_PROMPT
from tests.harness.record import DEFAULT_OUT
from tests.harness.scenarios import NUMBERED_MENU, SCENARIOS
from tests.harness.session import ClaudeSession
from tests.ui.apps import make_app, press_as_a_person, readable, service_of
from tests.ui.test_inbox_moves import press_read_at

pytestmark = pytest.mark.e2e

SCENARIO = {s.name: s for s in SCENARIOS}
PERMISSION, QUESTION, SECOND_PERMISSION = SCENARIO["permission_bash"], SCENARIO["question_two_options"], SCENARIO["permission_write"]
HOOK_WAIT = 120  # the answer hook's wait (s): the hooked dialog must still be held when its turn comes


def table_text(app: HeadspaceApp, names: dict[str, str], reports: list[Report]) -> str:
    """The table as the user sees it (selection marked), and the answers' reports: for failure messages."""
    table = app.table
    rows = []
    for pane_id in table.order:
        agent = table.agents[pane_id]
        mark = ">" if pane_id == table.selected_pane_id else " "
        rows.append(f"{mark} {names.get(pane_id, pane_id)} {agent.state.value} since={agent.since:.2f} channel={agent.channel.value!r} answered={agent.answered!r} delivery={agent.delivery!r}")
    said = [f"{names.get(r.pane_id, r.pane_id)}: {r.text} (delivered={r.delivered}, move_on={r.move_on})" for r in reports]
    return "\n".join(rows) + f"\nreports: {said}"


async def wait_until(pilot, predicate: Callable[[], object], what: Callable[[], str], timeout: float = 30.0) -> None:
    """Poll ``predicate``; at the deadline fail with ``what()`` (built then, so it says how things stood)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s: {what()}")
        await pilot.pause(0.05)


def test_each_answer_moves_the_selection_to_the_next_agent_that_needs_you(claude_session, fake_api, private_tmux, tmp_path):
    runtime = private_runtime(tmp_path)
    # One script, played in the order the agents ask: perm, quest, hooked; then perm's second request.
    fake_api.set_script([*PERMISSION.script, *QUESTION.script, *PERMISSION.script, *SECOND_PERMISSION.script])
    sessions: dict[str, ClaudeSession] = {}
    for name, answer_hook in (("perm", False), ("quest", False), ("hooked", True)):
        session = claude_session((), launch=False, name=name, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
        if answer_hook:
            hook_settings.install(session.home / ".claude" / "settings.json", answer_wait=HOOK_WAIT)
        session.launch()
        sessions[name] = session
    perm, quest, hooked = sessions["perm"], sessions["quest"], sessions["hooked"]
    names = {s.pane_id: name for name, s in sessions.items()}

    async def scenario() -> list[tuple]:
        app = app_for(private_tmux, perm, runtime)
        async with app.run_test(size=(160, 48)) as pilot:
            table = app.table
            sent = record_keys(app)
            reports: list[Report] = []
            app.service.on_answer_report(reports.append)

            def now() -> str:
                return table_text(app, names, reports)

            def agent(session: ClaudeSession):
                return table.agents[session.pane_id]

            async def ask(session: ClaudeSession, prompt: str, shown: object) -> None:
                """With headspace watching (its channel open before Claude asks), type ``prompt`` and wait for the dialog."""
                await wait_until(pilot, lambda: session.pane_id in table.agents, lambda: f"{session.name} in the table\n{now()}")
                await asyncio.to_thread(session.submit, prompt)
                await asyncio.to_thread(session.wait_for, shown, timeout=30, what=f"{session.name}'s dialog")

            async def ready(session: ClaudeSession, state: AgentState, channel: Channel, tool: str = "") -> None:
                """The row shows ``state`` with its options, answerable through ``channel``, on screen long enough to be read."""
                pane_id = session.pane_id

                def shown() -> bool:
                    row = table.agents.get(pane_id)
                    if row is None or row.state is not state or not row.observation.option_labels or row.channel != channel:
                        return False
                    return not tool or row.observation.tool == tool

                await wait_until(pilot, shown, lambda: f"{session.name} to be {state.value} with options, channel {channel.value!r}, tool {tool!r}\n{now()}")
                await wait_until(pilot, lambda: readable(app, pane_id), lambda: f"{session.name}'s prompt to be readable")

                def looked_at() -> bool:  # brought under the cursor by the inbox: a person reads it before answering
                    arrival = table.arrival
                    return arrival is None or arrival[0] != pane_id or time.monotonic() - arrival[1] >= REACTION_TIME + 0.05

                await wait_until(pilot, looked_at, lambda: f"{session.name} under the cursor long enough to be read")

            async def answered(session: ClaudeSession, key: str, then: ClaudeSession, what: str) -> None:
                """``key`` pressed with ``session`` selected: the selection must move on to ``then``."""
                assert table.selected_pane_id == session.pane_id, f"{session.name} is not selected before {what}\n{now()}"
                await pilot.press(key)

                def why() -> str:
                    on = table.selected_pane_id
                    return f"after {what}, the selection should have moved to {then.name}, the next agent that needs you; it is on {names.get(on or '', on)}\n{now()}"

                await wait_until(pilot, lambda: table.selected_pane_id == then.pane_id, why)

            await ask(perm, "create the marker file", NUMBERED_MENU)
            await ask(quest, "pick a database", "Enter to select")
            await ask(hooked, "create the marker file", NUMBERED_MENU)
            await ready(perm, AgentState.PERMISSION, Channel.NONE, "Bash")
            await ready(quest, AgentState.QUESTION, Channel.NONE)
            await ready(hooked, AgentState.PERMISSION, Channel.HOOK, "Bash")
            # Nobody picked a row: the inbox starts on the agent waiting longest.
            await wait_until(pilot, lambda: table.order[:3] == [perm.pane_id, quest.pane_id, hooked.pane_id], lambda: f"the three waiting agents first, in the order they asked\n{now()}")
            await wait_until(pilot, lambda: table.selected_pane_id == perm.pane_id, lambda: f"the selection to start on perm, waiting longest\n{now()}")
            # The user picks perm's row: from now on the cursor stays with the agent it is on (the table no
            # longer follows its top row), so only the inbox's own move can take it to the next agent.
            assert table.select(perm.pane_id), f"perm is not in the table\n{now()}"
            await pilot.pause()

            # 1. y on perm's Bash permission, by keys: on to quest (waiting longer than hooked).
            await answered(perm, "y", quest, "y on perm's permission")
            await wait_until(pilot, lambda: agent(perm).answered.startswith("by keys"), lambda: f"perm's row to say it was answered by keys\n{now()}")
            # perm ran its command and asks again (a Write): it needs you again, after the other two.
            await asyncio.to_thread(perm.wait_for, "notes.txt", timeout=30, what="perm's second permission")
            await ready(perm, AgentState.PERMISSION, Channel.NONE, "Write")
            assert table.selected_pane_id == quest.pane_id, f"the selection left quest while perm asked again\n{now()}"

            # 2. 2 on quest's question, by keys: on to hooked (waiting longer than perm's second permission).
            await answered(quest, "2", hooked, "2 on quest's question")
            request = await asyncio.to_thread(fake_api.wait_for, lambda r: any("SQLite" in block_text(b) for b in r.tool_results()), 30)
            assert "Postgres" not in block_text(request.tool_results()[0])
            await wait_until(pilot, lambda: agent(quest).answered.startswith("by keys"), lambda: f"quest's row to say it was answered by keys\n{now()}")

            # 3. y on hooked's permission, through Claude's answer hook: on to perm's second permission.
            await ready(hooked, AgentState.PERMISSION, Channel.HOOK, "Bash")  # the hook still holds it
            await answered(hooked, "y", perm, "y on hooked's permission (through the hook)")
            await wait_until(pilot, lambda: agent(hooked).answered.startswith("via hook"), lambda: f"hooked's row to say the hook answered\n{now()}")
            await asyncio.to_thread(hooked.wait_for, "Allowed by PermissionRequest hook", timeout=20, what="Claude's note that the hook allowed it")
            assert agent(perm).state is AgentState.PERMISSION and agent(perm).observation.tool == "Write", now()
        return sent

    sent = asyncio.run(scenario())
    keys = {name: [args[1:] for args in sent if args[0] == session.pane_id] for name, session in sessions.items()}
    assert keys == {"perm": [("1",)], "quest": [("2",)], "hooked": []}, keys  # y is "1. Yes"; the hook took hooked's y
    assert (perm.workdir / "marker.txt").exists() and (hooked.workdir / "marker.txt").exists()
    assert not (perm.workdir / "notes.txt").exists()  # the second permission is still waiting


# -- issue 37: the next agent under your finger; states that tell the truth after a key --------------


def chain_step(name: str) -> list:
    """Agent ``name``'s script, found by its own words (so agents may ask in any order): one Bash permission, then done."""
    return [
        api.when(f"please ask {name}", api.bash(f"touch {name}.txt && echo made-{name}-end", f"Create {name}.txt")),
        api.when(f"made-{name}-end", api.text(f"{name} is done.")),
    ]


def start_agents(claude_session, fake_api, names: list[str]) -> dict[str, ClaudeSession]:
    """One Claude per name, each at its input box (started side by side: each takes seconds to start)."""
    fake_api.set_script([step for name in names for step in chain_step(name)])
    sessions = {name: claude_session((), launch=False, name=name) for name in names}
    for session in sessions.values():
        session.launch(wait_ready=False)
    for session in sessions.values():
        session.wait_ready()
    return sessions


def said(app: HeadspaceApp) -> list[str]:
    """The lines the app showed (its notifications), oldest first."""
    return [str(n.message) for n in app._notifications]


def reached_api(fake_api, name: str) -> bool:
    """Claude sent the tool's result for agent ``name``'s command to the API: its permission was approved."""
    return any(f"made-{name}-end" in block_text(b) for r in fake_api.main_requests for b in r.tool_results())


async def all_waiting(pilot, app, sessions: dict[str, ClaudeSession]) -> None:
    """Every agent at its permission, with its options on screen, readable for a person (longer than a reaction time)."""
    table = app.table

    def ready() -> bool:
        for session in sessions.values():
            row = table.agents.get(session.pane_id)
            if row is None or row.state is not AgentState.PERMISSION or not row.observation.option_labels:
                return False
            if not readable(app, session.pane_id):
                return False
        return True

    def states() -> str:
        return ", ".join(f"{n}={table.agents[s.pane_id].state.value if s.pane_id in table.agents else '-'}" for n, s in sessions.items())

    await wait_until(pilot, ready, lambda: f"every agent at a readable permission: {states()}", timeout=60)


def test_y_y_80ms_apart_with_two_agents_waiting_approves_exactly_one(claude_session, fake_api, private_tmux, tmp_path):
    """A double tap: the second y finds the first's keys on their way, or the next agent just arrived under the cursor; either way nothing is sent."""
    sessions = start_agents(claude_session, fake_api, ["first", "second"])
    first, second = sessions["first"], sessions["second"]
    names = {s.pane_id: n for n, s in sessions.items()}

    async def scenario() -> list[tuple]:
        app = app_for(private_tmux, first, private_runtime(tmp_path))
        async with app.run_test(size=(160, 48)) as pilot:
            sent = record_keys(app)
            reports: list[Report] = []
            app.service.on_answer_report(reports.append)
            await wait_until(pilot, lambda: all(s.pane_id in app.table.agents for s in sessions.values()), lambda: "both agents in the table")
            for name, session in sessions.items():
                await asyncio.to_thread(session.submit, f"please ask {name}")
                await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30, what=f"{name}'s permission")
            await all_waiting(pilot, app, sessions)
            assert app.table.select(first.pane_id)
            await pilot.pause()
            tapped = time.monotonic()
            await pilot.press("y")
            await asyncio.sleep(0.08)
            # Read 80 ms after the first, whenever this (possibly loaded) process gets to send it: first's keys are
            # on their way, or second came under the cursor after the first y, less than a reaction time before this one.
            await press_read_at(app, pilot, "y", tapped + 0.08)
            # Looked for without pilot.pause (it waits for the app to be idle, which under load
            # can take longer than a reaction time): the y goes the moment the move is made.
            deadline = time.monotonic() + 10
            while app.table.selected_pane_id != second.pane_id:
                assert time.monotonic() < deadline, f"the inbox to move on\n{table_text(app, names, reports)}"
                await asyncio.sleep(0.002)
            arrival = app.table.arrival
            assert arrival is not None and arrival[0] == second.pane_id, table_text(app, names, reports)
            await press_read_at(app, pilot, "y", arrival[1])  # at once: second came under the cursor by itself just now
            assert any("came under the cursor just now" in line for line in said(app)), said(app)
            await wait_until(pilot, lambda: reached_api(fake_api, "first"), lambda: f"first's approval at the API\n{table_text(app, names, reports)}")
            await wait_until(pilot, lambda: any(r.final for r in reports), lambda: f"first's final report\n{table_text(app, names, reports)}")
            assert app.table.selected_pane_id == second.pane_id, table_text(app, names, reports)  # the inbox moved on
            # Long enough for a second approval's keys to have gone and landed (the first took less).
            await pilot.pause(2.0)
            assert app.table.agents[second.pane_id].state is AgentState.PERMISSION, table_text(app, names, reports)
            # Stop on the agent at its dialog: refused with the true reason.
            with pytest.raises(ServiceError, match=r"second:0\.0: a permission dialog is open"):
                await app.service.stop_agent(app.table.agents[second.pane_id])
        return sent

    sent = asyncio.run(scenario())
    assert [args[0] for args in sent] == [first.pane_id], sent  # one key, to first only
    assert not reached_api(fake_api, "second") and not (second.workdir / "second.txt").exists()
    assert (first.workdir / "first.txt").exists()


def test_five_permissions_answered_with_y_in_a_row_all_reach_the_api(claude_session, fake_api, private_tmux, tmp_path):
    """A steady hand, faster than Claude confirms under load: each y finds the next agent already under the cursor, long enough to be its own."""
    names_ = ["one", "two", "three", "four", "five"]
    sessions = start_agents(claude_session, fake_api, names_)
    names = {s.pane_id: n for n, s in sessions.items()}

    async def scenario() -> list[str]:
        app = app_for(private_tmux, sessions["one"], private_runtime(tmp_path))
        order: list[str] = []
        async with app.run_test(size=(160, 48)) as pilot:
            reports: list[Report] = []
            app.service.on_answer_report(reports.append)
            await wait_until(pilot, lambda: all(s.pane_id in app.table.agents for s in sessions.values()), lambda: "the agents in the table", timeout=60)
            for name, session in sessions.items():
                await asyncio.to_thread(session.submit, f"please ask {name}")
                await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30, what=f"{name}'s permission")
            await all_waiting(pilot, app, sessions)
            assert app.table.select(app.table.order[0])
            await pilot.pause()
            answered: str | None = None

            def next_readable() -> bool:
                """The inbox moved off the agent just answered, and what it moved to has been under the cursor a
                reaction time by the app's own clock (a fixed 0.7 s cadence lost this race to a loaded machine)."""
                on, arrival = app.table.selected_pane_id, app.table.arrival
                if on is None or on == answered:
                    return False
                return arrival is None or arrival[0] != on or time.monotonic() - arrival[1] >= REACTION_TIME + 0.05

            def stuck() -> str:
                return f"the inbox to move on from {names.get(answered or '')}; y went to {order}\n{table_text(app, names, reports)}"

            for _ in names_:
                await wait_until(pilot, next_readable, stuck)
                answered = app.table.selected_pane_id
                assert answered is not None
                order.append(names[answered])
                # Taken: the inbox moves on from it (or, the last one, its approval reaches the API).
                moved = lambda answered=answered: app.table.selected_pane_id != answered or reached_api(fake_api, names[answered])  # noqa: E731
                await press_as_a_person(pilot, app, answered, "y", moved, f"{names[answered]}'s answer taken", timeout=60)
            await wait_until(
                pilot,
                lambda: all(reached_api(fake_api, name) for name in names_),
                lambda: f"approvals at the API: {[n for n in names_ if reached_api(fake_api, n)]}; y went to {order}\n{table_text(app, names, reports)}\nsaid: {said(app)}",
                timeout=60,
            )
        return order

    order = asyncio.run(scenario())
    assert sorted(order) == sorted(names_), order  # each y went to another agent
    assert all((s.workdir / f"{n}.txt").exists() for n, s in sessions.items())


def test_stop_works_after_x_c_x(claude_session, fake_api, private_tmux, tmp_path):
    """Interrupt, nudge, interrupt, then Stop: the agent sits idle at its box, and /exit goes (it used to be refused for good: "a key is on its way")."""
    fake_api.set_script([api.text("Thinking about it. " * 200, seconds=60), api.text("Continuing. " * 200, seconds=60)])
    session = claude_session((), name="agent")

    async def scenario() -> bool:
        app = app_for(private_tmux, session, private_runtime(tmp_path))
        async with app.run_test(size=(160, 48)) as pilot:
            reports: list[Report] = []
            app.service.on_answer_report(reports.append)
            table = app.table

            def row():
                return table.agents[session.pane_id]

            def now() -> str:
                return table_text(app, {session.pane_id: "agent"}, reports)

            async def press(key: str, state: AgentState, then: AgentState) -> None:
                await wait_until(pilot, lambda: row().state is state, lambda: f"the agent {state.value} before {key}\n{now()}")
                table.select(session.pane_id)
                await pilot.pause(REACTION_TIME + 0.1)
                done = len([r for r in reports if r.final])
                await pilot.press(key)
                await wait_until(pilot, lambda: len([r for r in reports if r.final]) > done, lambda: f"{key}'s final report\n{now()}")
                assert reports[-1].delivered, now()
                await wait_until(pilot, lambda: row().state is then, lambda: f"the agent {then.value} after {key}\n{now()}")

            await wait_until(pilot, lambda: session.pane_id in table.agents, lambda: "the agent in the table")
            await asyncio.to_thread(session.submit, "think slowly")
            # Each interrupt comes once the reply streams: Claude puts a prompt interrupted before any reply back in its
            # box, and a nudge then (rightly) refuses to type into it (seen under load: working, but nothing streamed yet).
            await asyncio.to_thread(session.wait_for, "Thinking about it.", timeout=30)
            await press("x", AgentState.WORKING, AgentState.IDLE)
            await press("c", AgentState.IDLE, AgentState.WORKING)
            await asyncio.to_thread(session.wait_for, "Continuing.", timeout=30)
            await press("x", AgentState.WORKING, AgentState.IDLE)
            assert not service_of(app)._answerer.busy(session.pane_id), now()
            # The command machine read Claude's interrupt notes from the transcript: the command ended, not "commanded".
            journal = service_of(app)._journal
            assert journal is not None

            def command_state() -> str:
                history = journal.agents.get(row().key)
                return history.commands.state.value if history is not None and history.commands.history else "?"

            await wait_until(pilot, lambda: command_state() == "idle", lambda: f"the command machine idle (it is {command_state()})\n{now()}", timeout=15)
            return await app.service.stop_agent(row())

    closed = asyncio.run(scenario())
    assert closed is False  # the pane's shell stays; Claude itself is gone
    session.wait_for(SHELL_PROMPT, timeout=20, what="the shell after /exit")


FAKE_AGENT = Path(__file__).resolve().parents[2] / "benchmarks" / "fake_agent.py"


def test_a_key_that_reached_the_pane_but_never_landed_is_in_the_event_log(private_tmux, tmp_path):
    """y types "1" into a pane whose dialog never moves: "not delivered" within confirm_timeout, on the row and in the event log.

    Claude itself stands in here as ``benchmarks/fake_agent.py`` (real
    recorded Claude screens, a process named ``claude``, its terminal raw and
    silent): the real binary always reacts to a digit at its menu, and a
    Claude that reads a key and does nothing (the issue's case) cannot be
    had from it on demand.  tmux, the app, the send and the log are real.
    """
    corpus = DEFAULT_OUT / "alt" / "120x40"
    drawn = tmp_path / "drawn"
    drawn.mkdir()
    command = ["bash", "-c", f"stty raw -echo; exec -a claude {sys.executable} -S {FAKE_AGENT} {corpus} {drawn}"]
    pane_id = private_tmux.new_session("frozen", width=120, height=40, cwd=str(tmp_path), command=command)
    journal = Journal(EventLog(tmp_path / "events.db"))

    async def scenario() -> tuple[list, str, list[Report]]:
        app = make_app(private_tmux.name, tmp_path, journal=journal, config=Config(confirm_timeout=1.0))
        async with app.run_test(size=(160, 48)) as pilot:
            sent = record_keys(app)
            reports: list[Report] = []
            app.service.on_answer_report(reports.append)
            await wait_until(pilot, lambda: pane_id in app.table.agents, lambda: "the agent in the table")
            pid = int(private_tmux.run("display-message", "-p", "-t", pane_id, "#{pane_pid}").strip())
            os.kill(pid, signal.SIGUSR2)  # the permission dialog, drawn now
            await wait_until(pilot, lambda: (drawn / (pane_id.lstrip("%") + ".drawn")).exists(), lambda: "the dialog drawn")
            session = SimpleNamespace(pane_id=pane_id)
            await all_waiting(pilot, app, {"frozen": session})  # type: ignore[dict-item]
            assert app.table.select(pane_id)
            await press_as_a_person(pilot, app, pane_id, "y", lambda: any(r.final for r in reports), "the final report", timeout=20)
            await wait_until(pilot, lambda: app.table.agents[pane_id].delivery.startswith("not delivered"), lambda: f"the row's mark: {app.table.agents[pane_id].delivery!r}")
            return sent, app.table.agents[pane_id].delivery, reports

    sent, delivery, reports = asyncio.run(scenario())
    assert [args[:2] for args in sent] == [(pane_id, "1")], sent  # the key reached the pane
    final = [r for r in reports if r.final]
    assert len(final) == 1 and not final[0].delivered and "not delivered" in final[0].text, final
    answers = [e.payload for e in journal.log.query(kind="answer")]
    assert len(answers) == 1, answers
    (answer,) = answers
    assert answer["channel"] == "keys" and answer["delivered"] is False and "not delivered" in answer["outcome"], answer
    assert answer["what"].endswith("→ 1. Yes"), answer
    line = describe_event(journal.log.query(kind="answer")[0], {})  # the timeline (t) says it too
    assert line is not None and "by keys: " in line.plain and "not delivered" in line.plain, line
    journal.close()
