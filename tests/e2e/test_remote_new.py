"""``headspace new --host``: a real Claude started on another machine (this one through a real sshd), seen, and stopped.

The fixtures are test_remote.py's: ``box`` is an sshd on 127.0.0.1, and
``private_tmux`` the sessions' tmux server where a login through it finds
it.  Its global environment is the agents' (as in test_lifecycle_live.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from headspace_tui.api.errors import ServiceError
from headspace_tui.model import AgentState
from headspace_tui.resident.client import ask_rows
from headspace_tui.shared.proctree import read_process_table
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_lifecycle_live import APPEARS_WITHIN, STOPS_WITHIN, pane_ids, user_server
from tests.e2e.test_remote import config_file, headspace, private_tmux, remote_app  # noqa: F401 - a fixture
from tests.e2e.test_resident_service import no_tmux_path, started
from tests.harness.sshd import Sshd, running_sshd
from tests.harness.tmux import temp_server
from tests.harness.wait import poll
from tests.ui.apps import wait_until

pytestmark = pytest.mark.e2e

PROMPT = "be brief; it's a test"  # a space, a quote and a ';' for the remote shell and for tmux


@pytest.fixture
def box(claude_binary: str, tmp_path: Path) -> Iterator[Sshd]:
    """test_remote.py's sshd, with ``claude`` itself on the login's PATH (the harness puts the binary's real folder there, where it is ``claude.exe``)."""
    with running_sshd(tmp_path, claude=claude_binary, path_dirs=[str(Path(claude_binary).parent)]) as server:
        yield server


def test_new_on_a_remote_host_then_stop(claude_binary, fake_api, private_tmux, box, tmp_path):  # noqa: F811 - a fixture
    folder = tmp_path / "work"
    folder.mkdir()
    user_server(private_tmux, claude_binary, fake_api, tmp_path, [folder])
    config = str(config_file(tmp_path, box, private_tmux.name))

    refused = headspace("--config", config, "new", "--host", "box", "--session", "main", str(tmp_path / "missing"))
    assert refused.returncode == 1 and refused.stderr == f"headspace: box: no such folder: {tmp_path / 'missing'}\n"
    for args, message in ((["--worktree", "b"], "--worktree is not supported"), ([], "needs --session")):
        wrong = headspace("--config", config, "new", "--host", "box", *args, str(folder), "--", "--append-system-prompt", PROMPT)
        assert wrong.returncode == 1 and message in wrong.stderr
    assert len(pane_ids(private_tmux)) == 1  # nothing started

    timings: dict[str, float] = {}

    async def scenario():
        app = remote_app(box, private_tmux.name, tmp_path)
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_until(pilot, lambda: app.main.problem is None, "the host read once", timeout=30)
            done = await asyncio.to_thread(headspace, "--config", config, "new", "--host", "box", "--session", "main", str(folder), "--", "--append-system-prompt", PROMPT)
            started = time.monotonic()
            assert done.returncode == 0, done.stderr
            address = done.stdout.split()[0]
            assert address.endswith("@box") and f"box:main:1.0: claude in {folder}" in done.stdout
            await wait_until(pilot, lambda: address in app.table.agents, f"{address}'s row", timeout=10, every=0.02)
            timings["appeared"] = time.monotonic() - started
            await wait_until(pilot, lambda: app.table.agents[address].state is AgentState.IDLE, "Claude idle there", timeout=30)
            pid = int(private_tmux.run("display-message", "-p", "-t", address.partition("@")[0], "#{pane_pid}").strip())
            info = read_process_table().get(pid)
            assert info is not None and list(info.argv[-2:]) == ["--append-system-prompt", PROMPT]  # through ssh's shell, word for word
            app.table.select(address)
            await wait_until(pilot, lambda: (a := app.selected_agent()) is not None and a.pane_id == address, "the cursor on it")
            app.lifecycle.stop_agent()
            await wait_until(pilot, lambda: address not in app.table.agents, "the row to go", timeout=STOPS_WITHIN)
            assert address.partition("@")[0] not in pane_ids(private_tmux)

    asyncio.run(scenario())
    print(f"\nremote row appeared {timings['appeared']:.2f}s after 'headspace new --host' returned")
    assert timings["appeared"] < APPEARS_WITHIN + 1.0, timings  # one more second: the host's link polls


def test_new_on_a_host_the_service_watches_is_started_by_that_service(claude_binary, fake_api, private_tmux, box, tmp_path, services):  # noqa: F811 - a fixture
    """One engine per host: with a service of this tmux server watching box, ``new --host box`` asks it, and it starts the agent through its own link.

    The command runs where ssh is not on its PATH (a link of its own could
    not reach box); the service's row of the new agent follows.
    """
    folder = tmp_path / "work"
    folder.mkdir()
    user_server(private_tmux, claude_binary, fake_api, tmp_path, [folder])
    config = config_file(tmp_path, box, private_tmux.name)
    with temp_server("hs-here-") as (_, here):  # this machine's own tmux server, whose service watches box
        here.new_session("shell", width=80, height=24, cwd=str(tmp_path), command=["sleep", "600"])
        started(here.name, services, "--config", str(config))
        key, wanted = TmuxServer(socket_name=here.name).identity, str(config.resolve())

        def rows_of_box() -> list[dict] | None:
            try:
                rows, problems = ask_rows(key, wanted)
            except ServiceError:
                return None
            return None if any(p.startswith("box") for p in problems) else [r for r in rows if r["host"] == "box"]

        assert poll(rows_of_box, lambda found: found is not None, timeout=60) is not None, "the service's first look at box"
        without_ssh = {"PATH": no_tmux_path(tmp_path)}  # this Python only: no ssh, no tmux
        new = lambda *args: headspace("-L", here.name, "--config", str(config), "new", "--host", "box", *args, env=without_ssh)  # noqa: E731
        refused = new("--session", "main", str(tmp_path / "missing"))
        assert refused.returncode == 1 and refused.stderr == f"headspace: box: no such folder: {tmp_path / 'missing'}\n", refused.stderr
        assert len(pane_ids(private_tmux)) == 1  # nothing started
        done = new("--session", "main", str(folder), "--", "--append-system-prompt", PROMPT)
        assert done.returncode == 0, done.stderr
        address = done.stdout.split()[0]
        assert address.endswith("@box") and f"box:main:1.0: claude in {folder}" in done.stdout, done.stdout
        row = poll(lambda: next((r for r in rows_of_box() or [] if r["pane_id"] == address.partition("@")[0]), None), lambda r: r is not None and r["state"] == "idle", timeout=30)
        assert row is not None and row["agent"] == "claude", f"the service's row of {address}"
        pid = int(private_tmux.run("display-message", "-p", "-t", address.partition("@")[0], "#{pane_pid}").strip())
        info = read_process_table().get(pid)
        assert info is not None and list(info.argv[-2:]) == ["--append-system-prompt", PROMPT]  # through ssh's shell, word for word
        private_tmux.run("kill-pane", "-t", address.partition("@")[0])
