"""What Codex, Gemini, opencode, Copilot CLI and Qwen Code agents cost, from their real binaries: their own session records, summed by them, on ``status --json``.

Each scripted API reports known token counts per reply; the CLI writes its
own record of them (Codex its rollout, Gemini its chat file, opencode its
database); the resident service, as users run it, reads that record where
the agent runs and shows the numbers.  What is checked is that headspace's
numbers are the scripted ones, summed, and equal what the CLI itself wrote.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from headspace_tui.usage.model import Tokens
from headspace_tui.usage.prices import estimate
from tests.e2e.test_resident_service import started
from tests.harness import cli, codex_api, copilot_agent, gemini_api, opencode_api
from tests.harness.codex_agent import CodexSession, find_codex
from tests.harness.copilot_agent import CopilotSession, require_copilot
from tests.harness.gemini_agent import GeminiSession, require_gemini
from tests.harness.npm_binary import require
from tests.harness.opencode_agent import OpencodeSession, require_opencode
from tests.harness.qwen_agent import QwenSession, require_qwen
from tests.harness.tmux import PrivateTmux, temp_server
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e


@pytest.fixture
def server() -> Iterator[PrivateTmux]:
    with temp_server("hs-use-tmux-") as (_root, tmux):
        yield tmux


def rows(tmux: PrivateTmux) -> dict[str, dict]:
    out = cli.headspace("-L", tmux.name, "status", "--json").stdout
    return {row["target"]: row for row in map(json.loads, out.splitlines())}


def last_token_count(codex_home: Path) -> list[dict]:
    """Every rollout's last ``token_count`` info, as Codex wrote it."""
    found = []
    for path in sorted((codex_home / "sessions").rglob("rollout-*.jsonl")):
        counts = [line["payload"]["info"] for line in map(json.loads, path.read_text().splitlines()) if line.get("payload", {}).get("type") == "token_count"]
        if counts:
            found.append(counts[-1])
    return found


class CodexIn(CodexSession):
    """A Codex session in a folder of its own under a shared root: one user (one HOME, one CODEX_HOME, one daemon), several repositories."""

    folder: str = "work"

    @property
    def workdir(self) -> Path:
        return self.root / self.folder


def codex_in(server: PrivateTmux, fake: codex_api.FakeResponsesAPI, binary: str, root: Path, name: str, folder: str) -> CodexSession:
    session = CodexIn(server, fake, binary, root, name=name)
    session.folder = folder
    return session


