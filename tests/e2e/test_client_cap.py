"""Beyond the cap of control clients, a session is read through another client, when tmux says its pane wrote.

At rest tmux spends about panes x clients² on control clients (each turn
of its loop walks every pane's clients, and each client's status timer is
such a turn): 1,000 sessions with 300 clients kept it at 11% of a core.
So a server has a cap of ours (``client_cap``): sessions
with agents take the places first, and the rest are read through a client
attached elsewhere when their window's activity stamp moves
(``Sessions._activity_loop``), never by a tmux client forked for them.

Real tmux, a cap of two: four sessions with a watched pane (two of them
beyond the cap), one without.  The detectors' reads are recorded with the
client each went through and what it captured.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.answering.report import Report
from headspace_tui.model import AgentState
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.watching.pane_watch import PaneWatch
from headspace_tui.service.watching.sessions import Sessions
from headspace_tui.service.watching.supervise import Supervisor
from headspace_tui.tmux.server import TmuxServer
from tests.harness import fake_api as api

pytestmark = pytest.mark.e2e

WRITTEN = "written beyond the cap"


async def until(check, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return bool(check())


def test_sessions_beyond_the_cap_are_read_through_another_client_when_they_write(private_tmux):
    for name in ("a", "b", "c", "d"):
        private_tmux.run("new-session", "-d", "-s", name, "-x", "80", "-y", "24", "cat")
    private_tmux.run("new-session", "-d", "-s", "shell", "-x", "80", "-y", "24", "sh")  # no agent in it
    server = TmuxServer(socket_name=private_tmux.name)
    records = server.list_panes()
    by_name = {r.session_name: r for r in records}
    panes = {by_name[n].pane_id: PaneWatch(by_name[n], f"key-{n}") for n in ("a", "b", "c", "d")}
    reads: list[tuple[str, str | None, str]] = []  # (pane, the session of the client the read went through, what it saw)
    discoveries: list[float] = []

    async def read(pane_id, client):
        screen = await client.capture(pane_id) if client is not None else server.capture(pane_id, True)
        reads.append((pane_id, client.session_id if client is not None else None, screen))

    def reads_of(pane_id: str) -> list[tuple[str | None, str]]:
        return [(via, screen) for pane, via, screen in reads if pane == pane_id]

    async def scenario() -> dict:
        sessions = Sessions(server, Supervisor(), panes, read=read, request_discovery=lambda: discoveries.append(time.monotonic()), state_of=lambda pane: None, clock=time.monotonic)
        sessions.cap_of = lambda panes: 2
        sessions.start()
        try:
            await sessions.discovered(1, {r.session_id for r in records}, records)
            settled = await until(lambda: len(sessions.clients) == 2 and len(sessions._beyond) == 3)
            assert settled, f"not two clients attached and the others beyond: {sorted(sessions.clients)}, {sorted(sessions._beyond)}"
            # The first two listings read every pane beyond (each stamp is new to the first); after them, only writes do.
            assert await until(lambda: sessions.activity_looks >= 3), "the activity watch never listed"
            attached = set(sessions.clients)
            loud, quiet = sorted(p for p, w in panes.items() if w.record.session_id not in attached)
            quiet_before = len(reads_of(quiet))
            private_tmux.run("send-keys", "-t", loud, "-l", WRITTEN)
            seen = await until(lambda: any(WRITTEN in screen for _, screen in reads_of(loud)))
            quiet_reads = len(reads_of(quiet)) - quiet_before
            # Previewed, the quiet one is polled through another client: its preview moves although tmux tells its session nothing.
            sessions.focused = quiet
            polled_from = len(reads_of(quiet))
            polled = await until(lambda: len(reads_of(quiet)) >= polled_from + 3)
            sessions.focused = None
            # A pane split off in a session beyond the cap is news to no client of ours: its stamp, on a pane not yet listed, asks for a discovery.
            asked = len(discoveries)
            private_tmux.run("split-window", "-d", "-t", panes[quiet].record.session_id, "echo split; cat")
            split_found = await until(lambda: len(discoveries) > asked)
            # The shell session has no place and no agent: a program started there is asked about through another client.
            asked = len(discoveries)
            private_tmux.run("send-keys", "-t", by_name["shell"].pane_id, "exec cat", "Enter")
            found = await until(lambda: len(discoveries) > asked)
            clients = private_tmux.run("list-clients", "-F", "#{client_control_mode}").split()
            return {"attached": attached, "loud": loud, "quiet": quiet, "seen": seen, "quiet_reads": quiet_reads, "polled": polled, "split_found": split_found, "found": found, "clients": clients}
        finally:
            await sessions.supervisor.stop()
            await sessions.stop()

    got = asyncio.run(scenario())
    assert by_name["shell"].session_id not in got["attached"], "a session with no agent took a place while one with an agent had none"
    assert got["clients"] == ["1", "1"], f"tmux lists other than the cap's two control clients: {got['clients']}"
    assert got["seen"], "the pane beyond the cap was not read after it wrote"
    vias = [via for via, screen in reads_of(got["loud"]) if WRITTEN in screen]
    loud_session = panes[got["loud"]].record.session_id
    assert vias and all(via in got["attached"] and via != loud_session for via in vias), f"read after the write through: {vias}"
    assert got["quiet_reads"] == 0, f"a quiet pane beyond the cap was read {got['quiet_reads']} times while another wrote"
    assert got["polled"], "the previewed pane of a session beyond the cap was not polled"
    assert None not in [via for via, _ in reads_of(got["quiet"])[-3:]], "the previewed pane was polled by forked captures"
    assert got["split_found"], "a pane split off in a session beyond the cap asked for no discovery"
    assert got["found"], "a program started in a session beyond the cap was never asked about"
    assert private_tmux.run("list-clients").strip() == "", "a control client outlived the detectors"


FAKE_AGENT = Path(__file__).resolve().parents[2] / "benchmarks" / "fake_agent.py"  # draws recorded Claude screens
CORPUS = Path(__file__).resolve().parents[2] / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "120x40"


def test_a_claude_beyond_the_cap_is_seen_waiting_and_approved_through_another_sessions_client(claude_session, fake_api, private_tmux, tmp_path, monkeypatch):
    """The service as it runs, with a cap of one: a stand-in agent takes the place, and a real Claude started later is beyond it.

    Its permission is seen from the activity watch, and ``y`` (the service's
    approve) reaches it through the stand-in's client: the command runs,
    and no tmux client is forked for the keys, the reads or the pane's record.
    """
    results = tmp_path / "drawn"
    results.mkdir()
    keeper = private_tmux.new_session("keeper", width=120, height=40, cwd=str(tmp_path), command=["bash", "-c", f"exec -a claude {sys.executable} -S {FAKE_AGENT} {CORPUS} {results}"])
    server = TmuxServer(socket_name=private_tmux.name)
    service = Service.build(server, config_dir=tmp_path / "claude", journal=Journal(None), hooks=False)
    monitor = service._fleet.first
    monitor.sessions.cap_of = lambda panes: 1
    reports: list[Report] = []
    service.on_answer_report(reports.append)

    async def until_true(check, seconds: float = 30.0) -> bool:
        return await until(check, seconds)

    async def scenario() -> dict:
        running = asyncio.create_task(service.run())
        try:
            assert await until_true(lambda: service._fleet.client(keeper) is not None and len(monitor.sessions.clients) == 1), "the stand-in's session was never attached"
            fake_api.set_script([api.bash("touch beyond.txt", "Make a file")])
            session = await asyncio.to_thread(claude_session, name="beyond")
            await asyncio.to_thread(session.submit, "make a file")

            # Its menu read from its screen, not only Claude's own word (its status file is written before the dialog is drawn).
            def on_screen() -> bool:
                agent = service.agent(session.pane_id)
                return agent is not None and agent.state is AgentState.PERMISSION and agent.observation.prompt is not None and bool(agent.observation.prompt.options)

            waiting = await until_true(on_screen)
            assert waiting, f"the Claude beyond the cap was not seen waiting: {service.agent(session.pane_id)}"
            beyond = server.pane(session.pane_id).session_id
            placed = set(monitor.sessions.clients)
            clients = private_tmux.run("list-clients", "-F", "#{client_control_mode}").split()
            for fork in ("send_keys", "capture", "pane"):
                monkeypatch.setattr(TmuxServer, fork, lambda self, *args, _fork=fork, **kwargs: pytest.fail(f"a tmux client was forked: {_fork}{args}"))
            why = "not tried"
            deadline = time.monotonic() + 10
            while why and time.monotonic() < deadline:  # a prompt too young to have been read is refused: as a person would, try again
                agent = service.agent(session.pane_id)
                why = service.answer(agent, Intent(IntentKind.APPROVE)) if agent is not None else "gone"
                if why:
                    await asyncio.sleep(0.2)
            assert why == "", f"the approve was refused: {why}"
            done = await until_true(lambda: any(r.final and r.pane_id == session.pane_id for r in reports) and (session.workdir / "beyond.txt").exists())
            monkeypatch.undo()
            return {"beyond": beyond, "placed": placed, "clients": clients, "done": done}
        finally:
            await service.stop()
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)

    got = asyncio.run(scenario())
    assert got["beyond"] not in got["placed"] and got["clients"] == ["1"], f"the Claude's session had a client of its own: {got}"
    final = [r for r in reports if r.final]
    assert got["done"] and final and final[-1].delivered, f"the approve did not run the command: {reports}"
    assert private_tmux.run("list-clients").strip() == "", "a control client outlived the service"


def two_agents_and_a_shell(private_tmux) -> TmuxServer:
    """Sessions ``a`` and ``b`` (``cat``, watched as agents by the tests) and ``shell`` (``sh``, no agent)."""
    for name in ("a", "b"):
        private_tmux.run("new-session", "-d", "-s", name, "-x", "80", "-y", "24", "cat")
    private_tmux.run("new-session", "-d", "-s", "shell", "-x", "80", "-y", "24", "sh")
    return TmuxServer(socket_name=private_tmux.name)


def detectors(server: TmuxServer, panes: dict[str, PaneWatch], cap_of) -> Sessions:
    """The sessions' detectors of ``server``, started, with ``cap_of`` for their cap; reads do nothing (only places are looked at)."""

    async def read(pane_id, client):
        return None

    sessions = Sessions(server, Supervisor(), panes, read=read, request_discovery=lambda: None, state_of=lambda pane: None, clock=time.monotonic)
    sessions.cap_of = cap_of
    sessions.start()
    return sessions


