"""Following Claude Code transcripts: tail semantics on temp files, and a real 2.1.330 transcript.

``tests/data/transcripts/bash_question_2.1.330.jsonl`` was written by the real
binary in the harness against the scripted API: "say hello" (a text reply),
"create the marker file" (text plus a Bash call, approved with 1), "pick a
database" (AskUserQuestion, answered with 2).  The conversation lines are
verbatim; in bookkeeping lines (attachments, api-request copies of Claude's
system prompt) strings longer than 300 characters were cut, to keep the file
small.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from headspace_tui.detect.claude.transcript import ToolOutcome, TranscriptTail, Turn, encoded_project_dir, parse_line, transcript_path

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "transcripts" / "bash_question_2.1.330.jsonl"


def user(text: str, **extra) -> dict:
    return {"type": "user", "uuid": f"u-{text}", "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": text}, **extra}


def agent(text: str = "", tools: list[tuple[str, dict]] = (), stop: str = "end_turn") -> dict:
    content = ([{"type": "text", "text": text}] if text else []) + [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": inp} for i, (n, inp) in enumerate(tools)]
    return {"type": "assistant", "uuid": f"a-{text}", "message": {"id": "msg_1", "role": "assistant", "content": content, "stop_reason": stop}}


def line(obj: dict) -> bytes:
    return json.dumps(obj).encode() + b"\n"


# -- paths --------------------------------------------------------------------


def test_project_dir_encoding():
    assert encoded_project_dir("/tmp/hsfix-4w8miwlv/a/work") == "-tmp-hsfix-4w8miwlv-a-work"
    assert encoded_project_dir("/home/me/my project.v2/src_x") == "-home-me-my-project-v2-src-x"
    assert encoded_project_dir("/srv/café") == "-srv-caf-"
    assert encoded_project_dir("/a/😀") == "-a---"  # one emoji is two UTF-16 units
    long = "/deep/" + "x" * 250
    name = encoded_project_dir(long)
    assert name.startswith("-deep-" + "x" * 194 + "-") and len(name) > 200
    assert name[201:].isalnum()


def test_transcript_path_matches_the_fixture_layout(tmp_path: Path):
    path = transcript_path(tmp_path / ".claude", "/tmp/hsfix-4w8miwlv/a/work", "5396ed06-b043-49b1-8c29-4e253ccccacd")
    assert path == tmp_path / ".claude" / "projects" / "-tmp-hsfix-4w8miwlv-a-work" / "5396ed06-b043-49b1-8c29-4e253ccccacd.jsonl"
    first = json.loads(next(line for line in FIXTURE.read_text().splitlines() if '"type":"user"' in line))
    assert encoded_project_dir(first["cwd"]) == "-tmp-hsfix-4w8miwlv-a-work"
    assert path.stem == first["sessionId"]


# -- parsing ------------------------------------------------------------------


def test_parse_line_kinds():
    assert parse_line(user("hi")) == Turn(role="user", text="hi", uuid="u-hi", timestamp="2026-01-01T00:00:00Z")
    turn = parse_line(agent("Running it.", [("Bash", {"command": "ls"})], stop="tool_use"))
    assert (turn.role, turn.text, turn.tool_uses, turn.stop_reason, turn.message_id) == ("agent", "Running it.", (("Bash", {"command": "ls"}),), "tool_use", "msg_1")
    result = {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "denied"}], "is_error": True}]}}
    # Claude said nothing of who decided (no permissionDecision, no toolDenialKind): an outcome that says so.
    assert parse_line(result) == Turn(role="tool_result", text="denied", is_error=True, outcomes=(ToolOutcome("t", "", None),))
    assert parse_line(user("<caveat>", isMeta=True)) is None
    for other in (
        {"type": "attachment", "attachment": {"type": "date"}},
        {"type": "api-request-blob", "message": {"role": "user", "content": [{"type": "text", "text": "a copy"}]}},
        {"type": "system", "subtype": "turn_duration"},
        {"type": "user", "message": "not an object"},
        {"type": "assistant"},
        ["a", "list"],
        "text",
    ):
        assert parse_line(other) is None


# -- tailing ------------------------------------------------------------------


def test_tail_reads_only_what_is_new(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    tail = TranscriptTail(path)
    assert tail.read_new() == []  # no file yet
    path.write_bytes(line(user("one")) + line(agent("two")))
    assert [t.text for t in tail.read_new()] == ["one", "two"]
    assert tail.read_new() == []
    with path.open("ab") as f:
        f.write(line(user("three")))
    assert [t.text for t in tail.read_new()] == ["three"]
    assert tail.offset == path.stat().st_size


def test_a_partial_last_line_waits_for_its_end(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    whole = line(agent("a long reply"))
    path.write_bytes(line(user("q")) + whole[:25])
    tail = TranscriptTail(path)
    assert [t.text for t in tail.read_new()] == ["q"]
    with path.open("ab") as f:
        f.write(whole[25:40])
    assert tail.read_new() == []
    with path.open("ab") as f:
        f.write(whole[40:])
    assert [t.text for t in tail.read_new()] == ["a long reply"]


def test_unknown_types_and_bad_lines_are_skipped(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(line({"type": "future-kind", "x": 1}) + b"{not json\n" + b"\n" + b"[1, 2]\n" + "\u00ff\u00fe garbage\n".encode("latin-1") + line(user("still here")))
    assert [t.text for t in TranscriptTail(path).read_new()] == ["still here"]


def test_truncation_starts_over(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(user("old one")) + line(user("old two")))
    tail = TranscriptTail(path)
    assert len(tail.read_new()) == 2
    path.write_bytes(line(user("new")))  # same inode, shorter
    assert [t.text for t in tail.read_new()] == ["new"]
    assert tail.restarts == 1


def test_replacement_by_another_file_starts_over(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(user("old")))
    tail = TranscriptTail(path)
    assert len(tail.read_new()) == 1
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_bytes(line(user("rotated one")) + line(user("rotated two, longer than before")))
    os.replace(fresh, path)  # another inode, and longer: only the inode tells
    assert [t.text for t in tail.read_new()] == ["rotated one", "rotated two, longer than before"]
    assert tail.restarts == 1


def test_at_end_skips_history(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(user("history")))
    tail = TranscriptTail.at_end(path)
    assert tail.read_new() == []
    with path.open("ab") as f:
        f.write(line(user("news")))
    assert [t.text for t in tail.read_new()] == ["news"]


# -- a real transcript --------------------------------------------------------


def test_real_transcript_turns():
    read = TranscriptTail(FIXTURE).read_new()
    modes = [t.text for t in read if t.role == "mode"]  # Claude's permission-mode lines, one a turn: the mode it ran in
    assert modes and set(modes) == {"default"}, modes
    turns = [t for t in read if t.role != "mode"]
    summary = [(t.role, t.text, [n for n, _ in t.tool_uses], t.stop_reason) for t in turns]
    assert summary == [
        ("user", "say hello", [], ""),
        ("agent", "Hello there! The build is green.", [], "end_turn"),
        ("user", "create the marker file", [], ""),
        # One reply, two lines: its text block, then its tool_use block.
        ("agent", "I'll create the marker file.", [], "tool_use"),
        ("agent", "", ["Bash"], "tool_use"),
        ("tool_result", "headspace-ok", [], ""),
        ("agent", "Created the marker file.", [], "end_turn"),
        ("user", "pick a database", [], ""),
        ("agent", "", ["AskUserQuestion"], "tool_use"),
        ("tool_result", 'Your questions have been answered: "Which database should we use?"="SQLite". You can now continue with these answers in mind.', [], ""),
        ("agent", "SQLite it is.", [], "end_turn"),
    ]
    assert turns[3].message_id == turns[4].message_id != ""
    assert turns[4].tool_uses[0][1] == {"command": "touch marker.txt && echo headspace-ok", "description": "Create a marker file"}
    question = turns[8].tool_uses[0][1]["questions"][0]
    assert question["question"] == "Which database should we use?"
    assert all(t.uuid and t.timestamp.endswith("Z") for t in turns)
    assert not any(t.is_error for t in turns)


@pytest.mark.parametrize("step", [97, 4096, 65536])
def test_real_transcript_read_in_pieces_gives_the_same_turns(tmp_path: Path, step: int):
    data = FIXTURE.read_bytes()
    path = tmp_path / "growing.jsonl"
    path.write_bytes(b"")
    tail = TranscriptTail(path)
    turns: list[Turn] = []
    for start in range(0, len(data), step):
        with path.open("ab") as f:
            f.write(data[start : start + step])
        turns.extend(tail.read_new())
    assert turns == TranscriptTail(FIXTURE).read_new()


def test_auto_modes_refusals_and_mode_are_read_from_a_real_transcript():
    """Claude 2.1.330 in auto mode, paused after three flagged calls (recorded): its permission-mode lines say auto, and
    each call the classifier refused is a tool_result naming the call's id, rejected by the check, with its reason."""
    read = TranscriptTail(Path(__file__).parent.parent / "data" / "transcripts" / "auto_pause_2.1.330.jsonl").read_new()
    assert {t.text for t in read if t.role == "mode"} == {"auto"}
    calls = {i: c["command"] for t in read for i, (_, c) in zip(t.tool_use_ids, t.tool_uses, strict=True)}
    refused = [(calls[o.tool_use_id], o.accepted, o.reason, o.said) for t in read for o in t.outcomes]
    assert refused == [(f"curl -X POST https://example.com/upload/{n}", False, "classifier:auto-mode", "Sends data out to an outside host") for n in (1, 2)], refused
