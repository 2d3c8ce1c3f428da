"""An idle remote host is asked rarely, so headspace keeps its probe alive by itself (remote/probe_client.py KEEP_ALIVE).

The probe (the real bundle, run by a real python3) ends itself after
``IDLE_EXIT`` seconds without a request; discovery no longer asks every
30 s on a remote host, so ``ProbeClient`` sends a ``hello`` every
``KEEP_ALIVE`` seconds (which also proves the probe's request loop runs).  ssh is replaced here by a local
``sh -c`` (the keep-alive is between headspace and the probe; ssh only
carries the bytes, and the e2e tests run it through a real sshd).  The
probe's idle exit is shortened in its start line the same way.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from headspace_tui.remote import probe_client as remote_probe
from headspace_tui.remote.probe_client import ProbeClient
from headspace_tui.remote.ssh import SshLink, SshTmuxServer
from headspace_tui.shared.config import HostSpec

IDLE_EXIT = 1.5


class LocalLink(SshLink):
    """The probe started by a local shell instead of through ssh, with a short idle exit."""

    def shell_command(self, line: str) -> list[str]:
        assert ".serve()" in line
        return ["sh", "-c", line.replace(".serve()", f".serve(idle_exit={IDLE_EXIT})")]


async def probe_alive_after(seconds: float) -> tuple[bool, float]:
    """Start a probe, leave it alone for ``seconds``; (still running, seconds until it ended or the end of the wait)."""
    client = ProbeClient(SshTmuxServer(LocalLink(HostSpec("box", "box"))), on_push=lambda message: None, on_end=lambda: None)
    await client.start()
    started = time.monotonic()
    try:
        while client.running and time.monotonic() - started < seconds:
            await asyncio.sleep(0.05)
        return client.running, time.monotonic() - started
    finally:
        await client.close()


def test_a_probe_nobody_asks_is_kept_alive_by_headspace(monkeypatch):
    monkeypatch.setattr(remote_probe, "KEEP_ALIVE", IDLE_EXIT / 3)
    running, _ = asyncio.run(probe_alive_after(3 * IDLE_EXIT))
    assert running, "the probe ended itself: headspace did not keep it alive"


def test_without_keep_alive_the_probe_ends_itself(monkeypatch):
    monkeypatch.setattr(remote_probe, "KEEP_ALIVE", 3600.0)
    running, after = asyncio.run(probe_alive_after(10 * IDLE_EXIT))
    assert not running
    assert after == pytest.approx(IDLE_EXIT, abs=1.0)


def test_a_probe_that_does_not_answer_the_keep_alive_is_told_as_lost(monkeypatch):
    monkeypatch.setattr(remote_probe, "KEEP_ALIVE", 0.3)
    monkeypatch.setattr(remote_probe, "KEEP_ALIVE_ANSWER", 0.5)

    async def scenario() -> float:
        lost = asyncio.Event()
        client = ProbeClient(SshTmuxServer(LocalLink(HostSpec("box", "box"))), on_push=lambda message: None, on_end=lost.set)
        await client.start()
        assert client._proc is not None
        os.kill(client._proc.pid, signal.SIGSTOP)  # our own python3 (sh exec'd it): alive, answering nothing
        stopped = time.monotonic()
        try:
            await asyncio.wait_for(lost.wait(), 10)
            return time.monotonic() - stopped
        finally:
            await client.close(grace=0.5)

    assert asyncio.run(scenario()) < 3.0
