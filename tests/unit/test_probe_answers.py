"""The probe's end of the answer channel (remote/probe_answers.py), with the real probe and the real hook program.

The probe runs as it runs on a remote host: ``python3 -c BOOT`` fed the
bundle on stdin, JSON lines on its stdin and stdout (here without ssh in
between: the probe's own transport is those two pipes, and the e2e test
tests/e2e/test_remote_answers.py runs it through a real sshd).  The hook is
``program.py answer N`` as Claude runs it, with a private XDG_RUNTIME_DIR.
"""

from __future__ import annotations

import glob
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from headspace_tui.hooks.calls import allow
from headspace_tui.hooks.spool import spool_dir
from headspace_tui.remote.bundle import BOOT, bundle_line
from headspace_tui.remote.probe_answers import SILENCE
from tests.harness.answer_hook import answer_hook

BASH = {"command": "touch relayed.txt", "description": "Create a file"}
RECORD = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": BASH, "session_id": "s1", "cwd": "/work"}


class RunningProbe:
    """The bundled probe in a subprocess: requests in, answers and pushes out (read by a thread)."""

    def __init__(self, env: dict[str, str], python: str = sys.executable) -> None:
        self.proc = subprocess.Popen([python, "-u", "-c", BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert self.proc.stdin is not None
        self.proc.stdin.write(bundle_line())
        self.proc.stdin.flush()
        self.answers: dict[int, dict] = {}
        self.pushes: queue.Queue[dict] = queue.Queue()
        self._answered = threading.Condition()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if "push" in message:
                self.pushes.put(message)
                continue
            with self._answered:
                self.answers[message.get("id")] = message
                self._answered.notify_all()

    def call(self, op: str, timeout: float = 10, **args):
        self._next += 1
        ident = self._next
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps({"id": ident, "op": op, **args}) + "\n").encode())
        self.proc.stdin.flush()
        with self._answered:
            assert self._answered.wait_for(lambda: ident in self.answers, timeout), f"no answer to {op}"
        answer = self.answers.pop(ident)
        assert "error" not in answer, answer
        return answer["ok"]

    def push(self, kind: str, timeout: float = 10) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            message = self.pushes.get(timeout=max(0.01, deadline - time.monotonic()))
            if message.get("push") == kind:
                return message

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    return folder


