"""The monitor recovers by itself: a restarted tmux server, a dead control client,
renamed and moved panes, an error inside a session's detector.

Real tmux (a private server), real Claude Code against the scripted API,
headspace's monitor as the app runs it.  What is timed is which way a
change was found: by tmux's own news (a control client's notification, the
server's socket) rather than by the full look the monitor takes every
DISCOVERY_INTERVAL (30 s) without any, and with no server, by the socket
rather than the retry (stretched here to the same 30 s).  A third of that
tells the two apart on a machine loaded far beyond CI's (a busy run once
took 2.7 s where a quiet one takes 0.2); how fast it is, is the benchmarks'
to say.  The control client is killed by its own process id (our child).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from headspace_tui.events import Event, Notice, ProblemChanged
from headspace_tui.model import AgentState
from headspace_tui.service.watching import monitor as monitor_module
from headspace_tui.service.watching.monitor import DISCOVERY_INTERVAL, Monitor
from headspace_tui.tmux.server import TmuxServer
from tests.harness import fake_api as api
from tests.harness.control import cut
from tests.harness.scenarios import NUMBERED_MENU, QUESTION_DB

pytestmark = pytest.mark.e2e

AT_ONCE = DISCOVERY_INTERVAL / 3  # found by tmux's news, not by the full look every 30 s (the module's docstring)


def _monitor(private_tmux, session, **options):
    seen: dict[str, list] = {"problems": [], "notices": []}
    monitor = Monitor(
        TmuxServer(socket_name=private_tmux.name),
        config_dir=session.home / ".claude",
        hooks=False,
        **options,
    )

    def told(event: Event) -> None:
        if isinstance(event, ProblemChanged):
            seen["problems"].append(event.problem)
        elif isinstance(event, Notice):
            seen["notices"].append(event.text)

    monitor.subscribe(told)
    return monitor, seen


async def _until(predicate, what: str, timeout: float = 20.0) -> float:
    """Wait for ``predicate``; how long it took."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
    return time.monotonic() - start


def _live_clients(monitor: Monitor) -> dict[str, object]:
    return {sid: c for sid, c in monitor.sessions.clients.items() if not c.closed}


def _run(monitor: Monitor, scenario) -> None:
    async def main() -> None:
        task = asyncio.create_task(monitor.run())
        try:
            await scenario()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await monitor.stop()

    asyncio.run(main())


def test_a_restarted_tmux_server_is_picked_up_by_its_socket_and_its_claude_at_once(claude_session, private_tmux, monkeypatch):
    monkeypatch.setattr(monitor_module, "SERVER_RETRY", DISCOVERY_INTERVAL)  # only the socket's watch can find it in time
    first = claude_session([])
    monitor, seen = _monitor(private_tmux, first)

    async def scenario() -> None:
        await _until(lambda: first.pane_id in monitor.store.agents, "the first agent")
        private_tmux.run("kill-server")
        await _until(lambda: not monitor.store.agents and not monitor.sessions.clients, "the agents of the killed server to go")
        assert seen["problems"][-1] and "no tmux server" in seen["problems"][-1]
        # A new server: the shell is up when this returns.
        again = await asyncio.to_thread(claude_session, [], name="again", launch=False)
        picked_up = await _until(lambda: seen["problems"][-1] is None, "the new server to be noticed by its socket", timeout=AT_ONCE)
        await asyncio.to_thread(again.launch)  # returns once Claude's box is drawn
        found = await _until(lambda: again.pane_id in monitor.store.agents, "the new agent, by tmux's news", timeout=AT_ONCE)
        # One control client per session, none left polling.
        await _until(lambda: set(_live_clients(monitor)) == set(monitor.sessions.running) and monitor.sessions.running, "a control client per session")
        assert len(monitor.sessions.running) == 1
        print(f"server noticed after {picked_up:.2f}s; agent shown {found:.2f}s after its box")

    _run(monitor, scenario)


def test_a_dead_control_client_is_replaced_and_reads_go_on(claude_session, private_tmux):
    session = claude_session([api.text("Hi there.")])
    monitor, _ = _monitor(private_tmux, session)

    async def scenario() -> None:
        await _until(lambda: session.pane_id in monitor.store.agents, "the agent")
        await _until(lambda: _live_clients(monitor), "a control client")
        ((session_id, client),) = _live_clients(monitor).items()
        cut(client)  # as a crash would end it
        took = await _until(lambda: session_id in _live_clients(monitor) and monitor.sessions.clients[session_id] is not client, "a new control client")
        await asyncio.to_thread(session.submit, "say hello")
        await _until(lambda: "Hi there." in (monitor.panes[session.pane_id].capture or ""), "the reply read through the new client")
        print(f"control client replaced after {took:.2f}s")

    _run(monitor, scenario)


