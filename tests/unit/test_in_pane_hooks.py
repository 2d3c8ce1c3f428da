"""Held hooks that run in their agent's pane (Qwen Code's, GitHub Copilot CLI's): the program, the call, the desk, the installer.

Each agent runs headspace's hook as its CLI's child in the pane and draws no
dialog until it returns, so, as Codex's, only the rules answer it, at once.
Unlike Codex's, its record names the pane and a process under the agent,
and that is how the desk places it.  Copilot's request and answer are in its
camelCase schema.  The hook program and the channel are the real ones, over
a socket in a temp folder; the agents' processes are this test's own.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from headspace_tui.answering.desk import AnswerDesk, Watched
from headspace_tui.detect.families import BY_NAME
from headspace_tui.hooks.calls import PendingCall, allow, deny
from headspace_tui.hooks.settings import PROGRAM, HooksError, holds_own, install_held, install_own, uninstall, uninstall_own
from headspace_tui.model import Agent
from headspace_tui.service.records.store import AgentStore
from headspace_tui.shared.proctree import descends
from tests.unit.test_answer_channel import channel_in, finish, first_call

COPILOT_REQUEST = {
    "hookName": "permissionRequest",
    "sessionId": "be52293b",
    "timestamp": 1796484082905,
    "cwd": "/work",
    "toolName": "bash",
    "toolInput": {"command": "touch x.txt"},
    "permissionSuggestions": [],
}
QWEN_REQUEST = {
    "session_id": "1614396d",
    "transcript_path": "/h/.qwen/projects/-work/chats/1614396d.jsonl",
    "cwd": "/work",
    "hook_event_name": "PermissionRequest",
    "permission_mode": "default",
    "tool_name": "run_shell_command",
    "tool_input": {"command": "touch x.txt", "description": "Create x.txt"},
}


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    return folder


def hook(runtime: Path, request: dict, family: str) -> subprocess.Popen:
    """The real program as the agent runs it: ``answer 3 FAMILY pane``, in pane %3."""
    env = {"XDG_RUNTIME_DIR": str(runtime), "PATH": "/usr/bin:/bin", "TMUX_PANE": "%3"}
    proc = subprocess.Popen([sys.executable, "-S", str(PROGRAM), "answer", "3", family, "pane"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(request).encode())
    proc.stdin.close()
    proc.stdin = None
    return proc


@pytest.mark.parametrize(
    "family, request_, decision, output",
    [
        ("copilot", COPILOT_REQUEST, allow(), {"behavior": "allow"}),
        ("copilot", COPILOT_REQUEST, deny("no", interrupt=True), {"behavior": "deny", "message": "no"}),
        ("qwen", QWEN_REQUEST, allow(), {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}),
        ("qwen", QWEN_REQUEST, deny("no", interrupt=True), {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no"}}}),
    ],
)
def test_the_call_names_its_pane_and_process_and_the_answer_goes_in_the_schema_it_was_asked_in(runtime: Path, family, request_, decision, output):
    """Copilot asks in camelCase and reads only a plain ``{"behavior": …}`` (measured: Claude's ``hookSpecificOutput`` brings its dialog); Qwen as Claude."""

    async def scenario():
        channel = channel_in(runtime)
        await channel.start()
        proc = hook(runtime, request_, family)
        call = await first_call(channel)
        assert channel.decide(call.id, decision)
        result = await finish(proc)
        await channel.close()
        return call, proc.pid, result

    call, hook_pid, (code, out, err) = asyncio.run(scenario())
    assert (code, err) == (0, "")
    assert json.loads(out) == output  # a held hook's deny never carries ``interrupt``
    tool = {"copilot": "bash", "qwen": "run_shell_command"}[family]
    assert (call.family, call.pane_id, call.tool_name, call.tool_input["command"], call.cwd) == (family, "%3", tool, "touch x.txt", "/work")
    assert call.pid == os.getpid()  # the hook's parent: here this test, in the agent's place


def test_a_held_call_with_neither_a_pane_nor_a_conversation_record_is_nobodys():
    record = {**QWEN_REQUEST, "family": "qwen", "tmux_pane": "", "pid": 0, "transcript_path": ""}
    assert PendingCall.from_payload(1, record, 0.0) is None
    assert PendingCall.from_payload(1, {**record, "tmux_pane": "%3"}, 0.0) is None  # a pane without the agent's process
    placed = PendingCall.from_payload(1, {**record, "tmux_pane": "%3", "pid": 42}, 0.0)
    assert placed is not None and (placed.pane_id, placed.pid, placed.family) == ("%3", 42, "qwen")


class Channel:
    def __init__(self) -> None:
        self.released: list[int] = []
        self.decided: list[tuple[int, dict]] = []

    def pending(self, pane_id: str) -> list[PendingCall]:
        return []

    def decide(self, call_id: int, decision: dict) -> bool:
        self.decided.append((call_id, decision))
        return True

    def release(self, call_id: int) -> bool:
        self.released.append(call_id)
        return True


def placed(family: str, agent_pid: int, call_pid: int, *, pane: str = "%3", host: str = "local") -> tuple[list[PendingCall], Channel, list[PendingCall]]:
    """A desk watching %3 (an agent of ``family``, pid ``agent_pid``) given one in-pane held call from ``call_pid``: (handed to the rules, the channel, looked for)."""
    store = AgentStore("local")
    agent = Agent(pane_id="%3", target="q:0.0", session="q", cwd="/work", family=family, agent_pid=agent_pid, key="k3", host=host)
    store.agents["%3"] = agent
    desk = AnswerDesk(store, lambda p: Watched(agent, agent_pid) if p == "%3" else None, lambda: 100.0)
    channel = Channel()
    desk.channel = channel  # type: ignore[assignment]
    held: list[PendingCall] = []
    looked: list[PendingCall] = []

    async def locate(call: PendingCall) -> str | None:
        looked.append(call)
        return None

    desk.locate, desk.held = locate, held.append
    call = PendingCall(7, pane, call_pid, "s", "run_shell_command", {"command": "touch x"}, cwd="/work", arrived=99.5, family="qwen")

    async def scenario():
        assert desk._accept(call)
        for _ in range(5):
            await asyncio.sleep(0)

    asyncio.run(scenario())
    return held, channel, looked


def test_an_in_pane_call_is_placed_by_its_pane_when_its_process_is_under_the_panes_agent():
    """The hook's parent is the agent's worker (Qwen's CLI under its launcher): any process under the agent's."""
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as child:
        try:
            held, channel, looked = placed("qwen", os.getpid(), child.pid)
        finally:
            child.kill()
    assert [c.pane_id for c in held] == ["%3"] and channel.released == [] and looked == []  # its pane is its own: nothing searched


@pytest.mark.parametrize(
    "family, stranger, host, why",
    [
        ("qwen", True, "local", "a process that is not under the pane's agent (the same %3 on another server)"),
        ("gemini", False, "local", "a pane whose agent is of another family"),
        ("qwen", False, "box", "another host's process, which is not read from here"),
    ],
)
def test_an_in_pane_call_is_let_go_to_the_agents_dialog_when_it_is_not_the_panes_agents(family, stranger, host, why):
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as other:
        try:
            held, channel, _ = placed(family, other.pid if stranger else os.getppid(), os.getpid(), host=host)
        finally:
            other.kill()
    assert held == [] and channel.released == [7], why


def test_descends_walks_up_the_parents():
    assert descends(os.getpid(), os.getpid()) and descends(os.getpid(), os.getppid())
    assert not descends(os.getppid(), os.getpid()) and not descends(os.getpid(), 0) and not descends(4_000_000, os.getpid())


# -- the installer -----------------------------------------------------------------------------


def test_qwens_hook_joins_its_settings_and_leaves_them_byte_for_byte(tmp_path: Path):
    settings = tmp_path / ".qwen" / "settings.json"
    settings.parent.mkdir()
    original = b'{\n  "tools": {"approvalMode": "default"},\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}\n}\n'
    settings.write_bytes(original)
    held = BY_NAME["qwen"].held_hook
    assert held is not None and held.in_pane and held.hooks_file is not None
    assert held.hooks_file({"HOME": str(tmp_path)}) == settings
    assert held.hooks_file({"HOME": "/x", "QWEN_HOME": str(tmp_path / "q")}) == tmp_path / "q" / "settings.json"
    assert install_held(settings, "qwen", held.wait, in_pane=True)
    data = json.loads(settings.read_text())
    (group,) = data["hooks"]["PermissionRequest"]
    assert group["hooks"][0]["command"].endswith("answer 3 qwen pane # headspace-hook") and group["hooks"][0]["timeout"] == 13
    assert data["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "mine"}]}] and data["tools"] == {"approvalMode": "default"}
    assert uninstall(settings) == "restored" and settings.read_bytes() == original


def test_copilots_hook_is_a_file_of_headspaces_own_in_copilots_format(tmp_path: Path):
    held = BY_NAME["copilot"].held_hook
    assert held is not None and held.in_pane and held.own_file is not None and held.hooks_file is not None
    path = held.hooks_file({"HOME": str(tmp_path)})
    assert path == tmp_path / ".copilot" / "hooks" / "headspace.json"
    assert held.hooks_file({"COPILOT_HOME": str(tmp_path / "c")}) == tmp_path / "c" / "hooks" / "headspace.json"
    theirs = path.with_name("mine.json")
    theirs.parent.mkdir(parents=True)
    theirs.write_text('{"version": 1, "hooks": {}}')
    assert install_own(path, held.own_file, "copilot", held.wait) and holds_own(path)
    assert not install_own(path, held.own_file, "copilot", held.wait)  # already there
    data = json.loads(path.read_text())
    (entry,) = data["hooks"]["permissionRequest"]
    assert data["version"] == 1 and entry["type"] == "command" and entry["timeoutSec"] == 13
    assert entry["bash"].endswith("answer 3 copilot pane # headspace-hook")
    assert uninstall_own(path) == "deleted" and not path.exists() and not holds_own(path)
    assert uninstall_own(path) == "absent"
    assert theirs.read_text() == '{"version": 1, "hooks": {}}'


@pytest.mark.parametrize(
    "theirs",
    [
        '{"version": 1, "hooks": {"permissionRequest": [{"type": "command", "bash": "my-own"}]}}',
        # Our marker, but beside a hook of the person's own: not headspace's alone.
        '{"version": 1, "hooks": {"permissionRequest": [{"type": "command", "bash": "x answer 3 copilot pane # headspace-hook"}, {"type": "command", "bash": "mine"}]}}',
        '{"version": 1, "hooks": {"permissionRequest": [{"type": "command", "bash": "x # headspace-hook"}]}, "disableAllHooks": false}',
    ],
)
def test_a_file_that_is_not_headspaces_alone_is_neither_replaced_nor_removed(tmp_path: Path, theirs: str):
    held = BY_NAME["copilot"].held_hook
    assert held is not None and held.own_file is not None
    path = tmp_path / "hooks" / "headspace.json"
    path.parent.mkdir()
    path.write_text(theirs)
    with pytest.raises(HooksError, match="not headspace's alone"):
        install_own(path, held.own_file, "copilot", held.wait)
    assert uninstall_own(path) == "absent" and not holds_own(path) and path.read_text() == theirs


def test_a_link_in_its_place_is_left_alone(tmp_path: Path):
    held = BY_NAME["copilot"].held_hook
    assert held is not None and held.own_file is not None
    target = tmp_path / "elsewhere.json"
    assert install_own(target, held.own_file, "copilot", held.wait)
    link = tmp_path / "headspace.json"
    link.symlink_to(target)
    with pytest.raises(HooksError, match="is a link"):
        uninstall_own(link)
    with pytest.raises(HooksError, match="is a link"):
        install_own(link, held.own_file, "copilot", held.wait)
    assert target.exists() and link.is_symlink()
