"""The other families' own session records: Codex's rollout folded, its file found for the right agent, and the numbers over the probe's wire."""

from __future__ import annotations

import json
import os
from datetime import UTC
from pathlib import Path

import pytest

from headspace_tui.detect.codex import rollout
from headspace_tui.detect.session_usage import AgentProcess
from headspace_tui.usage.model import PlanUse, Tokens, Usage

T0 = 1_795_966_000.0  # an agent's start, epoch seconds


def iso(at: float) -> str:
    from datetime import datetime

    return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")


def meta(cwd: str, begun: float) -> dict:
    return {"timestamp": iso(begun), "type": "session_meta", "payload": {"id": "t", "timestamp": iso(begun), "cwd": cwd, "base_instructions": {"text": "x" * 60_000}}}


def count(total: tuple, last: tuple, *, window: int = 258_400, limits: dict | None = None) -> dict:
    def usage(n: tuple) -> dict:
        return {"input_tokens": n[0], "cached_input_tokens": n[1], "cache_write_input_tokens": 0, "output_tokens": n[2], "reasoning_output_tokens": n[3], "total_tokens": n[0] + n[2]}

    info = {"total_token_usage": usage(total), "last_token_usage": usage(last), "model_context_window": window}
    return {"type": "event_msg", "payload": {"type": "token_count", "info": info, "rate_limits": limits}}


def write(path: Path, *lines: dict, tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + tail)
    return path


def test_the_last_token_count_is_the_conversation_and_a_half_written_line_waits(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        meta("/w", T0),
        {"type": "turn_context", "payload": {"model": "gpt-5.1-codex"}},
        count((1000, 200, 50, 7), (1000, 200, 50, 7)),
        tail=json.dumps(count((2500, 1200, 110, 7), (1500, 1000, 60, 0)))[:40],
    )
    follower = rollout.RolloutFollower(str(path))
    first = follower.read()
    assert first == Usage("gpt-5.1-codex", Tokens(800, 50, 200, 0), 1050 - 7, 258_400)
    # The rest of the line arrives: Codex's running totals replace (are not added to) what was read.
    with path.open("a") as f:
        f.write(json.dumps(count((2500, 1200, 110, 7), (1500, 1000, 60, 0)))[40:] + "\n")
    assert follower.read() == Usage("gpt-5.1-codex", Tokens(1300, 110, 1200, 0), 1560, 258_400)


def test_the_plans_windows_are_kept_from_the_last_event_that_named_them(tmp_path):
    limits = {"primary": {"used_percent": 42.5, "window_minutes": 300, "resets_at": T0 + 3600}, "secondary": {"used_percent": 7, "window_minutes": 10080}}
    path = write(tmp_path / "r.jsonl", meta("/w", T0), count((10, 0, 5, 0), (10, 0, 5, 0), limits=limits), count((20, 0, 10, 0), (10, 0, 5, 0)))
    plan = rollout.RolloutFollower(str(path)).read().plan
    assert plan == (PlanUse(300, 42.5, T0 + 3600), PlanUse(10080, 7.0, 0.0)) and [p.name for p in plan] == ["5h", "weekly"]


def codex_home(tmp_path: Path) -> Path:
    return tmp_path / "home" / ".codex"


def rollout_at(home: Path, cwd: str, begun: float, name: str) -> Path:
    day = home / "sessions" / "2026" / "11" / "29"
    path = write(day / f"rollout-{name}.jsonl", meta(cwd, begun), count((10, 0, 5, 0), (10, 0, 5, 0)))
    os.utime(path, (begun + 5, begun + 5))
    return path


def agent(tmp_path: Path, cwd: Path, *, siblings: tuple = ()) -> AgentProcess:
    return AgentProcess(pid=1, cwd=str(cwd), started=T0, env={"HOME": str(tmp_path / "home")}, siblings=siblings)


def test_an_agent_alone_in_its_folder_owns_its_latest_conversation_there_and_no_older_one(tmp_path):
    work, other = tmp_path / "repo-a", tmp_path / "repo-b"
    work.mkdir(), other.mkdir()
    home = codex_home(tmp_path)
    rollout_at(home, str(work), T0 - 600, "before-it-started")
    rollout_at(home, str(other), T0 + 20, "another-folder")
    rollout_at(home, str(work), T0 + 10, "first")
    newest = rollout_at(home, str(work), T0 + 300, "after-new")  # /new: a second conversation of the same agent
    found = rollout.find(agent(tmp_path, work))
    assert found is not None and found.path == str(newest)


def test_two_codex_agents_in_one_folder_are_not_told_apart(tmp_path):
    work = tmp_path / "repo"
    work.mkdir()
    rollout_at(codex_home(tmp_path), str(work), T0 + 10, "one")
    assert rollout.find(agent(tmp_path, work, siblings=(T0 + 3,))) is None
    assert rollout.find(agent(tmp_path, work)) is not None


