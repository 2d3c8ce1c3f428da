"""Children end with headspace, and ending one never waits on pipes someone else holds (issue 22)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from headspace_tui.shared.lifeline import die_with_parent, end, exited


def test_exited_does_not_wait_for_pipes_a_grandchild_holds():
    """Python 3.11's proc.wait() does (an ssh master holds a mux client's pipes the same way)."""

    async def scenario() -> tuple[float, int | None]:
        proc = await asyncio.create_subprocess_exec("sh", "-c", "sleep 30 & echo $!; exit 3", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        assert proc.stdout is not None
        holder = int(await proc.stdout.readline())
        try:
            began = time.monotonic()
            assert await exited(proc, 5.0)
            took = time.monotonic() - began
            assert psutil.pid_exists(holder)  # the pipes are still held open
            await end(proc)  # closes our ends; nothing left waiting
            return took, proc.returncode
        finally:
            os.kill(holder, signal.SIGKILL)  # our own grandchild, by its pid

    took, code = asyncio.run(scenario())
    assert code == 3 and took < 1.0


def test_end_kills_a_child_that_ignores_its_stdin_closing():
    async def scenario() -> tuple[bool, int | None]:
        proc = await asyncio.create_subprocess_exec("sleep", "30", stdin=asyncio.subprocess.PIPE)
        by_itself = await end(proc, 0.2)
        return by_itself, proc.returncode

    by_itself, code = asyncio.run(scenario())
    assert not by_itself and code == -signal.SIGKILL


def test_an_end_cancelled_in_its_grace_still_kills_the_child_and_closes_our_pipes():
    """Headspace stopping cancels whatever is ending a child (a probe's 2 s grace, say).

    Before, ``release`` was skipped then: the child ran on, and its transport,
    collected after the loop had closed, printed "Event loop is closed".
    """

    async def scenario() -> tuple[bool, bool]:
        proc = await asyncio.create_subprocess_exec("sleep", "30", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        ending = asyncio.create_task(end(proc, 5.0))
        await asyncio.sleep(0.2)  # in its grace: sleep ignores its stdin closing
        ending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ending
        closed = proc._transport.is_closing()  # type: ignore[attr-defined]  # asyncio's own transport: no public handle
        return closed, await exited(proc, 5.0)

    closed, gone = asyncio.run(scenario())
    assert closed, "our ends of its pipes were left for the garbage collector"
    assert gone, "the child outlived the cancelled end"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_dies_with_its_parent_even_on_kill_9():
    parent_code = textwrap.dedent(
        """
        import subprocess, sys, time
        from headspace_tui.shared.lifeline import die_with_parent
        child = subprocess.Popen(["sleep", "60"], preexec_fn=die_with_parent(), start_new_session=True)
        print(child.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = psutil.Process(int(parent.stdout.readline()))
    try:
        parent.kill()  # kill -9: no code of headspace runs
        parent.wait()
        deadline = time.monotonic() + 5
        while child.is_running() and child.status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    finally:
        if child.is_running():
            child.kill()
    assert die_with_parent() is not None
