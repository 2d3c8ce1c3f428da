"""Discovery against real processes: tmux panes, the process tree, Claude's status files.

Two real Claude sessions and one plain shell share a private tmux server;
headspace must list all three panes, find Claude under exactly the two
Claude panes, and match each to its own status file.
"""

from __future__ import annotations

import shlex
import time
import uuid

import pytest

from headspace_tui.detect.claude.process import find_claude
from headspace_tui.detect.claude.status_files import read_statuses, status_observation
from headspace_tui.model import AgentState
from headspace_tui.shared.proctree import read_process_table
from headspace_tui.tmux.server import TmuxCommandError, TmuxServer, TmuxUnavailable
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e


def test_discovers_claude_panes_and_their_status_files(claude_session, private_tmux, tmp_path):
    alpha = claude_session([], name="alpha")
    beta = claude_session([], name="beta", width=100, height=30)
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    plain_pane = private_tmux.new_session("plain", width=80, height=24, cwd=str(plain_dir), command=["bash", "--norc", "--noprofile", "-i"])
    server = TmuxServer(socket_name=private_tmux.name)
    # tmux reads a pane's path from its foreground process group, which a shell only has once
    # it runs: right after new-session the path can still be "" (seen once in a loaded full run).
    deadline = time.monotonic() + 5
    while not private_tmux.run("display-message", "-p", "-t", plain_pane, "#{pane_current_path}").strip() and time.monotonic() < deadline:
        time.sleep(0.05)

    panes = {p.pane_id: p for p in server.list_panes()}
    assert set(panes) == {alpha.pane_id, beta.pane_id, plain_pane}
    a, b, plain = panes[alpha.pane_id], panes[beta.pane_id], panes[plain_pane]
    assert (a.target, b.target, plain.target) == ("alpha:0.0", "beta:0.0", "plain:0.0")
    assert (a.session_name, a.window_index, a.pane_index) == ("alpha", 0, 0)
    assert a.session_id.startswith("$") and a.session_id != b.session_id
    assert a.current_command == "claude" and b.current_command == "claude"
    assert plain.current_command == "bash"
    assert a.cwd == str(alpha.workdir) and plain.cwd == str(plain_dir)
    assert (b.width, b.height) == (100, 30)
    assert a.alternate_on is True and plain.alternate_on is False
    assert not any(p.dead or p.in_mode for p in panes.values())
    assert server.pane(alpha.pane_id) == a

    table = read_process_table()
    found = {pane_id: find_claude(p.pid, table) for pane_id, p in panes.items()}
    assert found[plain_pane] is None
    for session in (alpha, beta):
        pid = found[session.pane_id]
        assert pid is not None and pid != panes[session.pane_id].pid  # a child of the pane's shell
        assert table.get(pid).ppid == panes[session.pane_id].pid
        assert table.get(pid).comm == "claude"

    # Each session has its own HOME, so its own ~/.claude/sessions.
    for session in (alpha, beta):
        folder = session.home / ".claude" / "sessions"
        pid = found[session.pane_id]
        statuses = poll(lambda folder=folder: read_statuses(folder), lambda s, pid=pid: pid in s and s[pid].status == "idle")
        status = statuses[pid]
        assert list(statuses) == [pid]
        assert status.cwd == str(session.workdir)
        assert status.pane_id == session.pane_id
        assert status.tmux.startswith(f"{session.name}:")
        assert status.session_id and status.kind == "interactive"
        assert status.updated_at > 1_600_000_000
        assert status_observation(status).state is AgentState.IDLE


def test_send_keys_literal_text_stays_text(private_tmux, tmp_path):
    pane = private_tmux.new_session("keys", width=80, height=24, cwd=str(tmp_path), command=["cat"])
    server = TmuxServer(socket_name=private_tmux.name)
    server.send_keys(pane, "-n Enter C-c", literal=True)
    server.send_keys(pane, "Enter")
    screen = poll(lambda: server.capture(pane, ansi=False), lambda s: s.count("-n Enter C-c") == 2, timeout=5)
    assert screen.splitlines()[:2] == ["-n Enter C-c", "-n Enter C-c"]  # typed, then echoed back by cat
    assert server.pane(pane).current_command == "cat"  # C-c was text, not an interrupt


def test_socket_path_addresses_the_same_server(private_tmux, tmp_path):
    private_tmux.new_session("one", width=80, height=24, cwd=str(tmp_path), command=["cat"])
    path = private_tmux.run("display-message", "-p", "#{socket_path}").strip()
    assert [p.target for p in TmuxServer(socket_path=path).list_panes()] == ["one:0.0"]


def test_errors_are_one_clear_line(private_tmux, tmp_path):
    missing = TmuxServer(socket_name=f"headspace-none-{uuid.uuid4().hex[:8]}")
    with pytest.raises(TmuxUnavailable) as unavailable:
        missing.list_panes()
    message = str(unavailable.value)
    assert "\n" not in message and "no tmux server running" in message and missing.socket_name in message

    private_tmux.new_session("errs", width=80, height=24, cwd=str(tmp_path), command=["cat"])
    server = TmuxServer(socket_name=private_tmux.name)
    with pytest.raises(TmuxCommandError) as gone:
        server.capture("%99")
    assert "\n" not in str(gone.value) and "%99" in str(gone.value)
    with pytest.raises(TmuxCommandError):
        server.pane("%99")