@pytest.mark.parametrize(
    "at_start, siblings, begun, owned",
    [
        (True, (T0 + 3,), T0 + 1, True),  # begun before the other started: the first one's
        (True, (T0 + 3,), T0 + 5, False),  # begun after the other started: the other's
        (True, (T0 - 60,), T0 + 5, True),  # an older agent in the folder does not take a record begun after this one started
        (False, (T0 - 60,), T0 + 5, False),  # begun at a prompt: any other agent in the folder makes it anyone's
        (False, (), T0 - 10, False),  # begun before the agent started
        (True, (T0 + 3,), T0 + 60, False),  # begun long after the start (a /clear), another agent in the folder: anyone's
        (True, (), T0 + 60, True),  # ...alone in the folder: its own
    ],
)
def test_who_owns_a_record_begun_at_a_time(at_start, siblings, begun, owned):
    assert AgentProcess(1, "/w", T0, siblings=siblings).owns(begun, at_start=at_start) is owned


def test_usage_goes_over_the_probes_wire_as_numbers_and_a_bad_row_is_refused():
    usage = Usage("gpt-5.1-codex", Tokens(1, 2, 3, 4), 10, 258_400, cost_usd=0.5, plan=(PlanUse(300, 12.5, T0),))
    back = Usage.from_row(json.loads(json.dumps(usage.to_row())))
    assert back == Usage("gpt-5.1-codex", Tokens(1, 2, 3, 4), 10, 258_400, plan=(PlanUse(300, 12.5, T0),))  # the cost is estimated here
    for bad in (None, [], {"model": "m"}, {**usage.to_row(), "tokens": [1, 2, 3]}, {**usage.to_row(), "tokens": [1, 2, 3, -4]}, {**usage.to_row(), "context_tokens": True}):
        assert Usage.from_row(bad) is None, bad


# -- Gemini's chat record --------------------------------------------------------------
def gemini_reply(ident: str, prompt: int, output: int, *, cached: int = 0, thoughts: int = 0, tool: int = 0, model: str = "gemini-2.5-pro") -> dict:
    tokens = {"input": prompt, "output": output, "cached": cached, "thoughts": thoughts, "tool": tool, "total": prompt + output + thoughts + tool}
    return {"id": ident, "type": "gemini", "content": "", "tokens": tokens, "model": model}


def test_a_gemini_message_written_again_counts_once_a_rewind_drops_and_a_resume_replaces(tmp_path):
    from headspace_tui.detect.gemini.chats import ChatFollower

    header = {"sessionId": "s", "startTime": iso(T0 + 2), "kind": "main"}
    path = write(
        tmp_path / "session-x.jsonl",
        header,
        {"id": "u1", "type": "user", "content": [{"text": "one"}]},
        {**gemini_reply("g1", 1000, 50, cached=200, thoughts=7), "tokens": None},  # first written before its counts
        gemini_reply("g1", 1000, 50, cached=200, thoughts=7),
        gemini_reply("g1", 1000, 50, cached=200, thoughts=7) | {"toolCalls": [{"id": "c"}]},  # the same call, grown
        gemini_reply("g2", 2000, 60, cached=300, tool=5),
    )
    follower = ChatFollower(str(path))
    assert follower.read() == Usage("gemini-2.5-pro", Tokens(800 + 1705, 57 + 60, 500, 0), 2005)
    with path.open("a") as f:
        f.write(json.dumps({"$rewindTo": "g2"}) + "\n")
    assert follower.read() == Usage("gemini-2.5-pro", Tokens(800, 57, 200, 0), 1000)
    with path.open("a") as f:  # a rewind to a message never read rewinds nothing known
        f.write(json.dumps({"$rewindTo": "not-read"}) + "\n")
    assert follower.read() == Usage("gemini-2.5-pro", Tokens(800, 57, 200, 0), 1000)
    with path.open("a") as f:  # a resume repeats the history whole: replaced, not added
        f.write(json.dumps({"$set": {"messages": [gemini_reply("g1", 1000, 50, cached=200, thoughts=7)]}}) + "\n")
        f.write(json.dumps(gemini_reply("g3", 10, 1)) + "\n")
    assert follower.read() == Usage("gemini-2.5-pro", Tokens(810, 58, 200, 0), 10)


def test_a_gemini_agent_finds_its_project_by_name_and_the_record_it_began(tmp_path):
    from headspace_tui.detect.gemini.chats import find

    home, work = tmp_path / "home", tmp_path / "My.Proj"
    work.mkdir()
    base = home / ".gemini"
    write(base / "projects.json", {"projects": {str(work): "my-proj"}})
    chats = base / "tmp" / "my-proj" / "chats"
    write(chats / "session-old.jsonl", {"sessionId": "a", "startTime": iso(T0 - 900)})
    mine = write(chats / "session-mine.jsonl", {"sessionId": "b", "startTime": iso(T0 + 2)})
    theirs = write(chats / "session-theirs.jsonl", {"sessionId": "c", "startTime": iso(T0 + 12)})  # begun by one started at T0 + 10
    found = find(AgentProcess(1, str(work), T0, {"HOME": str(home)}, siblings=(T0 + 10,)))
    assert found is not None and found.path == str(mine)
    found = find(AgentProcess(2, str(work), T0 + 10, {"HOME": str(home)}, siblings=(T0,)))
    assert found is not None and found.path == str(theirs)


