"""A remote host's answer channel on headspace's side (remote/answers.py), through a real sshd, without Claude.

``RemoteHost`` reaches the private sshd of tests/harness/sshd.py as it
reaches a dev box; the hook is the real ``program.py answer N`` run in the
login's environment there (its XDG_RUNTIME_DIR), as Claude would run it.  A
``sleep`` with that environment stands for the Claude whose environment says
where the spool (and so the socket) is.  What is checked is what the desk
relies on: calls carry the pane's address here, the desk's ``accept`` is
asked and a refused hook goes at once, a decision reaches the hook, the
heartbeat keeps a call waiting past the probe's silence window, and a
dropped link lets the hook go at once and tells the desk.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path

from headspace_tui.hooks.calls import PendingCall, allow
from headspace_tui.remote.answers import RETRY, RemoteAnswerChannel
from headspace_tui.remote.host import RemoteHost
from headspace_tui.remote.probe_answers import SILENCE
from headspace_tui.shared.config import HostSpec
from headspace_tui.shared.proctree import ProcessTable
from tests.harness.answer_hook import answer_hook
from tests.harness.sshd import running_sshd

RECORD = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "make"}, "session_id": "s1", "cwd": "/w"}


def hook(runtime: str, pane: str, wait: float = 60) -> subprocess.Popen:
    return answer_hook(runtime, RECORD, pane, wait)


async def until(predicate, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def test_remote_calls_reach_the_desk_with_their_address_and_go_when_the_link_drops(tmp_path: Path):
    with running_sshd(tmp_path) as box:
        runtime = box.remote_env["XDG_RUNTIME_DIR"]
        host = RemoteHost(HostSpec("box", box.alias, socket_name="headspace-none", ssh_config=str(box.client_config)))
        offered: list[PendingCall] = []
        gone: list[PendingCall] = []
        claude = subprocess.Popen(["sleep", "120"], env={"XDG_RUNTIME_DIR": runtime})

        at_accept: list[list[int]] = []  # what the channel held pending as the desk was asked
        made: list[RemoteAnswerChannel] = []

        def accept(call: PendingCall) -> bool:
            offered.append(call)
            at_accept.append([c.id for c in made[0].pending(call.pane_id)])
            return call.pane_id == "%3@box"  # the desk watches this pane only

        async def scenario() -> None:
            channel = RemoteAnswerChannel(host, accept=accept, on_gone=gone.append)
            made.append(channel)
            await channel.start()  # before any connection: it opens once the host knows where
            assert host.answers is channel and channel.path == ""
            await host.connect()
            await host.claude_processes([claude.pid], ProcessTable.of([]))  # its environment names the spool there
            assert channel.path == str(Path(runtime) / "headspace" / "answer.sock")

            decided = hook(runtime, "%3")
            await until(lambda: channel.calls, "the request")
            (call,) = channel.calls.values()
            assert (call.pane_id, call.pid, call.tool_name, call.tool_input) == ("%3@box", os.getpid(), "Bash", {"command": "make"})
            assert channel.pending("%3@box") == [call] and channel.pending("%3") == []
            # The desk reads the pane's dialog as it accepts: the call is pending by then (a dialog drawn before the hook
            # came is read no more, so a call missing then was never tagged).
            assert at_accept == [[call.id]]
            assert channel.decide(call.id, allow())
            out, _ = await asyncio.to_thread(decided.communicate, timeout=10)
            assert json.loads(out)["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
            assert channel.decide(call.id, allow()) is False  # answered: nothing waits

            refused = hook(runtime, "%9")
            began = time.monotonic()
            assert await asyncio.to_thread(refused.communicate, timeout=10) == (b"", b"")
            assert time.monotonic() - began < 2.0 and offered[-1].pane_id == "%9@box" and not channel.calls

            waiting = hook(runtime, "%3")
            await until(lambda: channel.calls, "the request")
            await asyncio.sleep(SILENCE + 2)  # past the probe's window: headspace's heartbeat keeps it
            assert waiting.poll() is None and len(channel.calls) == 1
            (kept,) = channel.calls.values()
            box.stop()  # the link drops: sshd and every connection it serves
            dropped = time.monotonic()
            assert await asyncio.to_thread(waiting.communicate, timeout=10) == (b"", b"")  # no decision: Claude's dialog answers
            let_go = time.monotonic() - dropped
            await until(lambda: gone == [kept], "the desk told the call is gone", timeout=1.0)  # at once, not at the next heartbeat
            assert not channel.calls and let_go < 2.0, let_go
            await channel.close()
            await host.close()

        try:
            asyncio.run(scenario())
        finally:
            claude.kill()
            claude.wait()


def test_a_socket_that_cannot_be_made_there_is_one_line_for_the_user(tmp_path: Path):
    """What the probe says when the socket cannot be opened is one line for the user, never an exception."""
    with running_sshd(tmp_path) as box:
        host = RemoteHost(HostSpec("box", box.alias, socket_name="headspace-none", ssh_config=str(box.client_config)))
        notices: list[str] = []
        host.on_notice = notices.append

        async def scenario() -> None:
            channel = RemoteAnswerChannel(host, accept=lambda call: True)
            await channel.start()
            probe = await host.connect()
            await channel.open_on(probe, "/proc/headspace-none/spool")  # no folder can be made there
            assert channel.path == "" and len(notices) == 1 and notices[0].startswith("box: answer channel off")
            await channel.close()
            await host.close()

        asyncio.run(scenario())


def test_a_second_headspace_leaves_the_socket_there_to_the_first_and_takes_it_over_when_it_ends(tmp_path: Path):
    """The lock there is the local one (``answer.lock`` beside the socket): one headspace answers a host's hooks at a time."""
    with running_sshd(tmp_path) as box:
        runtime = box.remote_env["XDG_RUNTIME_DIR"]
        spec = HostSpec("box", box.alias, socket_name="headspace-none", ssh_config=str(box.client_config))
        first, second = RemoteHost(spec), RemoteHost(spec)
        notices: list[str] = []
        second.on_notice = notices.append
        claude = subprocess.Popen(["sleep", "120"], env={"XDG_RUNTIME_DIR": runtime})

        async def scenario() -> float:
            channels = []
            for host in (first, second):
                channel = RemoteAnswerChannel(host, accept=lambda call: True)
                await channel.start()
                await host.connect()
                await host.claude_processes([claude.pid], ProcessTable.of([]))
                channels.append(channel)
            held, waiting = channels
            assert held.path and not waiting.path
            assert notices == ["box: answer channel off: another headspace is answering hooks on this machine"]
            await held.close()
            await first.close()
            ended = time.monotonic()
            await until(lambda: bool(waiting.path), "the second to take the socket over", timeout=RETRY + 5)
            assert notices[-1] == "box: answer channel on"
            await waiting.close()
            await second.close()
            return time.monotonic() - ended

        try:
            took = asyncio.run(scenario())
        finally:
            claude.kill()
            claude.wait()
        assert took < RETRY + 2