def test_renamed_and_moved_panes_are_followed_at_once(claude_session, private_tmux):
    session = claude_session([])
    monitor, _ = _monitor(private_tmux, session)

    async def scenario() -> None:
        await _until(lambda: session.pane_id in monitor.store.agents, "the agent")
        agent = monitor.store.agents[session.pane_id]
        assert agent.session == session.name
        private_tmux.run("rename-session", "-t", session.name, "renamed [x]")
        took = await _until(lambda: agent.session == "renamed [x]" and agent.target.startswith("renamed [x]:"), "the row to follow the rename, by tmux's news", timeout=AT_ONCE)
        private_tmux.run("new-session", "-d", "-s", "other", "-x", "80", "-y", "24", "bash --norc --noprofile")
        private_tmux.run("break-pane", "-d", "-s", session.pane_id, "-t", "other:")  # the pane moves to another session
        moved = await _until(lambda: agent.session == "other" and agent.target.startswith("other:"), "the row to follow the moved pane, by tmux's news", timeout=AT_ONCE)
        assert monitor.store.agents[session.pane_id] is agent  # the same agent, not a new one
        print(f"rename followed after {took:.2f}s, move after {moved:.2f}s")

    _run(monitor, scenario)


def test_an_error_inside_a_detector_is_told_once_and_reading_resumes(claude_session, private_tmux, monkeypatch):
    session = claude_session([api.text("Resumed fine.")])
    monitor, seen = _monitor(private_tmux, session)
    armed = {"on": False, "raised": 0}
    real = monitor_module.screen_observation

    def faulty(*args, **kwargs):
        if armed["on"]:
            armed["on"] = False
            armed["raised"] += 1
            raise RuntimeError("injected fault")
        return real(*args, **kwargs)

    monkeypatch.setattr(monitor_module, "screen_observation", faulty)

    async def scenario() -> None:
        await _until(lambda: session.pane_id in monitor.store.agents and monitor.store.agents[session.pane_id].state is AgentState.IDLE, "the idle agent")
        armed["on"] = True
        await asyncio.to_thread(session.submit, "carry on")
        await _until(lambda: armed["raised"] == 1, "the fault")
        await _until(lambda: seen["notices"], "one line about it")
        await _until(lambda: "Resumed fine." in (monitor.panes[session.pane_id].capture or ""), "reading after the fault")
        await _until(lambda: monitor.store.agents[session.pane_id].state is AgentState.IDLE, "the agent's state after the fault")
        assert len(seen["notices"]) == 1 and "RuntimeError: injected fault" in seen["notices"][0] and "restarted" in seen["notices"][0]
        assert "\n" not in seen["notices"][0]
        await _until(lambda: _live_clients(monitor), "the restarted detector's control client")

    _run(monitor, scenario)


def test_claude_started_in_a_pane_already_open_appears_at_once(claude_session, private_tmux):
    shell = claude_session([], launch=False)  # a session with no agent yet: only a shell
    monitor, _ = _monitor(private_tmux, shell)

    async def scenario() -> None:
        await _until(lambda: _live_clients(monitor), "the session's control client")
        await asyncio.sleep(1.0)  # the shell has been looked at and is not an agent
        assert shell.pane_id not in monitor.store.agents
        await asyncio.to_thread(shell.launch)  # returns once Claude's box is drawn
        found = await _until(lambda: shell.pane_id in monitor.store.agents, "the new agent, by its pane's output", timeout=AT_ONCE)
        print(f"Claude in an open pane appeared {found:.2f}s after its box")

    _run(monitor, scenario)


def test_a_question_survives_sigstop_and_sigcont(claude_session, private_tmux):
    session = claude_session([api.ask(QUESTION_DB)])
    monitor, _ = _monitor(private_tmux, session)
    session.submit("pick one")
    session.wait_for(NUMBERED_MENU, what="the question")

    async def scenario() -> None:
        await _until(lambda: session.pane_id in monitor.store.agents and monitor.store.agents[session.pane_id].state is AgentState.QUESTION, "the question")
        labels = monitor.store.agents[session.pane_id].observation.option_labels
        assert labels
        pid = monitor.panes[session.pane_id].agent_pid
        os.kill(pid, signal.SIGSTOP)  # the Claude this test started
        await asyncio.sleep(1.0)  # time must pass: Claude stopped for a second
        os.kill(pid, signal.SIGCONT)
        await asyncio.sleep(2.0)  # nothing to wait for: a question lost to the stop would show by now
        agent = monitor.store.agents[session.pane_id]
        assert agent.state is AgentState.QUESTION and agent.observation.option_labels == labels

    _run(monitor, scenario)
