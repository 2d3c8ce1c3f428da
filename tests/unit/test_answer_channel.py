"""The answer channel without Claude: the real hook program against headspace's real socket.

``program.py answer N`` runs as Claude runs it (a subprocess, the record on
stdin, a private XDG_RUNTIME_DIR); ``AnswerChannel`` listens on the socket in
that folder.  Matching a request to a screen is checked on recorded screens
from the corpus (what the real Claude drew).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from headspace_tui.detect.claude import classify_capture
from headspace_tui.hooks.calls import PendingCall, allow, deny, hook_answer, why_not
from headspace_tui.hooks.channel import AnswerChannel, ChannelTaken, ChannelUnavailable, socket_path
from headspace_tui.hooks.settings import PROGRAM
from headspace_tui.hooks.spool import HookEvent, hook_observation, spool_dir
from tests.harness.record import DEFAULT_OUT

BASH = {"command": "touch marker.txt && echo headspace-ok", "description": "Create a marker file"}


def screen(name: str):
    ansi = (DEFAULT_OUT / "alt" / "120x40" / name).with_suffix(".ansi").read_text()
    return classify_capture(ansi, command="claude")


def payload(tool: str = "Bash", tool_input: dict | None = None, **extra) -> dict:
    record = {"hook_event_name": "PermissionRequest", "tool_name": tool, "tool_input": tool_input if tool_input is not None else BASH}
    return {**record, "session_id": "s1", "cwd": "/work", "tmux_pane": "%3", "pid": 4242, **extra}


def call_of(record: dict) -> PendingCall:
    call = PendingCall.from_payload(1, record, 0.0)
    assert call is not None
    return call


# -- matching a request to the screen ------------------------------------------------------


def test_a_bash_request_matches_the_dialog_showing_its_command():
    shown = screen("permission_bash")
    assert why_not(call_of(payload()), shown) == ""
    assert why_not(call_of(payload(tool_input={"command": "rm -rf build"})), shown) == "the command on screen is not the one in the request"
    assert why_not(call_of(payload(tool="Write", tool_input={"file_path": "/w/x"})), shown).startswith("the screen asks about Bash")
    assert why_not(call_of(payload()), shown, agent_pid=99) == "another Claude process asked"


def test_a_file_request_matches_the_dialog_naming_the_file_relative_to_the_work_dir():
    shown = screen("permission_write")  # "Do you want to create notes.txt?"
    assert why_not(call_of(payload("Write", {"file_path": "/home/dev/proj/notes.txt", "content": "x"})), shown) == ""
    assert why_not(call_of(payload("Write", {"file_path": "/home/dev/proj/other-notes.txt", "content": "x"})), shown) != ""


def test_a_question_request_matches_only_its_question_and_labels():
    shown = screen("question_two_options")
    asked = {"questions": [{"question": "Which database should we use?", "options": [{"label": "Postgres"}, {"label": "SQLite"}]}]}
    call = call_of(payload("AskUserQuestion", asked))
    assert why_not(call, shown) == ""
    answer = hook_answer(call, shown, "option", "2")
    assert answer is not None and answer.decision["updatedInput"]["answers"] == {"Which database should we use?": "SQLite"}
    assert hook_answer(call, shown, "option", "3") is None  # "Type something." is Claude's own row: keys
    relabelled = {"questions": [{"question": "Which database should we use?", "options": [{"label": "MySQL"}, {"label": "SQLite"}]}]}
    assert why_not(call_of(payload("AskUserQuestion", relabelled)), shown) == "the options on screen are not the ones Claude asked"


def test_the_dialog_not_on_screen_is_no_match():
    assert why_not(call_of(payload()), screen("working_streaming")) == "its dialog is not on screen"


def test_a_question_known_only_from_a_hook_is_not_on_screen():
    """The spool's PermissionRequest says "question" with its labels before Claude draws it: not answerable yet."""
    asked = {"questions": [{"question": "Which database should we use?", "options": [{"label": "Postgres"}, {"label": "SQLite"}]}]}
    record = payload("AskUserQuestion", asked)
    from_hook = hook_observation(HookEvent.from_record("1-1-a.json", record))
    assert from_hook.option_labels == ["Postgres", "SQLite"]
    assert why_not(call_of(record), from_hook) == "its dialog is not on screen"


