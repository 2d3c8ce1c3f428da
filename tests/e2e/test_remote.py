"""Agents on another machine: a real sshd on 127.0.0.1 in front of a private tmux with real Claude sessions.

The "remote" is this machine reached through OpenSSH, as a user's dev box
would be: headspace runs ``ssh -F <private config> box`` (a ``Host box``
alias), tmux control mode and the probe run on the far side of that link,
and nothing is mocked.  The sessions' tmux server lives in the remote
login's ``TMUX_TMPDIR`` (set by the sshd's ``SetEnv``), so ``tmux -L NAME``
over ssh finds exactly the server the Claude sessions run in.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from headspace_tui.api.errors import ServiceError
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.model import AgentState
from headspace_tui.remote.host import RemoteHost
from headspace_tui.resident.client import ask_rows
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.config import HostSpec
from headspace_tui.state.eventlog import EventLog
from headspace_tui.state.eventlog import default_path as events_path
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_resident_service import no_tmux_path, started
from tests.harness import cli
from tests.harness import fake_api as api
from tests.harness.fake_api import block_text
from tests.harness.scenarios import NUMBERED_MENU, TURN_DONE
from tests.harness.sshd import Sshd, running_sshd, silent_host
from tests.harness.tmux import PrivateTmux, temp_server
from tests.ui.apps import app_of, press_as_a_person
from tests.ui.test_app_live import select_agent, wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def box(claude_binary: str, tmp_path: Path) -> Iterator[Sshd]:
    with running_sshd(tmp_path, claude=claude_binary) as server:
        yield server


@pytest.fixture
def private_tmux(box: Sshd) -> Iterator[PrivateTmux]:
    """The sessions' tmux server, where a login through ``box`` finds it (overrides conftest's)."""
    root = tempfile.mkdtemp(prefix="hs-tmux-")
    server = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": root, "LANG": "C.UTF-8", "TMUX_TMPDIR": box.remote_env["TMUX_TMPDIR"]})
    try:
        yield server
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)


def config_file(tmp_path: Path, box: Sshd, socket_name: str, *, name: str = "box", alias: str | None = None) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'[hosts.{name}]\ndestination = "{alias or box.alias}"\ntmux_socket_name = "{socket_name}"\nssh_config = "{box.client_config}"\n')
    return path


def headspace(*args: str, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``headspace *args``; the tests here read its exit code themselves."""
    return cli.headspace(*args, check=False, timeout=timeout, env=env)


def remote_app(box: Sshd, socket_name: str, tmp_path: Path) -> HeadspaceApp:
    spec = HostSpec("box", box.alias, socket_name=socket_name, ssh_config=str(box.client_config))
    return app_of(
        Service.build(
            TmuxServer(socket_name="headspace-test-no-local"),
            hosts=[RemoteHost(spec)],
            local=False,
            spool=tmp_path / "spool",
            journal=Journal(None),
        )
    )