def oldest_python() -> str:
    """The oldest python3 a remote host may have (3.9): where asyncio's TimeoutError was still its own."""
    candidates = [shutil.which("python3.9"), *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.9*/bin/python3.9")))]
    for candidate in filter(None, candidates):
        ran = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
        if ran.stdout.strip() == "(3, 9)":  # a pyenv shim without that version selected fails: the next one
            return candidate
    pytest.skip("no python3.9 here to run the probe as an old host would")


@pytest.fixture
def probe(runtime: Path, request):
    python = oldest_python() if getattr(request, "param", "") == "3.9" else sys.executable
    running = RunningProbe({"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": str(runtime), "HOME": str(runtime)}, python)
    try:
        assert running.call("hello")["python"]
        yield running
    finally:
        running.close()


def hook(runtime: Path, wait: float = 30) -> subprocess.Popen:
    """``program.py answer N`` as Claude runs it, for pane %3, the request on its stdin."""
    return answer_hook(str(runtime), RECORD, "%3", wait)


def spool_of(runtime: Path) -> str:
    return str(spool_dir({"XDG_RUNTIME_DIR": str(runtime)}))


@pytest.mark.parametrize("probe", ["this", "3.9"], indirect=True)
def test_a_request_is_relayed_as_a_push_and_the_decision_reaches_the_hook(probe: RunningProbe, runtime: Path):
    opened = probe.call("answer_open", spool=spool_of(runtime))
    socket = runtime / "headspace" / "answer.sock"
    assert opened == {"open": True, "path": str(socket)}
    assert (socket.stat().st_mode & 0o777) == 0o600 and (runtime / "headspace" / "answer.lock").exists()
    waiting = hook(runtime)
    pushed = probe.push("answer")
    record = pushed["record"]
    assert (record["tmux_pane"], record["tool_name"], record["tool_input"], record["pid"]) == ("%3", "Bash", BASH, os.getpid())
    assert probe.call("answer_beat") == [pushed["call"]]
    assert probe.call("answer_decide", call=pushed["call"], decision=allow()) is True
    out, _ = waiting.communicate(timeout=10)
    assert json.loads(out)["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    assert probe.call("answer_beat") == []
    assert probe.call("answer_decide", call=pushed["call"], decision=allow()) is False  # gone: nothing to decide


def test_a_released_call_and_a_hook_that_leaves_by_itself(probe: RunningProbe, runtime: Path):
    probe.call("answer_open", spool=spool_of(runtime))
    released = hook(runtime)
    pushed = probe.push("answer")
    assert probe.call("answer_release", call=pushed["call"]) is True
    assert released.communicate(timeout=10) == (b"", b"")  # no decision: Claude's dialog answers
    short = hook(runtime, wait=1)  # its wait runs out there: headspace is told
    pushed = probe.push("answer")
    assert probe.push("answer_gone", timeout=10)["call"] == pushed["call"]
    short.communicate(timeout=10)


def test_stdin_ending_lets_waiting_hooks_go_at_once(probe: RunningProbe, runtime: Path):
    probe.call("answer_open", spool=spool_of(runtime))
    waiting = hook(runtime)
    probe.push("answer")
    assert probe.proc.stdin is not None
    closed = time.monotonic()
    probe.proc.stdin.close()  # the link dropped: sshd closes the probe's stdin
    out, _ = waiting.communicate(timeout=10)
    took = time.monotonic() - closed
    assert out == b"" and took < 1.5, took
    probe.proc.wait(timeout=5)
    assert not (runtime / "headspace" / "answer.sock").exists()  # closed, not left behind


def test_a_silent_headspace_lets_waiting_hooks_go_after_the_keepalive_window_and_a_heartbeat_keeps_them(probe: RunningProbe, runtime: Path):
    """A half-open link: stdin stays open, nothing comes.  With a heartbeat every 2 s the hook waits on."""
    probe.call("answer_open", spool=spool_of(runtime))
    kept = hook(runtime)
    kept_call = probe.push("answer")["call"]
    beats_until = time.monotonic() + SILENCE + 3
    while time.monotonic() < beats_until:
        assert probe.call("answer_beat") == [kept_call]  # still waiting, past the window: headspace is here
        time.sleep(2.0)
    assert kept.poll() is None
    probe.call("answer_decide", call=kept_call, decision=allow())
    assert json.loads(kept.communicate(timeout=10)[0])["hookSpecificOutput"]["decision"]["behavior"] == "allow"

    silent = hook(runtime)
    probe.push("answer")
    began = time.monotonic()
    out, _ = silent.communicate(timeout=SILENCE + 5)
    took = time.monotonic() - began
    assert out == b"" and SILENCE - 0.5 < took < SILENCE + 2, took


def test_the_socket_there_is_refused_in_a_public_folder_and_left_to_the_headspace_that_holds_it(probe: RunningProbe, runtime: Path, tmp_path: Path):
    public = tmp_path / "public"
    (public / "headspace").mkdir(parents=True)
    (public / "headspace").chmod(0o777)
    refused = probe.call("answer_open", spool=str(public / "headspace" / "spool"))
    assert refused["open"] is False and "writable by other users" in refused["problem"] and not refused["taken"]
    assert not (public / "headspace" / "answer.sock").exists()

    assert probe.call("answer_open", spool=spool_of(runtime))["open"]
    second = RunningProbe({"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": str(runtime), "HOME": str(runtime)})
    try:
        taken = second.call("answer_open", spool=spool_of(runtime))
        assert taken["open"] is False and taken["taken"] is True and "another headspace" in taken["problem"]
    finally:
        second.close()