def test_codex_agents_of_one_user_each_show_their_own_sums_and_two_in_one_folder_none(server, tmp_path: Path, services):
    """One user, two repositories: each row counts its own conversation only (the rollouts lie side by side).

    A third agent opened in the first one's folder makes those two
    indistinguishable (Codex names neither's conversation): both rows then
    show no numbers rather than the other's.
    """
    binary = require(find_codex, "Codex CLI")
    a1, b1, a2 = codex_api.usage(1000, 50, cached=200, reasoning=7), codex_api.usage(3000, 80), codex_api.usage(1500, 60, cached=1000)
    script = [codex_api.text("First of A.", usage=a1), codex_api.text("Only of B.", usage=b1), codex_api.text("Second of A.", usage=a2)]
    with codex_api.FakeResponsesAPI(script) as fake:
        root = tmp_path / "user"
        first, second = codex_in(server, fake, binary, root, "a", "repo-a"), codex_in(server, fake, binary, root, "b", "repo-b")
        third = codex_in(server, fake, binary, root, "c", "repo-a")
        try:
            first.launch()
            second.launch()
            started(server.name, services)
            first.submit("part one")
            first.wait_for("First of A.", what="A's first reply")
            second.submit("all of it")
            second.wait_for("Only of B.", what="B's reply")
            first.submit("part two")
            first.wait_for("Second of A.", what="A's second reply")

            def sums(*replies: dict) -> dict:
                cached = sum(r["input_tokens_details"]["cached_tokens"] for r in replies)
                return Tokens(sum(r["input_tokens"] for r in replies) - cached, sum(r["output_tokens"] for r in replies), cached, 0).to_dict()

            want = {"a:0.0": sums(a1, a2), "b:0.0": sums(b1)}
            got = poll(lambda: rows(server), lambda r: {t: r[t].get("tokens") for t in want} == want, timeout=30)
            a, b = got["a:0.0"], got["b:0.0"]
            assert a["agent"] == b["agent"] == "codex" and a["model"] == b["model"] == "gpt-5.1-codex"
            # The context is the last request less its reasoning, against the window Codex names for the model.
            written = last_token_count(first.codex_home)
            assert len(written) == 2, written
            window = written[0]["model_context_window"]
            assert a["context_tokens"] == 1500 + 60 and b["context_tokens"] == 3000 + 80
            assert a["context_pct"] == (1560 * 100) // window and b["context_pct"] == (3080 * 100) // window
            # Codex's own totals agree with headspace's, file by file.
            totals = sorted((t["total_token_usage"]["input_tokens"], t["total_token_usage"]["output_tokens"]) for t in written)
            assert totals == sorted([(2500, 110), (3000, 80)])
            assert a["cost_usd_est"] == estimate("gpt-5.1-codex", Tokens(**want["a:0.0"])) and a["cost_usd_est"] > 0

            # A second agent in A's folder: A's conversation could be either's now.  (B's stays its own.)
            third.launch()
            fake.extend(codex_api.text("Third of A.", usage=codex_api.usage(10, 1)))
            first.submit("part three")
            first.wait_for("Third of A.", what="A's third reply")
            got = poll(lambda: rows(server), lambda r: "c:0.0" in r and r["a:0.0"]["tokens"] is None, timeout=30)
            assert got["c:0.0"]["tokens"] is None and got["b:0.0"]["tokens"] == want["b:0.0"]
        finally:
            for session in (first, second, third):
                session.close()


