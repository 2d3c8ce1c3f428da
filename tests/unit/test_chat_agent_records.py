"""Copilot CLI's and Qwen Code's session records: whose a record is (by a process under the agent's), and what it counts.

The records are written here as the real CLIs wrote them (the lines' shapes
copied from 1.0.102's and 0.24.4's own files, tests/e2e/test_usage_families.py
holds the live check); the agents' processes are this test's own children.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from headspace_tui.detect.copilot import records as copilot
from headspace_tui.detect.qwen import records as qwen
from headspace_tui.detect.session_usage import AgentProcess
from headspace_tui.detect.usage_kinds import KINDS
from headspace_tui.usage.model import Tokens


@pytest.fixture
def worker() -> Iterator[int]:
    """A process under this test's: the agent's worker (Qwen's inner CLI, Copilot's native binary)."""
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as child:
        try:
            yield child.pid
        finally:
            child.kill()


def agent(home: Path, **env: str) -> AgentProcess:
    return AgentProcess(os.getpid(), "/work", 0.0, {"HOME": str(home), **env})


def copilot_usage(inputs: int, output: int, cached: int, reasoning: int = 0) -> dict:
    usage = {
        "model": "scripted-model",
        "inputTokens": inputs,
        "outputTokens": output,
        "cacheReadTokens": cached,
        "cacheWriteTokens": 0,
        "reasoningTokens": reasoning,
        "cost": 0.0,
        "isByok": True,
        "maxPromptTokens": 128000,
    }
    return {"type": "session.usage_record", "data": {"usage": usage}, "id": "u", "timestamp": "2026-12-05T15:29:59.000Z"}


def copilot_session(home: Path, name: str, pid: int, lines: list[dict]) -> Path:
    folder = home / ".copilot" / "session-state" / name
    folder.mkdir(parents=True)
    (folder / f"inuse.{pid}.lock").write_text(str(pid))
    path = folder / "events.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [{"type": "session.start", "data": {"sessionId": name}}, *lines]))
    return path


def test_copilots_record_is_the_session_a_process_under_the_agent_holds_and_its_calls_are_summed(tmp_path: Path, worker: int):
    copilot_session(tmp_path, "other", 1, [copilot_usage(9000, 9, 0)])  # held by a process that is not under the agent
    path = copilot_session(tmp_path, "mine", worker, [copilot_usage(1000, 51, 201, 11), {"type": "assistant.message"}, copilot_usage(2000, 60, 400)])
    found = copilot.find(agent(tmp_path))
    assert found is not None and found.path == str(path)
    usage = found.read()
    assert usage is not None and usage.tokens == Tokens(799 + 1600, 51 + 11 + 60, 601, 0)
    assert (usage.model, usage.context_tokens, usage.context_window, usage.window_source) == ("scripted-model", 2000, 128000, "agent")
    with path.open("a") as handle:
        handle.write(json.dumps(copilot_usage(3000, 1, 0)) + "\n" + '{"type": "session.usage_record", "data": {"usage": {"inputTokens": -5, "outputTokens": "many"}}}\n')
    again = found.read()
    assert again is not None and again.tokens == Tokens(799 + 1600 + 3000, 123, 601, 0) and again.context_tokens == 3000  # a garbled call counts nothing
    assert copilot.find(agent(tmp_path / "elsewhere")) is None
    assert copilot.find(agent(tmp_path / "x", COPILOT_HOME=str(tmp_path / ".copilot"))) is not None


def qwen_session(home: Path, pid: int, ident: str, folder: str, calls: list[tuple[int, int, int, int]]) -> Path:
    (home / ".qwen" / "sessions").mkdir(parents=True, exist_ok=True)
    (home / ".qwen" / "sessions" / f"{pid}.json").write_text(json.dumps({"pid": pid, "sessionId": ident, "cwd": "/work", "startedAt": 1796484575214, "kind": "tui"}))
    chats = home / ".qwen" / "projects" / folder / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "user", "message": {}}]
    for prompt, candidates, thoughts, cached in calls:
        meta = {"promptTokenCount": prompt, "candidatesTokenCount": candidates, "thoughtsTokenCount": thoughts, "cachedContentTokenCount": cached, "totalTokenCount": prompt + candidates}
        lines += [{"type": "system", "subtype": "ui_telemetry"}, {"type": "assistant", "model": "scripted-model", "usageMetadata": meta}]
    path = chats / f"{ident}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_qwens_record_is_the_conversation_a_process_under_the_agent_names(tmp_path: Path, worker: int):
    qwen_session(tmp_path, 1, "0000aaaa-other", "-work", [(9000, 9, 0, 0)])
    path = qwen_session(tmp_path, worker, "9fdf8508-b5a0", "-work", [(1000, 51, 11, 201), (2000, 60, 0, 400)])
    found = qwen.find(agent(tmp_path))
    assert found is not None and found.path == str(path)
    usage = found.read()
    assert usage is not None and usage.tokens == Tokens(799 + 1600, 51 + 11 + 60, 601, 0)
    assert (usage.model, usage.context_tokens) == ("scripted-model", 2000)


@pytest.mark.parametrize("ident", ["../../etc/passwd", "a/b", "", "*"])
def test_a_qwen_session_naming_no_plain_id_is_nobodys(tmp_path: Path, worker: int, ident: str):
    (tmp_path / ".qwen" / "sessions").mkdir(parents=True)
    (tmp_path / ".qwen" / "sessions" / f"{worker}.json").write_text(json.dumps({"sessionId": ident}))
    assert qwen.find(agent(tmp_path)) is None


def test_the_probe_knows_both_records():
    assert KINDS["copilot"] is copilot.USAGE and KINDS["qwen"] is qwen.USAGE