def test_the_panes_listed_through_a_control_client_are_the_forked_listing_hostile_folders_too(private_tmux, tmp_path, monkeypatch):
    """Discovery lists the panes through a control client already attached (a tmux client of its own costs a server with
    hundreds of control clients half a second of CPU): the same records, whatever the folders are called."""
    import asyncio

    from headspace_tui.service.watching.host import LocalHost
    from headspace_tui.tmux.control import ControlClient

    names = ["plain", "tab\there", "line\nbreak", "%end 1 2 1", "%begin 1 2 1\n%end 1 2 1", "uni \u2603 \x1f sep"]
    for i, name in enumerate(names):
        folder = tmp_path / f"{i}-{name}"
        folder.mkdir()
        private_tmux.new_session(f"s{i}", width=80, height=24, cwd=str(folder), command=["bash", "--norc", "--noprofile", "-c", f"cd {shlex.quote(str(folder))} && exec sleep 600"])
    server = TmuxServer(socket_name=private_tmux.name)
    forked = poll(server.list_panes, lambda panes: len(panes) == len(names) and all(p.cwd.startswith(str(tmp_path) + "/") for p in panes), timeout=10)
    host = LocalHost(server)

    async def through_a_client():
        client = ControlClient(server, forked[0].session_id, on_output=lambda pane, size: None)
        await client.start()
        try:
            monkeypatch.setattr(TmuxServer, "run", lambda self, *args, **kwargs: pytest.fail(f"a tmux client was forked to list the panes: {args}"))
            records, table = await host.snapshot(client)
        finally:
            monkeypatch.undo()
            await client.close()
        return records, table

    records, table = asyncio.run(through_a_client())
    assert records == forked
    assert {r.cwd for r in records} == {str(tmp_path / f"{i}-{name}") for i, name in enumerate(names)}
    assert all(r.pid in table.processes for r in records)


def test_the_ringer_and_the_answers_ask_tmux_through_a_control_client_already_attached(private_tmux, tmp_path, monkeypatch):
    """A ring lists the clients (and writes their status lines), an answer reads its pane: through a control client
    the service holds, never a tmux client of its own (each cost a server with 300 control clients half a second, and a
    menu drawn meanwhile was seen a second late).  The same output as a forked client's, hostile words and folders too;
    once the service stops, no client at all."""
    import asyncio

    from headspace_tui.notifications.reach import CLIENT_FORMAT, status_message
    from headspace_tui.service.facade import Service
    from headspace_tui.service.records.journal import Journal
    from headspace_tui.service.watching.fleet import ControlPaneIO

    folder = tmp_path / "line\nbreak; kill-server #{pane_id}"
    folder.mkdir()
    private_tmux.new_session("s0", width=80, height=24, cwd=str(folder), command=["bash", "--norc", "--noprofile", "-c", f"cd {shlex.quote(str(folder))} && exec -a claude sleep 600"])
    server = TmuxServer(socket_name=private_tmux.name)
    (pane,) = poll(server.list_panes, lambda panes: len(panes) == 1 and panes[0].cwd == str(folder), timeout=10)
    words = status_message('agent "x"; kill-server #{pane_id} \\ \' end')  # as a ring's status line carries them
    service = Service.build(server, config_dir=tmp_path / "claude", journal=Journal(None), hooks=False)

    async def scenario():
        running = asyncio.create_task(service.run())
        try:
            fleet = service._fleet
            for _ in range(400):
                if fleet.client(pane.pane_id) is not None:
                    break
                await asyncio.sleep(0.05)
            assert fleet.client(pane.pane_id) is not None, "the agent's session has no control client after 20 s"
            forked = {args: server.run(*args) for args in [("list-clients", "-F", CLIENT_FORMAT), ("display-message", "-p", "--", words)]}
            forked_pane = server.pane(pane.pane_id)
            monkeypatch.setattr(TmuxServer, "run", lambda self, *args, **kwargs: pytest.fail(f"a tmux client was forked: {args}"))
            asked = {args: await service.tmux_run(*args) for args in forked}
            record = await ControlPaneIO(fleet).pane(pane.pane_id)
            await service.stop()
            with pytest.raises(TmuxUnavailable, match="stopping"):  # a ring in flight as the service ends forks no client
                await service.tmux_run("list-clients", "-F", CLIENT_FORMAT)
            monkeypatch.undo()
            return forked, asked, forked_pane, record
        finally:
            await service.stop()
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)

    forked, asked, forked_pane, record = asyncio.run(scenario())
    assert asked == forked
    assert "\t1\t" in "\t" + forked[("list-clients", "-F", CLIENT_FORMAT)]  # our control client is among the listed: a real listing
    assert forked[("display-message", "-p", "--", words)] == 'agent "x"; kill-server #{pane_id} \\ \' end\n'
    assert record == forked_pane and record.cwd == str(folder)
    assert server.list_panes(), "the server still runs"