def test_answers_for_keys():
    shown = screen("permission_bash")
    call = call_of(payload())
    assert hook_answer(call, shown, "approve").decision == allow()
    refused = hook_answer(call, shown, "deny").decision
    assert refused["behavior"] == "deny" and refused["interrupt"] is True
    assert hook_answer(call, shown, "option", "1").decision == allow()  # "1. Yes"
    assert hook_answer(call, shown, "option", "4").decision["behavior"] == "deny"  # "4. No"
    assert hook_answer(call, shown, "option", "2") is None  # "Yes, and always allow ...": keys


@pytest.mark.parametrize(
    "record",
    [
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tmux_pane": "%3"},
        {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tmux_pane": ""},
        {"hook_event_name": "PermissionRequest", "tool_name": "ExitPlanMode", "tmux_pane": "%3"},
        # Codex's: without its conversation's record it is nobody's; with a pane it is not what Codex's hook sends.
        {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "family": "codex", "tmux_pane": ""},
        {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "family": "codex", "tmux_pane": "%3", "transcript_path": "/r.jsonl"},
        # A family's name that is not a plain word: no held call, and no pane.
        {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "family": " codex", "tmux_pane": "", "transcript_path": "/r.jsonl"},
        ["not", "an", "object"],
    ],
)
def test_requests_headspace_cannot_answer_are_refused(record):
    assert PendingCall.from_payload(1, record, 0.0) is None


# -- the socket and the real hook program ---------------------------------------------------


def run_hook(runtime: Path, record: dict | bytes, wait: float = 5, *family: str) -> tuple[subprocess.Popen, float]:
    env = {"XDG_RUNTIME_DIR": str(runtime), "PATH": "/usr/bin:/bin", "TMUX_PANE": "%3"}
    proc = subprocess.Popen(
        [sys.executable, "-S", str(PROGRAM), "answer", str(wait), *family],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    data = record if isinstance(record, bytes) else json.dumps(record).encode()
    proc.stdin.write(data)
    proc.stdin.close()
    proc.stdin = None  # written and closed: communicate() must not flush it again
    return proc, time.monotonic()


async def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = await asyncio.to_thread(proc.communicate, timeout=15)
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    return folder


def channel_in(runtime: Path, accept=lambda call: True, gone=None) -> AnswerChannel:
    path = socket_path(spool_dir({"XDG_RUNTIME_DIR": str(runtime)}))
    return AnswerChannel(path, accept=accept, on_gone=gone or (lambda call: None))


async def first_call(channel: AnswerChannel, timeout: float = 10) -> PendingCall:
    deadline = time.monotonic() + timeout
    while not channel.calls:
        assert time.monotonic() < deadline, "the hook never reached the channel"
        await asyncio.sleep(0.01)
    return next(iter(channel.calls.values()))


def test_a_decision_reaches_claude_as_the_hooks_output(runtime: Path):
    async def scenario():
        channel = channel_in(runtime)
        await channel.start()
        assert (os.stat(channel.path).st_mode & 0o777) == 0o600
        before = time.time()
        proc, _ = run_hook(runtime, payload())
        call = await first_call(channel)
        assert (call.pane_id, call.tool_name, call.tool_input) == ("%3", "Bash", BASH)
        assert before + 5 <= call.until <= time.time() + 5  # the hook says until when it waits (its start, and its 5 s)
        assert channel.decide(call.id, deny("no thanks"))
        code, out, err = await finish(proc)
        await channel.close()
        assert not channel.path.exists()
        return code, out, err

    code, out, err = asyncio.run(scenario())
    assert (code, err) == (0, "")
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no thanks", "interrupt": True}}}


def test_the_desk_is_asked_with_the_call_already_pending_and_a_refused_one_is_not_left(runtime: Path):
    """The desk reads the pane's dialog as it accepts a call: the call must be pending by then.

    A dialog drawn before the hook came holds still, so it is read no more: a
    call the desk could not see as it accepted stayed untagged (no hook
    answer, no change above Approve on the page) for as long as it waited.
    """
    at_accept: list[list[int]] = []
    made: list[AnswerChannel] = []

    def accept(call: PendingCall) -> bool:
        at_accept.append([c.id for c in made[0].pending(call.pane_id)])
        return len(at_accept) == 1  # the first is taken, the second refused

    async def scenario():
        channel = channel_in(runtime, accept=accept)
        made.append(channel)
        await channel.start()
        proc, _ = run_hook(runtime, payload())
        call = await first_call(channel)
        refused, _ = run_hook(runtime, payload())
        result = await finish(refused)
        assert list(channel.calls) == [call.id], "the refused call is not left pending"
        assert channel.decide(call.id, deny("no"))
        await finish(proc)
        await channel.close()
        return call, result

    call, (code, out, _err) = asyncio.run(scenario())
    assert at_accept == [[call.id], [call.id, call.id + 1]]  # the second, as it was asked about: pending beside the first
    assert (code, out) == (0, "")


def test_no_headspace_means_no_output_at_once(runtime: Path):
    proc, began = run_hook(runtime, payload(), wait=30)
    code, out, err = asyncio.run(finish(proc))
    assert (code, out, err) == (0, "", "")
    assert time.monotonic() - began < 5  # not the 30 s wait


def test_a_request_headspace_does_not_watch_is_let_go_at_once(runtime: Path):
    async def scenario():
        channel = channel_in(runtime, accept=lambda call: False)
        await channel.start()
        proc, began = run_hook(runtime, payload(), wait=30)
        result = await finish(proc)
        await channel.close()
        return result, time.monotonic() - began

    (code, out, err), took = asyncio.run(scenario())
    assert (code, out, err) == (0, "", "") and took < 5


def test_no_decision_in_time_returns_nothing_and_headspace_is_told(runtime: Path):
    gone: list[PendingCall] = []

    async def scenario():
        channel = channel_in(runtime, gone=gone.append)
        await channel.start()
        proc, began = run_hook(runtime, payload(), wait=1)
        await first_call(channel)
        result = await finish(proc)
        took = time.monotonic() - began
        deadline = time.monotonic() + 5
        while not gone and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        late = channel.decide(gone[0].id, allow()) if gone else True
        await channel.close()
        return result, took, late

    (code, out, err), took, late = asyncio.run(scenario())
    assert (code, out, err) == (0, "", "")
    assert 0.9 < took < 5
    assert len(gone) == 1 and late is False


@pytest.mark.parametrize("reply", [b"garbage\n", b'{"decision": {"behavior": "always"}}\n', b'{"decision": "allow"}\n'])
def test_a_malformed_reply_is_no_decision(runtime: Path, reply: bytes):
    path = socket_path(spool_dir({"XDG_RUNTIME_DIR": str(runtime)}))
    path.parent.mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    proc, _ = run_hook(runtime, payload())
    conn, _ = server.accept()
    conn.recv(1 << 20)
    conn.sendall(reply)
    conn.close()
    server.close()
    assert asyncio.run(finish(proc)) == (0, "", "")


def test_a_foreign_or_public_folder_is_never_used(runtime: Path):
    base = runtime / "headspace"
    base.mkdir(mode=0o755)
    base.chmod(0o777)  # writable by anyone: another user could plant a socket here
    with pytest.raises(ChannelUnavailable, match="answer channel off"):
        asyncio.run(channel_in(runtime).start())
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(base / "answer.sock"))
    server.listen(1)
    proc, began = run_hook(runtime, payload(), wait=30)
    assert asyncio.run(finish(proc)) == (0, "", "")
    server.settimeout(0.2)
    with pytest.raises(TimeoutError):
        server.accept()  # the hook never connected
    server.close()


def test_a_second_headspace_leaves_the_channel_to_the_first_and_a_stale_socket_is_replaced(runtime: Path):
    async def scenario():
        first = channel_in(runtime)
        await first.start()
        with pytest.raises(ChannelUnavailable, match="another headspace"):
            await channel_in(runtime).start()
        first._server.close()  # dies without cleaning up: its socket stays behind...
        await first._server.wait_closed()
        first._drop_lock()  # ...and the kernel lets go of its lock, as for any process that ends
        assert first.path.exists()
        return await a_new_channel_allows_one_hook(runtime)

    code, out, _ = asyncio.run(scenario())
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["decision"] == {"behavior": "allow"}


async def a_new_channel_allows_one_hook(runtime: Path) -> tuple[int, str, str]:
    """Open a channel (taking over a dead one's), let a real hook reach it, allow its request."""
    second = channel_in(runtime)
    await second.start()
    proc, _ = run_hook(runtime, payload())
    call = await first_call(second)
    second.decide(call.id, allow())
    result = await finish(proc)
    await second.close()
    return result


def test_garbage_on_stdin_is_let_go(runtime: Path):
    async def scenario():
        channel = channel_in(runtime)
        await channel.start()
        proc, _ = run_hook(runtime, b"\x00\xff not json at all")
        result = await finish(proc)
        await channel.close()
        return result

    assert asyncio.run(scenario()) == (0, "", "")


OWNER = """
import asyncio, sys
from pathlib import Path
from headspace_tui.hooks.channel import AnswerChannel

async def main():
    channel = AnswerChannel(Path(sys.argv[1]), accept=lambda call: True)
    await channel.start()
    print("open", flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


def test_a_headspace_killed_with_kill_9_hands_the_channel_to_the_next_one_and_a_live_one_keeps_it(runtime: Path):
    """The first headspace is a real process; while it lives the channel is its own, after kill -9 the next one takes it."""
    path = socket_path(spool_dir({"XDG_RUNTIME_DIR": str(runtime)}))
    path.parent.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert owner.stdout.readline().strip() == "open"

        async def while_alive():
            with pytest.raises(ChannelTaken):
                await channel_in(runtime).start()
            assert path.exists()  # and its socket is left alone

        asyncio.run(while_alive())
    finally:
        owner.kill()  # our own child, by its handle: it ends without cleaning up
        owner.wait()
    assert path.exists(), "the dead headspace's socket stays behind"

    code, out, _ = asyncio.run(a_new_channel_allows_one_hook(runtime))
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["decision"] == {"behavior": "allow"}


def test_a_hook_that_streams_after_its_request_is_dropped_without_buffering_it(runtime: Path):
    """300 MB after a valid request grew headspace by 306 MB: now the connection ends after a few KB."""
    gone: list = []

    async def scenario():
        channel = channel_in(runtime, gone=gone.append)
        await channel.start()
        reader, writer = await asyncio.open_unix_connection(str(channel.path))
        writer.write((json.dumps(payload()) + "\n").encode())  # what the hook program sends: the payload with its pane and pid
        await writer.drain()
        await first_call(channel)
        sent = 0
        try:
            while sent < 50 << 20:  # 50 MB, were it all read
                writer.write(b"x" * 65536)
                await asyncio.wait_for(writer.drain(), 5)
                sent += 65536
        except (ConnectionError, TimeoutError):
            pass
        try:  # the channel's "{}" (no decision), or a reset: it closed with our bytes unread
            ended = await asyncio.wait_for(reader.read(), 5)
        except ConnectionResetError:
            ended = b"{}"
        waiting = dict(channel.calls)
        await channel.close()
        return sent, ended, waiting

    sent, ended, waiting = asyncio.run(scenario())
    assert sent < 50 << 20, "the channel kept reading everything it was sent"
    assert ended.strip() == b"{}" and waiting == {}, "the request was not let go"


def test_the_channel_also_answers_a_hook_under_another_xdg_runtime_dir(runtime: Path, tmp_path: Path):
    """An agent's hook looks beside its own spool: ``listen_also`` puts headspace there too (the real hook program)."""
    theirs = tmp_path / "agent-run"
    theirs.mkdir(mode=0o700)
    elsewhere = socket_path(spool_dir({"XDG_RUNTIME_DIR": str(theirs)}))

    async def scenario() -> tuple[int, str, str]:
        channel = channel_in(runtime)
        await channel.start()
        await channel.listen_also(elsewhere)
        await channel.listen_also(elsewhere)  # twice is once
        assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o600
        with pytest.raises(ChannelUnavailable, match="another headspace"):
            await channel_in(theirs).start()  # its lock is held: a headspace of that XDG_RUNTIME_DIR leaves it
        proc, _ = run_hook(theirs, payload())
        call = await first_call(channel)
        channel.decide(call.id, allow())
        result = await finish(proc)
        await channel.close()
        assert not elsewhere.exists() and not channel.path.exists()  # both closed, not left behind
        return result

    code, out, _ = asyncio.run(scenario())
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["decision"] == {"behavior": "allow"}


def test_a_flood_of_idle_connections_is_capped_and_a_real_hook_still_gets_through_after(runtime: Path, monkeypatch: pytest.MonkeyPatch):
    """6,000 idle connections left headspace 36 MB bigger for good: past MAX_CONNECTIONS they are closed as they come."""
    from headspace_tui.hooks import channel as channel_module

    monkeypatch.setattr(channel_module, "MAX_CONNECTIONS", 20)  # the same rule, at a size a test can reach quickly

    async def scenario():
        channel = channel_in(runtime)
        await channel.start()
        idle = [await asyncio.open_unix_connection(str(channel.path)) for _ in range(50)]
        for _ in range(500):  # every connection accepted or refused: waited for (up to 5 s), not assumed done after 0.2 s
            if channel.refused + channel._open >= 50:
                break
            await asyncio.sleep(0.01)
        refused, open_now = channel.refused, channel._open
        closed_at_once = 0
        for reader, _writer in idle:
            try:
                if await asyncio.wait_for(reader.read(), 0.05) == b"":
                    closed_at_once += 1
            except TimeoutError:
                pass  # still open: one of the first twenty (dropped after READ_TIMEOUT if it says nothing)
            except ConnectionError:
                closed_at_once += 1
        for _reader, writer in idle:
            writer.close()
        for _ in range(500):  # the open ones went: their places are free (waited for, up to 5 s)
            if channel._open == 0:
                break
            await asyncio.sleep(0.01)
        proc, _ = run_hook(runtime, payload())
        call = await first_call(channel)
        assert channel.decide(call.id, allow())
        result = await finish(proc)
        left = channel._open
        await channel.close()
        return closed_at_once, refused, open_now, result, left

    closed_at_once, refused, open_now, (code, out, _err), left = asyncio.run(scenario())
    assert (closed_at_once, refused, open_now) == (30, 30, 20)
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["decision"]["behavior"] == "allow"
    assert left == 0


CODEX_RECORD = {
    "session_id": "01a2",
    "transcript_path": "/home/u/.codex/sessions/2026/11/29/rollout-2026-11-29T18-32-49-01a2.jsonl",
    "cwd": "/home/u/work",
    "hook_event_name": "PermissionRequest",
    "tool_name": "Bash",
    "tool_input": {"command": "touch /tmp/x_1", "description": "make it?"},
}


def test_codexs_hook_sends_no_pane_or_pid_and_its_refusal_never_carries_interrupt(runtime: Path):
    """Codex runs hooks from its shared daemon: that process's $TMUX_PANE and pid are not the asking agent's."""

    async def scenario():
        channel = channel_in(runtime)
        await channel.start()
        proc, _ = run_hook(runtime, CODEX_RECORD, 5, "codex")
        call = await first_call(channel)
        assert (call.family, call.pane_id, call.pid, call.transcript) == ("codex", "", 0, CODEX_RECORD["transcript_path"])
        assert channel.decide(call.id, deny("no", interrupt=True))  # even if asked to: Codex fails it closed
        result = await finish(proc)
        await channel.close()
        return result

    code, out, err = asyncio.run(scenario())
    assert (code, err) == (0, "")
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no"}}}
    assert deny("no", interrupt=False) == {"behavior": "deny", "message": "no"}


def test_a_family_key_in_the_agents_own_event_never_makes_its_call_a_held_one(runtime: Path):
    """Only the installer's word (``answer N NAME``) makes a held hook's record: a ``family`` in Claude's own JSON is dropped."""

    async def scenario():
        channel = channel_in(runtime)
        await channel.start()
        proc, _ = run_hook(runtime, {**payload(), "family": "codex", "transcript_path": "/r.jsonl"}, 5)
        call = await first_call(channel)
        assert channel.decide(call.id, allow())
        await finish(proc)
        await channel.close()
        return call

    call = asyncio.run(scenario())
    assert (call.family, call.pane_id) == ("claude", "%3") and call.pid > 0