def test_a_session_without_agents_gives_its_place_to_a_later_one_with_an_agent(private_tmux):
    """Three sessions fit a cap of three, one of them without an agent; a fourth comes, with an agent: it takes that one's place."""
    server = two_agents_and_a_shell(private_tmux)
    panes: dict[str, PaneWatch] = {}

    def watch(names: tuple[str, ...]) -> list:
        records = server.list_panes()
        for record in records:
            if record.session_name in names:
                panes.setdefault(record.pane_id, PaneWatch(record, f"key-{record.session_name}"))
        return records

    async def scenario() -> dict:
        sessions = detectors(server, panes, lambda count: 3)
        try:
            records = watch(("a", "b"))
            await sessions.discovered(1, {r.session_id for r in records}, records)
            assert await until(lambda: len(sessions.clients) == 3), "three sessions under a cap of three were not all attached"
            shell = next(r.session_id for r in records if r.session_name == "shell")
            private_tmux.run("new-session", "-d", "-s", "late", "-x", "80", "-y", "24", "cat")
            records = watch(("a", "b", "late"))
            late = next(r.session_id for r in records if r.session_name == "late")
            await sessions.discovered(2, {r.session_id for r in records}, records)
            moved = await until(lambda: late in sessions.clients and shell not in sessions.clients)
            await asyncio.sleep(0)
            clients = private_tmux.run("list-clients", "-F", "#{client_control_mode} #{session_name}").splitlines()
            return {"moved": moved, "clients": sorted(clients), "beyond": set(sessions._beyond), "shell": shell}
        finally:
            await sessions.supervisor.stop()
            await sessions.stop()

    got = asyncio.run(scenario())
    assert got["moved"], "the later session with an agent never took the place of the one without"
    assert got["clients"] == ["1 a", "1 b", "1 late"], f"tmux's clients: {got['clients']}"
    assert got["shell"] in got["beyond"], "the session that gave its place is not read through another client"
    assert private_tmux.run("list-clients").strip() == "", "a control client outlived the detectors"