def test_a_gemini_agents_row_shows_the_sums_of_its_chat_record(server, tmp_path: Path, services):
    """Gemini's own record (its chat file) against the scripted counts: the same sums, the model it asked for, no guessed price."""
    binary = require_gemini()
    one, two = gemini_api.usage(1000, 50, cached=200, thoughts=7), gemini_api.usage(2000, 60, cached=300, tool=5)
    with gemini_api.FakeGeminiAPI((gemini_api.text("Answer one.", usage=one), gemini_api.text("Answer two.", usage=two))) as fake:
        session = GeminiSession(server, fake, binary, tmp_path / "gem", name="gem", width=100, height=30)
        try:
            session.launch()
            started(server.name, services)
            session.submit("first question")
            session.wait_for("Answer one.", what="the first answer")
            session.submit("second question")
            session.wait_for("Answer two.", what="the second answer")
            want = Tokens(800 + 1700 + 5, 50 + 7 + 60, 500, 0).to_dict()
            got = poll(lambda: rows(server)["gem:0.0"], lambda r: r["tokens"] == want, timeout=30)
            chats = list((session.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"))
            assert len(chats) == 1, chats
            written = {}
            for line in map(json.loads, chats[0].read_text().splitlines()):
                if line.get("type") == "gemini" and line.get("tokens"):
                    written[line["id"]] = line
            assert [w["tokens"]["input"] for w in written.values()] == [1000, 2000]  # what headspace summed is what Gemini wrote
            model = next(iter(written.values()))["model"]
            assert got["model"] == model and got["context_tokens"] == 2000 + 5
            assert got["cost_usd_est"] == estimate(model, Tokens(**want))  # None for a model the table does not list: said, not guessed
        finally:
            session.close()


def test_an_opencode_agents_row_shows_the_totals_of_its_session(server, tmp_path: Path, services):
    """opencode's own totals (its database's session row) against the scripted counts."""
    binary = require_opencode()
    one, two = opencode_api.usage(1000, 51, cached=201, reasoning=11), opencode_api.usage(2000, 60, cached=400)
    fake = opencode_api.OpenAICompatibleAPI((opencode_api.text("Made one.", usage=one), opencode_api.text("Made two.", usage=two))).start()
    session = OpencodeSession(server, fake, binary, tmp_path / "oc", name="oc", width=100, height=30)
    try:
        session.launch()
        started(server.name, services)
        session.submit("make one")
        session.wait_for("Made one.", timeout=30, what="the first reply")
        session.submit("make two")
        session.wait_for("Made two.", timeout=30, what="the second reply")
        want = Tokens(799 + 1600, 51 + 60, 601, 0).to_dict()
        got = poll(lambda: rows(server)["oc:0.0"], lambda r: r["tokens"] == want, timeout=30)
        assert got["model"] == "scripted-model" and got["context_tokens"] == 2000
        databases = list(session.root.rglob("opencode.db"))
        assert len(databases) == 1, databases
        with sqlite3.connect(f"file:{databases[0]}?mode=ro", uri=True) as db:
            (row,) = db.execute("SELECT tokens_input, tokens_output + tokens_reasoning, tokens_cache_read FROM session").fetchall()
        assert row == (want["input"], want["output"], want["cache_read"])  # opencode's own totals
    finally:
        session.close()
        fake.close()


@pytest.mark.parametrize("family", ["copilot", "qwen"])
def test_copilot_and_qwen_agents_rows_show_the_sums_of_their_own_records_each_its_own_in_one_folder(family, server, tmp_path: Path, services):
    """Each keeps a record per session that names its process (Copilot's ``inuse.<pid>.lock``, Qwen's ``sessions/<pid>.json``):
    two agents of one user in one folder each show their own sums, which are what the CLI wrote."""
    binary = {"copilot": require_copilot, "qwen": require_qwen}[family]()
    Session = {"copilot": CopilotSession, "qwen": QwenSession}[family]
    a_one, a_two, b_one = opencode_api.usage(1000, 51, cached=201, reasoning=11), opencode_api.usage(2000, 60, cached=400), opencode_api.usage(3000, 70, cached=900)
    fakes = [opencode_api.OpenAICompatibleAPI((opencode_api.text("Made one.", usage=a_one), opencode_api.text("Made two.", usage=a_two))).start()]
    fakes.append(opencode_api.OpenAICompatibleAPI((opencode_api.text("Made three.", usage=b_one),)).start())
    root = tmp_path / family  # one HOME, one work folder, two agents
    sessions = [Session(server, fake, binary, root, name=name, width=100, height=30) for fake, name in zip(fakes, ("ua", "ub"), strict=True)]
    try:
        for session in sessions:
            session.launch()
        started(server.name, services)
        a, b = sessions
        a.submit("make one")
        a.wait_for("Made one.", timeout=30, what="the first reply")
        a.submit("make two")
        a.wait_for("Made two.", timeout=30, what="the second reply")
        b.submit("make three")
        b.wait_for("Made three.", timeout=30, what="the other agent's reply")
        want = {"ua:0.0": Tokens(799 + 1600, 51 + 11 + 60, 601, 0).to_dict(), "ub:0.0": Tokens(2100, 70, 900, 0).to_dict()}
        got = poll(lambda: rows(server), lambda r: {t: r[t].get("tokens") for t in want} == want, timeout=30)
        assert got["ua:0.0"]["model"] == "scripted-model" and got["ua:0.0"]["context_tokens"] == 2000 and got["ub:0.0"]["context_tokens"] == 3000
        home = sessions[0].home
        if family == "copilot":
            # The window Copilot itself uses for the model (COPILOT_PROVIDER_MAX_PROMPT_TOKENS here), said by its record.
            assert got["ua:0.0"]["context_pct"] == 2000 * 100 // copilot_agent.CONTEXT
            written = [
                line["data"]["usage"]
                for path in home.glob(".copilot/session-state/*/events.jsonl")
                for line in map(json.loads, path.read_text().splitlines())
                if line.get("type") == "session.usage_record"
            ]
            assert sorted(w["inputTokens"] for w in written) == [1000, 2000, 3000]  # what headspace summed is what Copilot wrote
        else:
            written = [line["usageMetadata"] for path in home.glob(".qwen/projects/*/chats/*.jsonl") for line in map(json.loads, path.read_text().splitlines()) if line.get("type") == "assistant"]
            assert sorted(w["promptTokenCount"] for w in written) == [1000, 2000, 3000]
    finally:
        for session in sessions:
            session.close()
        for fake in fakes:
            fake.close()
