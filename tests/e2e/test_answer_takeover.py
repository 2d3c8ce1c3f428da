"""A headspace that started second takes the answer channel over when the first dies.

The first headspace is a real process holding the channel; the second is
the monitor as the app runs it (answers on), against a private tmux server.
While the first lives the second leaves the channel alone; after ``kill -9``
of the first, the second has the channel within a few seconds and says so
in one line (before, hooks went unanswered until a restart).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from headspace_tui.events import Notice
from headspace_tui.hooks.channel import socket_path
from headspace_tui.hooks.spool import spool_dir
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.watching.hook_intake import CHANNEL_RETRY
from headspace_tui.service.watching.monitor import Monitor
from headspace_tui.tmux.server import TmuxServer
from tests.unit.test_answer_channel import OWNER

pytestmark = pytest.mark.e2e


def test_the_second_headspace_takes_the_channel_once_the_first_is_killed(private_tmux, tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    spool = spool_dir({"XDG_RUNTIME_DIR": str(runtime)})
    path = socket_path(spool)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    private_tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "work", "-x", "80", "-y", "24", "sleep 600")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    first = subprocess.Popen([sys.executable, "-c", OWNER, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    notices: list[str] = []
    try:
        assert first.stdout.readline().strip() == "open"
        monitor = Monitor(
            TmuxServer(socket_name=private_tmux.name),
            config_dir=tmp_path / "no-claude",
            journal=Journal(None),
            spool=spool,
            answers=True,
        )
        monitor.subscribe(lambda event: isinstance(event, Notice) and notices.append(event.text))

        async def scenario() -> float:
            task = asyncio.create_task(monitor.run())
            try:
                deadline = time.monotonic() + 10
                while not notices and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert notices and "another headspace" in notices[0], notices
                await asyncio.sleep(CHANNEL_RETRY + 1)  # a retry while the first lives changes nothing
                assert monitor.desk.channel is None and len(notices) == 1
                first.kill()  # our own child: it ends without cleaning up
                first.wait()
                killed = time.monotonic()
                while monitor.desk.channel is None and time.monotonic() - killed < 3 * CHANNEL_RETRY:
                    await asyncio.sleep(0.05)
                took = time.monotonic() - killed
                assert monitor.desk.channel is not None, "the channel was never taken over"
                assert notices[-1] == "answer channel on: the headspace that had it has ended"
                return took
            finally:
                await monitor.stop()
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

        took = asyncio.run(scenario())
        print(f"channel taken over {took:.1f}s after the first headspace was killed")
        assert took < 2 * CHANNEL_RETRY, f"taken over {took:.1f} s after: not at the first retry"  # not a quiet machine's 1 s of slack
        assert not path.exists(), "the second headspace's socket was not removed when it stopped"
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