# -- opencode's database ---------------------------------------------------------------
def opencode_db(path: Path) -> None:
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT, time_created INTEGER, time_updated INTEGER,"
            " cost REAL, tokens_input INTEGER, tokens_output INTEGER, tokens_reasoning INTEGER, tokens_cache_read INTEGER, tokens_cache_write INTEGER)"
        )
        db.execute("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)")
        ms = int(T0 * 1000)
        db.executemany(
            "INSERT INTO session VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [
                ("ses_old", None, "/w", ms - 60_000, ms - 50_000, 0, 9, 9, 9, 9, 9),  # before the agent started
                ("ses_1", None, "/w", ms + 5000, ms + 9000, 0, 2399, 100, 11, 601, 0),
                ("ses_sub", "ses_1", "/w", ms + 6000, ms + 7000, 0, 100, 10, 0, 0, 0),  # its subagent: counted with it
                ("ses_x", None, "/elsewhere", ms + 5000, ms + 9000, 0, 1, 1, 1, 1, 1),
            ],
        )
        step = {"role": "assistant", "modelID": "scripted-model", "time": {"completed": ms + 9000}, "tokens": {"input": 1600, "output": 60, "reasoning": 0, "cache": {"read": 400, "write": 0}}}
        streaming = {"role": "assistant", "modelID": "scripted-model", "time": {}, "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}}
        db.executemany("INSERT INTO message VALUES (?,?,?,?,?)", [("m1", "ses_1", ms + 8000, ms + 9000, json.dumps(step)), ("m2", "ses_1", ms + 9500, ms + 9500, json.dumps(streaming))])


def test_an_opencode_agent_alone_in_its_folder_shows_its_sessions_totals_with_its_subagents(tmp_path):
    from headspace_tui.detect.opencode.records import find

    opencode_db(tmp_path / "data" / "opencode" / "opencode.db")
    alone = AgentProcess(1, "/w", T0, {"XDG_DATA_HOME": str(tmp_path / "data")})
    follower = find(alone)
    assert follower is not None and follower.session == "ses_1"
    assert follower.read() == Usage("scripted-model", Tokens(2499, 121, 601, 0), 2000)  # context: the last finished step's prompt
    assert find(AgentProcess(1, "/w", T0, {"XDG_DATA_HOME": str(tmp_path / "data")}, siblings=(T0 + 1,))) is None
    assert find(AgentProcess(1, "/w", T0, {"XDG_DATA_HOME": str(tmp_path / "nowhere")})) is None
    assert not (tmp_path / "nowhere").exists()  # read-only: no database made where there was none


def test_a_plans_windows_reach_status_json_the_usage_lines_and_the_wire_to_a_client():
    import time

    from headspace_tui.api import codec as wire
    from headspace_tui.api.row_keys import well_formed
    from headspace_tui.api.rows import agent_row
    from headspace_tui.model import Agent
    from headspace_tui.usage.words import usage_lines

    resets = time.time() + 3600
    usage = Usage("gpt-5.1-codex", Tokens(1, 2, 3, 0), 10, 258_400, plan=(PlanUse(300, 42.4, resets), PlanUse(10080, 7.0)))
    agent = Agent(pane_id="%1", target="s:0.0", session="s", usage=usage)
    row = agent_row(agent, time.time())
    assert well_formed(row)
    assert row["plan_use"] == [{"window": "5h", "used_pct": 42.4, "resets_at": resets}, {"window": "weekly", "used_pct": 7.0, "resets_at": None}]
    assert agent_row(Agent(pane_id="%2", target="s:1.0", session="s"), time.time())["plan_use"] is None
    plan = dict(usage_lines(usage))["Plan"]
    assert plan == f"5h: 42% used, resets {time.strftime('%H:%M', time.localtime(resets))} · weekly: 7% used"
    assert wire.decode(json.loads(json.dumps(wire.encode(agent)))).usage == usage  # the TUI, a client of the service, gets it whole


def test_a_record_larger_than_the_first_lines_cap_is_still_found(tmp_path):
    """Codex's first line is its whole system prompt; the file then grows for hours: only the first line is read."""
    work = tmp_path / "repo"
    work.mkdir()
    path = rollout_at(codex_home(tmp_path), str(work), T0 + 10, "long")
    with path.open("a") as f:
        f.write((json.dumps(count((10, 0, 5, 0), (10, 0, 5, 0))) + "\n") * 60_000)  # about 20 MB
    os.utime(path, (T0 + 50, T0 + 50))
    rollout._BEGUN.clear()
    found = rollout.find(agent(tmp_path, work))
    assert found is not None and found.path == str(path)


def test_a_record_begun_while_another_agent_shared_the_folder_stays_anyones_after_it_left():
    """Codex A alone, then B opens in the same folder, begins a conversation and quits: that conversation is never A's."""
    crowded = AgentProcess(1, "/w", T0, crowded=T0 + 30)
    assert crowded.owns(T0 + 10, at_start=False)  # begun before B came: A's
    assert not crowded.owns(T0 + 40, at_start=False)  # begun once B was there: anyone's, B gone or not
