"""The remote probe is woken by the kernel, and a real Claude's status still reaches headspace through it.

The fixtures are test_remote.py's: ``box`` is a real sshd on 127.0.0.1 and
``private_tmux`` the sessions' tmux server behind it; the probe runs there
under the login's own python3.  One real Claude (with the fake API) is
watched by a ``Monitor`` through a ``RemoteHost``.

* While nothing happens the probe does not look at all: its ``hello``
  says it watches with inotify and counts its looks; once Claude's start
  has settled (no look for 1.5 s), over 3 idle seconds
  the count does not move (the old probe looked six times).
* Claude asking for permission rewrites its status file there; the probe
  pushes it (``statuses`` with ``waiting``), and the row says permission.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from headspace_tui.events import AgentChanged
from headspace_tui.model import AgentState
from headspace_tui.remote.host import RemoteHost
from headspace_tui.service.watching.monitor import Monitor
from headspace_tui.shared.config import HostSpec
from tests.e2e.test_remote import box, private_tmux  # noqa: F401 - fixtures
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU

pytestmark = pytest.mark.e2e

IDLE_SECONDS = 3.0
SETTLE = 1.5  # seconds without a look before the idle window is measured (less than IDLE_SECONDS)


async def until(test, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def test_the_remote_probe_sleeps_until_a_status_file_changes_and_pushes_it(claude_session, fake_api, private_tmux, box, tmp_path: Path):  # noqa: F811 - fixtures
    session = claude_session(name="watched")
    address = session.pane_id + "@box"
    host = RemoteHost(HostSpec("box", box.alias, socket_name=private_tmux.name, ssh_config=str(box.client_config)))
    pushes: list[tuple[float, dict]] = []
    pushed = host._pushed

    def record(message: dict) -> None:  # what the probe pushed, then handled as always
        pushes.append((time.monotonic(), message))
        pushed(message)

    host._pushed = record  # type: ignore[method-assign]

    async def scenario() -> None:
        monitor = Monitor(host.server, host=host, config_dir=None, hooks=False)
        states: dict[str, AgentState] = {}
        monitor.subscribe(lambda e: states.__setitem__(e.agent.pane_id, e.agent.state) if isinstance(e, AgentChanged) else None)
        task = asyncio.create_task(monitor.run())
        try:
            await until(lambda: states.get(address) is AgentState.IDLE, "the remote agent idle", 30)
            await until(lambda: any(m.get("push") == "statuses" and m.get("statuses") for _, m in pushes), "the first status push", 10)
            assert host.probe is not None
            first = await host.probe.call("hello")
            assert first["watch"] == "inotify", first
            # The monitor's first passes over a new agent may still ask the probe to look a moment after the row reads
            # idle (seen once under a loaded CI: 2 looks): wait for a quiet SETTLE, shorter than the window measured, so
            # a probe that polls by itself never settles.
            deadline = time.monotonic() + 15
            while True:
                await asyncio.sleep(SETTLE)
                settled = await host.probe.call("hello")
                if settled["looks"] == first["looks"]:
                    break
                assert time.monotonic() < deadline, f"the probe kept looking while Claude was idle ({settled['looks']} looks)"
                first = settled
            await asyncio.sleep(IDLE_SECONDS)  # nothing happens there: the probe must not look
            second = await host.probe.call("hello")
            assert second["looks"] == first["looks"], f"the probe looked {second['looks'] - first['looks']} times in {IDLE_SECONDS:g} idle seconds"

            fake_api.set_script([api.bash("touch asked.txt", "Make a file")])
            since = time.monotonic()
            await asyncio.to_thread(session.submit, "make a file")
            await asyncio.to_thread(session.wait_for, NUMBERED_MENU, what="Claude's permission menu")

            def waiting_pushed() -> bool:
                return any(at >= since and m.get("push") == "statuses" and any(row.get("status") == "waiting" for row in m.get("statuses", [])) for at, m in pushes)

            await until(waiting_pushed, "the status push saying waiting", 10)
            await until(lambda: states.get(address) is AgentState.PERMISSION, "the row in permission", 10)
        finally:
            await monitor.stop()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