def test_when_the_cap_falls_a_session_without_agents_gives_its_place_back(private_tmux):
    """Three sessions under a cap of three, one without an agent; the server grows and the cap falls to two: that one's client ends."""
    server = two_agents_and_a_shell(private_tmux)
    records = server.list_panes()
    panes = {r.pane_id: PaneWatch(r, f"key-{r.session_name}") for r in records if r.session_name in ("a", "b")}
    shell = next(r.session_id for r in records if r.session_name == "shell")
    cap = {"now": 3}

    async def scenario() -> dict:
        sessions = detectors(server, panes, lambda count: cap["now"])
        try:
            await sessions.discovered(1, {r.session_id for r in records}, records)
            assert await until(lambda: len(sessions.clients) == 3), "three sessions under a cap of three were not all attached"
            cap["now"] = 2
            await sessions.discovered(2, {r.session_id for r in records}, records)
            gave_back = await until(lambda: shell not in sessions.clients and shell in sessions._beyond)
            clients = sorted(private_tmux.run("list-clients", "-F", "#{client_control_mode} #{session_name}").splitlines())
            return {"gave_back": gave_back, "clients": clients, "kept": sorted(sessions.clients)}
        finally:
            await sessions.supervisor.stop()
            await sessions.stop()

    got = asyncio.run(scenario())
    assert got["gave_back"], f"the session without agents kept its client over the cap: {got}"
    assert got["clients"] == ["1 a", "1 b"], f"tmux's clients: {got['clients']}"
