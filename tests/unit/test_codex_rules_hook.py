"""Codex's own hook, asked only by the rules: found its agent by the conversation's record, answered at once or let go.

The answer desk and the rules are the real ones; the socket is stood in for by
``Held`` (the socket and the hook program are tested in
test_answer_channel.py, the whole path with the pinned Codex in
tests/e2e/test_rules_live.py).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from pathlib import Path

from headspace_tui.answering.desk import AnswerDesk, Watched
from headspace_tui.hooks.calls import PendingCall
from headspace_tui.model import Agent
from headspace_tui.service.acting.rule_answers import RuleAnswers
from headspace_tui.service.acting.rule_book import RuleBook
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.records.store import AgentStore
from headspace_tui.state.eventlog import EventLog


class Held:
    """The channel's side the desk uses: what it let go and what it decided (no socket)."""

    def __init__(self) -> None:
        self.calls: dict[int, PendingCall] = {}
        self.released: list[int] = []
        self.decided: list[tuple[int, dict]] = []

    def pending(self, pane_id: str) -> list[PendingCall]:
        return [c for c in self.calls.values() if c.pane_id == pane_id]

    def decide(self, call_id: int, decision: dict) -> bool:
        self.decided.append((call_id, decision))
        return True

    def release(self, call_id: int) -> bool:
        self.released.append(call_id)
        return True


def codex_call(n: int, command: str, cwd: str, arrived: float = 99.5) -> PendingCall:
    return PendingCall(n, "", 0, "s", "Bash", {"command": command}, cwd=cwd, arrived=arrived, family="codex", transcript=f"/r/rollout-{n}.jsonl")


def setup(tmp_path: Path, found: str | None):
    work = tmp_path / "work"
    work.mkdir()
    rules = tmp_path / "rules.toml"
    rules.write_text(f'[[rule]]\nid = "cx"\ndecision = "allow"\nhosts = ["local"]\nagents = ["codex"]\nproject = "{work}"\ncommand = "touch /tmp/cx_*"\nttl = "1h"\nshadow = false\n')
    os.chmod(rules, 0o600)
    store = AgentStore("local")
    agent = Agent(pane_id="%4", target="cx:0.0", session="cx", cwd=str(work), family="codex", agent_pid=77, key="k4")
    store.agents["%4"] = agent
    desk = AnswerDesk(store, lambda pane: Watched(agent, 77) if pane == "%4" else None, lambda: 100.0)
    desk.channel = Held()  # type: ignore[assignment]
    asked: list[PendingCall] = []

    async def locate(call: PendingCall) -> str | None:
        asked.append(call)
        return found

    desk.locate = locate
    notices: list[str] = []
    journal = Journal(EventLog(tmp_path / "events.db"), clock=lambda: 100.0)  # where the rules' life is kept (without it, none answers)
    rules_ = RuleAnswers(RuleBook(rules, notices.append), lambda pane: desk, lambda pane: store.agents.get(pane), lambda: store.agents.values(), journal, lambda: 100.0)
    desk.held = rules_.consider_held
    return desk, work, asked


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_codex_call_whose_agent_is_found_is_answered_by_the_rule_at_once_and_the_rest_let_go(tmp_path: Path):
    desk, work, asked = setup(tmp_path, "%4")
    channel = desk.channel

    async def scenario():
        assert desk._accept(codex_call(1, "touch /tmp/cx_1", str(work)))
        assert desk._accept(codex_call(2, "touch /tmp/cx_2; echo more", str(work)))
        network = {"command": "touch /tmp/cx_3", "description": "network-access example.com"}
        assert desk._accept(PendingCall(3, "", 0, "s", "Bash", network, cwd=str(work), arrived=99.5, family="codex", transcript="/r/3"))
        assert desk._accept(codex_call(4, "touch /tmp/cx_4", str(work), arrived=97.0))  # placed after its hook's wait is nearly over
        await settle()

    asyncio.run(scenario())
    assert [c.id for c in asked] == [1, 2, 3, 4]
    assert channel.decided == [(1, {"behavior": "allow"})]  # the plain once-only allow
    assert channel.released == [2, 3, 4]  # a compound command, a network approval, a call too late: Codex draws its dialog
    assert "✓ by rule cx" in desk.last["%4"].what


def test_a_codex_call_of_no_single_agent_is_let_go_unjudged(tmp_path: Path):
    desk, work, _ = setup(tmp_path, None)

    async def scenario():
        assert desk._accept(codex_call(1, "touch /tmp/cx_1", str(work)))
        await settle()

    asyncio.run(scenario())
    assert desk.channel.decided == [] and desk.channel.released == [1]


def test_without_rules_wired_a_codex_call_is_refused_on_arrival(tmp_path: Path):
    desk, work, _ = setup(tmp_path, "%4")
    desk.held = None
    assert desk._accept(codex_call(1, "touch /tmp/cx_1", str(work))) is False  # the channel answers "{}" at once


def test_a_held_call_naming_a_family_whose_hook_is_not_held_is_refused_on_arrival(tmp_path: Path):
    """Only a family with a held hook (``Family.held_hook``: Codex's) has its pane-less calls kept; any other name, known or not, is nobody's."""
    desk, work, asked = setup(tmp_path, "%4")
    for name in ("gemini", "claude", "nosuchagent"):
        call = replace(codex_call(1, "touch /tmp/cx_1", str(work)), family=name)
        assert desk._accept(call) is False, name
    assert asked == []  # not even looked for


def test_only_a_conversation_codexs_terminal_began_is_a_panes(tmp_path: Path):
    """An editor's Codex in the same folder runs in the shared server, with no agent process: its records are never a pane's."""
    import json

    from headspace_tui.detect.codex.rollout import from_terminal

    made = {}
    for name, originator in (("tui", "codex-tui"), ("older", "codex_cli_rs"), ("editor", "codex_vscode"), ("exec", "codex_exec"), ("none", None)):
        meta = {"type": "session_meta", "payload": {"id": name, "timestamp": "2026-11-29T18:33:22.067Z", "cwd": "/w", **({"originator": originator} if originator else {})}}
        made[name] = tmp_path / f"rollout-{name}.jsonl"
        made[name].write_text(json.dumps(meta) + "\n")
    assert {name for name, path in made.items() if from_terminal(str(path))} == {"tui", "older"}