def test_remote_agents_listed_approved_from_the_table_and_by_send(claude_session, fake_api, private_tmux, box, tmp_path):
    fake_api.set_script([api.bash("touch a.txt && echo approved-in-table", "Make a")])
    first = claude_session(name="alpha")
    first.submit("make a")
    first.wait_for(NUMBERED_MENU, what="alpha's permission")
    fake_api.set_script([api.bash("touch b.txt && echo approved-by-send", "Make b")])
    second = claude_session(name="beta")
    second.submit("make b")
    second.wait_for(NUMBERED_MENU, what="beta's permission")
    fake_api.set_script([api.text("Made it."), api.text("Made it.")])
    config = config_file(tmp_path, box, private_tmux.name)

    status = headspace("--config", str(config), "status", "--json", "--no-local")
    assert status.returncode == 0, status.stderr
    rows = {row["target"]: row for row in map(json.loads, status.stdout.splitlines())}
    assert set(rows) == {"alpha:0.0", "beta:0.0"}
    for name, session in (("alpha", first), ("beta", second)):
        row = rows[f"{name}:0.0"]
        assert row["host"] == "box" and row["state"] == "permission" and row["tool"] == "Bash"
        assert row["pane_id"] == session.pane_id

    async def approve_in_the_table():
        app = remote_app(box, private_tmux.name, tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            address = first.pane_id + "@box"
            await select_agent(pilot, app, address, AgentState.PERMISSION)
            agent = app.selected_agent()
            assert agent.host == "box" and agent.observation.tool == "Bash"
            # Both remote agents in the table: each session's rows come with its own first read (a busy run had beta's after alpha's).
            await wait_until(pilot, lambda: second.pane_id + "@box" in app.table.agents, "beta's row", 30)
            approved = lambda r: any("approved-in-table" in block_text(b) for b in r.tool_results())  # noqa: E731
            await press_as_a_person(pilot, app, address, "y", lambda: fake_api.seen(approved), "the approved command's result", timeout=30)
            request = await asyncio.to_thread(fake_api.wait_for, approved, 30)
            assert request.tool_results()
            await wait_until(pilot, lambda: app.table.agents[address].state is AgentState.IDLE, "alpha idle after the approval", 30)
            assert app.table.agents[second.pane_id + "@box"].state is AgentState.PERMISSION  # the other one untouched

    asyncio.run(approve_in_the_table())
    assert (first.workdir / "a.txt").exists()
    assert not (second.workdir / "b.txt").exists()

    # "--expect ''": only while no prompt is shown; beta asks, so nothing goes (the service for box knows its appearance).
    unexpected = headspace("--config", str(config), "send", "--host", "box", second.pane_id, "--approve", "--expect", "")
    assert unexpected.returncode == 1 and "asks something now" in unexpected.stderr, unexpected
    assert NUMBERED_MENU.search(second.screen()) and not (second.workdir / "b.txt").exists()
    sent = headspace("--config", str(config), "send", "--host", "box", second.pane_id, "--approve")
    assert sent.returncode == 0, sent.stderr
    assert "Bash: touch b.txt && echo approved-by-send" in sent.stdout and "Claude moved on" in sent.stdout
    # No service watches box: the command ran the service for that host and answered through its answerer, whose audit line this is.
    (audit,) = [e.payload for e in EventLog(events_path()).query(kind="answer") if "approved-by-send" in str(e.payload.get("what"))]
    assert audit["channel"] == "keys" and audit.get("delivered") is not False and audit.get("decision") == "allow", audit
    fake_api.wait_for(lambda r: any("approved-by-send" in block_text(b) for b in r.tool_results()), timeout=30)
    second.wait_for(lambda s: "Made it." in s and TURN_DONE.search(s) is not None, what="beta done")
    assert (second.workdir / "b.txt").exists()


def test_send_host_goes_through_the_service_that_watches_that_host(claude_session, fake_api, private_tmux, box, tmp_path, services):
    """A service watching box answers ``send --host box`` (its one answerer for the pane), by pane id and by the session's name.

    The command runs where ssh is not on its PATH: a link of its own could not
    reach box; the service's, up already, does.
    """
    fake_api.set_script([api.bash("touch c.txt && echo approved-by-id", "Make c"), api.bash("touch d.txt && echo approved-by-name", "Make d"), api.text("Made it.")])
    session = claude_session(name="gamma")
    session.submit("make c")
    session.wait_for(NUMBERED_MENU, what="gamma's permission")
    config = config_file(tmp_path, box, private_tmux.name)
    with temp_server("hs-here-") as (_, here):  # this machine's own tmux server, whose service watches box
        here.new_session("shell", width=80, height=24, cwd=str(tmp_path), command=["sleep", "600"])
        started(here.name, services, "--config", str(config))
        key, wanted = TmuxServer(socket_name=here.name).identity, str(config.resolve())

        def row() -> dict | None:
            try:
                rows, _ = ask_rows(key, wanted)
            except ServiceError:
                return None
            return next((r for r in rows if r["host"] == "box" and r["pane_id"] == session.pane_id), None)

        def asks(command: str) -> None:
            deadline = time.monotonic() + 60
            while (found := row()) is None or found["state"] != "permission" or command not in str(found["detail"]):
                assert time.monotonic() < deadline, f"the service's row of gamma on box, asking for {command}: {found}"
                time.sleep(0.2)

        without_ssh = {"PATH": no_tmux_path(tmp_path)}  # this Python only: no ssh, no tmux
        send = lambda target: headspace("-L", here.name, "--config", str(config), "send", "--host", "box", target, "--approve", env=without_ssh)  # noqa: E731
        asks("touch c.txt")
        refused = send("gamma:9.9")
        assert refused.returncode != 0 and "no agent there in the service's table" in refused.stderr, refused.stderr
        by_id = send(session.pane_id)
        assert by_id.returncode == 0 and "approved-by-id" in by_id.stdout and "moved on" in by_id.stdout, (by_id.stdout, by_id.stderr)
        asks("touch d.txt")
        by_name = send("gamma")  # the session's name, as a target names a pane here
        assert by_name.returncode == 0 and "approved-by-name" in by_name.stdout, (by_name.stdout, by_name.stderr)
        fake_api.wait_for(lambda r: any("approved-by-name" in block_text(b) for b in r.tool_results()), timeout=30)
        session.wait_for(lambda s: "Made it." in s and TURN_DONE.search(s) is not None, what="gamma done")
        assert (session.workdir / "c.txt").exists() and (session.workdir / "d.txt").exists()


def test_a_dropped_link_marks_rows_offline_and_they_recover_by_themselves(claude_session, private_tmux, box, tmp_path):
    session = claude_session(name="steady")
    address = session.pane_id + "@box"

    async def scenario() -> tuple[float, float]:
        app = remote_app(box, private_tmux.name, tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: address in app.table.agents and app.table.agents[address].state is AgentState.IDLE, "the remote agent idle", 30)
            # Idle is read from the input box before the status line is drawn; a later reading adds
            # its evidence. The link is cut once the reading has held for 2 s, so "its last reading"
            # below is the one the row had when the host went away, not one still on its way.
            held = (app.table.agents[address].observation.id, time.monotonic())

            def settled() -> bool:
                nonlocal held
                now = app.table.agents[address].observation.id
                if now != held[0]:
                    held = (now, time.monotonic())
                return time.monotonic() - held[1] >= 2.0

            await wait_until(pilot, settled, "the remote reading to hold for 2 s", 30)
            agent = app.table.agents[address]
            box.stop()  # sshd and every connection it serves: as if the machine went away
            stopped = time.monotonic()
            await wait_until(pilot, lambda: bool(app.table.agents[address].offline), "the row marked offline", 10)
            went_offline = time.monotonic() - stopped
            assert app.table.agents[address].observation.id == agent.observation.id  # the row stayed, with its last reading
            assert agent.state is AgentState.IDLE
            assert not app.check_action("nudge", ()), "no key goes to a row whose host is out of reach"
            assert "reconnecting" in app.table.get_row(address)[-1].plain
            box.start()
            started = time.monotonic()
            await wait_until(pilot, lambda: not app.table.agents[address].offline, "the row back online", 20)
            back = time.monotonic() - started
            assert app.check_action("nudge", ())
            return went_offline, back

    went_offline, back = asyncio.run(scenario())
    print(f"\noffline after {went_offline:.2f} s, back {back:.2f} s after sshd returned")
    assert went_offline < 5.0
    assert back < 10.0


def test_a_host_that_cannot_be_reached_is_one_line_and_a_failure(tmp_path, box):
    with silent_host() as port:
        box.add_alias("mute", port)
        config = config_file(tmp_path, box, "headspace-none", name="mute", alias="mute")
        began = time.monotonic()
        proc = headspace("--config", str(config), "status", "--no-local")
        took = time.monotonic() - began
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("headspace: mute: ") and "timed out" in proc.stderr
    assert took < 20
    box.stop()
    refused = headspace("--config", str(config_file(tmp_path, box, "headspace-none")), "status", "--json", "--no-local")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.strip() == f"headspace: box: ssh: connect to host 127.0.0.1 port {box.port}: Connection refused"


def test_an_unreachable_host_is_one_row_saying_why(tmp_path, box):
    box.stop()

    async def scenario():
        app = remote_app(box, "headspace-none", tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: "@box" in app.table.agents, "the host's row", 15)
            row = app.table.agents["@box"]
            assert row.placeholder and "Connection refused" in row.offline
            assert "cannot reach box" in app.table.get_row("@box")[-1].plain
            assert app.table.get_row("@box")[-1].plain.startswith("cannot reach box: ssh: connect to host")  # ssh's words, the host said once
            assert not app.check_action("approve", ()) and not app.check_action("jump", ())

    asyncio.run(scenario())


def test_a_host_without_python3_says_so_in_one_line(tmp_path):
    """The reader there needs python3; a host without it is one clear line, not a hang or a traceback."""
    only_tmux = tmp_path / "bin"
    only_tmux.mkdir()
    (only_tmux / "tmux").symlink_to(shutil.which("tmux") or "/usr/bin/tmux")
    with running_sshd(tmp_path, env={"PATH": str(only_tmux)}) as bare:
        assert bare.ssh("tmux -V").returncode == 0 and bare.ssh("python3 -V").returncode != 0  # the premise
        proc = headspace("--config", str(config_file(tmp_path, bare, "headspace-none")), "status", "--no-local")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("headspace: box: python3 is not installed there")


def test_text_that_reads_like_a_remote_address_reaches_the_remote_pane_as_typed(private_tmux, box, tmp_path):
    """Only a tmux target (the word after ``-t``) loses its ``@box``: typed text is data, by ssh or by control client.

    The transport used to strip ``@box`` from every argument, so a reply
    reading ``%1@box`` arrived as ``%1``.  The pane runs ``cat`` (no Claude
    is needed to see what the pane received).
    """
    from headspace_tui.remote.ssh import SshLink, SshTmuxServer
    from headspace_tui.tmux.control import ControlClient

    pane = private_tmux.new_session("echo", width=80, height=24, cwd=str(tmp_path), command=["cat"])
    spec = HostSpec("box", box.alias, socket_name=private_tmux.name, ssh_config=str(box.client_config))

    async def scenario() -> str:
        link = SshLink(spec)
        server = SshTmuxServer(link)
        await link.connect()
        try:
            address = server.address(pane)
            assert address == f"{pane}@box"
            # Two literal words after "--": "-t" and the address; neither is a target.
            await asyncio.to_thread(lambda: server.send_keys(address, "-t", f"{pane}@box", literal=True))
            await asyncio.to_thread(server.send_keys, address, "Enter")
            record = await asyncio.to_thread(server.pane, address)
            client = ControlClient(server, record.session_id, on_output=lambda pane_id, size: None)
            await client.start()
            try:
                await client.send_keys(address, f"{pane}@box", literal=True)
                await client.send_keys(address, "Enter")
                deadline = time.monotonic() + 10
                while True:
                    screen = await client.capture(address, ansi=False)
                    if screen.count(f"{pane}@box") >= 3 or time.monotonic() > deadline:  # echoed and catted, twice
                        return screen
                    await asyncio.sleep(0.1)
            finally:
                await client.close()
        finally:
            await link.close()
            link.remove_folder()

    screen = asyncio.run(scenario())
    lines = [line.strip() for line in screen.splitlines() if line.strip()]
    assert f"-t{pane}@box" in lines, screen
    assert f"{pane}@box" in lines, screen
