"""Who answered first, from Claude's transcript: real 2.1.330 lines, and the matching of answers to them.

The lines in tests/data/transcripts/answers/ are the tool call and its result
from real Claude Code 2.1.330 sessions against the scripted API, answered by
a PermissionRequest hook (allow; deny; deny with interrupt, as headspace's
"n" sends) and by keys in the dialog ("1"; Esc).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from headspace_tui.detect.claude.transcript import ToolOutcome, Turn, parse_line
from headspace_tui.events import Answered
from headspace_tui.model import Agent
from headspace_tui.service.records.evidence import KEPT_ANSWERS, KEPT_GONE, KEPT_USES, SETTLED_KEPT, UNREAD_WAIT, AnswerEvidence, first_from
from headspace_tui.service.records.journal import Journal, who

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts" / "answers"


class Clock:
    """headspace's clock, moved by the test: when each transcript line is read matters."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _watching(now: float) -> tuple[Agent, Clock, AnswerEvidence]:
    """One agent, headspace's clock at ``now``, and the evidence kept for it."""
    clock = Clock(now)
    return Agent(pane_id="%1", target="s:0.0", session="s", key="k1"), clock, AnswerEvidence(clock)


def _turns(case: str) -> list[Turn]:
    lines = (DATA / f"{case}.jsonl").read_text().splitlines()
    return [t for t in (parse_line(json.loads(line)) for line in lines) if t is not None]


def _answer(agent: Agent, channel: str, turns: list[Turn], *, exact: bool = True) -> Answered:
    """An answer to the call in ``turns``: with its exact input (the hook's), or knowing only what its dialog showed."""
    ((tool, data),) = turns[0].tool_uses
    if exact:
        return Answered(agent, channel, f"{tool}: …", tool, json.dumps(data, sort_keys=True, ensure_ascii=False), at=1.0)
    return Answered(agent, channel, f"{tool}: …", tool, "", at=1.0, shown=data["command"])


@pytest.mark.parametrize(
    ("case", "by", "accepted"),
    [
        ("hook_allow", "hook", True),
        ("hook_deny", "hook", False),
        ("hook_deny_interrupt", "", False),  # the same bytes as Esc: not known
        ("key_allow_1", "dialog", True),
        ("key_deny_esc", "", False),
    ],
)
def test_claudes_result_line_says_who_decided(case, by, accepted):
    call, result = _turns(case)
    assert call.role == "agent" and call.tool_uses[0][0] == "Bash" and call.tool_use_ids[0].startswith("toolu_")
    assert result.role == "tool_result"
    (outcome,) = result.outcomes
    assert outcome.tool_use_id == call.tool_use_ids[0]
    assert (outcome.by, outcome.accepted) == (by, accepted)


@pytest.mark.parametrize(
    ("case", "channel", "first"),
    [
        ("hook_allow", "hook", "headspace"),  # headspace's hook decision was the one Claude used
        ("key_allow_1", "hook", "pane"),  # headspace decided through the hook, but a key in the pane won
        ("key_allow_1", "keys", "headspace"),  # headspace's keys answered the dialog
        ("key_allow_1", "pane", "pane"),
        ("hook_allow", "pane", "hook"),  # gone from the screen while headspace typed nothing: some hook
        ("hook_deny_interrupt", "hook", "unconfirmed"),  # a stopping refusal reads the same for a key and a hook
        ("key_deny_esc", "pane", "unconfirmed"),
    ],
)
def test_an_answer_is_confirmed_by_its_tool_calls_result(case, channel, first):
    agent = Agent(pane_id="%1", target="s:0.0", session="s", key="k1")
    turns = _turns(case)
    clock = Clock(0.5)
    evidence = AnswerEvidence(clock)
    evidence.turns("k1", turns[:1])  # the call is in the transcript before its dialog is answered (at 1.0)
    assert evidence.answered("k1", _answer(agent, channel, turns, exact=channel == "hook")) == []
    clock.now = 2.0
    (found,) = evidence.turns("k1", turns[1:])
    assert found.first == first and found.tool_use_id == turns[0].tool_use_ids[0]
    assert evidence.turns("k1", turns[1:]) == []  # confirmed once


def test_an_answer_to_another_call_is_not_confirmed_by_this_result():
    agent = Agent(pane_id="%1", target="s:0.0", session="s", key="k1")
    turns = _turns("hook_allow")
    evidence = AnswerEvidence()
    evidence.turns("k1", turns[:1])
    other = Answered(agent, "hook", "Bash: ls", "Bash", json.dumps({"command": "ls"}), at=1.0)
    evidence.answered("k1", other)
    assert evidence.turns("k1", turns[1:]) == []
    evidence.turns("k2", turns[:1])
    evidence.answered("k1", _answer(agent, "hook", turns))
    assert evidence.turns("k2", turns[1:]) == []  # another agent's result: not this answer's


def test_what_is_kept_is_bounded_and_goes_with_the_agent():
    agent = Agent(pane_id="%1", target="s:0.0", session="s", key="k1")
    evidence = AnswerEvidence(Clock(1.0))
    many = [Turn(role="agent", tool_uses=(("Bash", {"command": f"echo {i}"}),), tool_use_ids=(f"toolu_{i}",)) for i in range(500)]
    for i in range(500):
        evidence.answered("k1", Answered(agent, "hook", "x", "Bash", json.dumps({"command": f"never {i}"}), at=1.0))
    evidence.turns("k1", many)
    assert len(evidence._calls["k1"]) == KEPT_USES and len(evidence._waiting["k1"]) == KEPT_ANSWERS
    assert len(evidence._gone["k1"]) == KEPT_GONE  # the ids let go, remembered so a line read again stays gone
    for n in range(1000):  # agents that come and go
        evidence.turns(f"gone{n}", many[:3])
        evidence.ended(f"gone{n}")
    evidence.ended("k1")
    assert len(evidence) == 0


def test_first_from_every_pair():
    assert [first_from(c, b) for c in ("hook", "keys", "pane") for b in ("hook", "dialog", "rule", "")] == [
        "headspace",
        "pane",
        "rule",
        "unconfirmed",
        "hook",
        "headspace",
        "rule",
        "unconfirmed",
        "hook",
        "pane",
        "rule",
        "unconfirmed",
    ]


def test_the_journal_writes_claudes_word_beside_the_answer():
    agent = Agent(pane_id="%1", target="s:0.0", session="s", key="k1")
    journal = Journal(None, clock=lambda: 100.0)
    turns = _turns("key_allow_1")
    journal.turns(agent, turns[:1])
    journal.answered(_answer(agent, "hook", turns))
    journal.turns(agent, turns[1:])
    kinds = [(e.kind, e.payload.get("first")) for e in journal.timeline(who(agent))]
    assert ("answer", "headspace") in kinds  # headspace's view when it answered
    assert ("answer_evidence", "pane") in kinds  # Claude's: the key in the pane won
    evidence = next(e for e in journal.timeline(who(agent)) if e.kind == "answer_evidence")
    assert evidence.payload["tool_use_id"] == turns[0].tool_use_ids[0] and evidence.payload["claude_said"] == "user_temporary"


def test_a_remote_turn_keeps_its_outcomes(monkeypatch):
    import dataclasses

    from headspace_tui.remote.host import _turn

    turn = _turns("hook_allow")[1]
    row = json.loads(json.dumps(dataclasses.asdict(turn)))  # as the probe sends it
    assert _turn(row).outcomes == (ToolOutcome(turn.outcomes[0].tool_use_id, "hook", True, "hook"),)
    assert _turn({**row, "new_field_of_a_newer_probe": 1}).outcomes == turn.outcomes


def test_an_answer_read_from_the_screen_is_bound_to_the_call_whose_dialog_was_up():
    """Keys know the dialog, not always the tool: their call is one open when they began, and a rule's result rules a call out."""
    agent = Agent(pane_id="%1", target="s:0.0", session="s", key="k1")
    evidence = AnswerEvidence(Clock(0.5))  # both calls read before the keys (at 1.0)
    ran = Turn(role="agent", tool_uses=(("Read", {"file_path": "a"}),), tool_use_ids=("toolu_read",))
    asked = Turn(role="agent", tool_uses=(("Bash", {"command": "make"}),), tool_use_ids=("toolu_bash",))
    evidence.turns("k1", [ran, asked])
    evidence.answered("k1", Answered(agent, "keys", "1", "", "", at=1.0, shown="make"))  # the screen did not name the tool
    read_result = Turn(role="tool_result", outcomes=(ToolOutcome("toolu_read", "rule", True, "config"),))
    assert evidence.turns("k1", [read_result]) == []  # an earlier call's result: not this answer's
    bash_result = Turn(role="tool_result", outcomes=(ToolOutcome("toolu_bash", "dialog", True, "user_temporary"),))
    (found,) = evidence.turns("k1", [bash_result])
    assert (found.first, found.tool_use_id, found.evidence) == ("headspace", "toolu_bash", "a key in the dialog allowed it")


def test_an_answer_from_the_screen_before_any_call_was_read_is_never_matched_to_a_guess():
    agent, clock, evidence = _watching(1.0)
    evidence.answered("k1", Answered(agent, "keys", "1", "Bash", "", at=1.0, shown="ls"))
    clock.now = 1.2
    later = Turn(role="agent", tool_uses=(("Bash", {"command": "ls"}),), tool_use_ids=("toolu_later",))
    result = Turn(role="tool_result", outcomes=(ToolOutcome("toolu_later", "dialog", True, "user_temporary"),))
    assert evidence.turns("k1", [later, result]) == []


def _call(use_id: str, command: str, tool: str = "Bash") -> Turn:
    return Turn(role="agent", tool_uses=((tool, {"command": command}),), tool_use_ids=(use_id,))


def _result(use_id: str, by: str = "dialog") -> Turn:
    return Turn(role="tool_result", outcomes=(ToolOutcome(use_id, by, True, "user_temporary" if by == "dialog" else by),))


def _keys(agent: Agent, tool: str, began: float, at: float, shown: str = "make") -> Answered:
    return Answered(agent, "keys", "1", tool, "", at=at, began=began, shown=shown)


def _mcp(use_id: str, sql: str) -> Turn:
    """A call whose dialog shows no command or file (an MCP tool's): only its tool tells it from others."""
    return Turn(role="agent", tool_uses=(("mcp__db__run", {"sql": sql}),), tool_use_ids=(use_id,))


def _question(use_id: str, question: str) -> Turn:
    return Turn(role="agent", tool_uses=(("AskUserQuestion", {"questions": [{"question": question, "options": []}]}),), tool_use_ids=(use_id,))


def test_keys_recorded_after_claude_wrote_the_result_are_confirmed_at_once():
    """The CI failure: keys are recorded once the pane moved on, and Claude wrote the result 20-30 ms before; read first, it was lost."""
    agent = Agent(pane_id="%1", target="s:0.0", session="s", key="k1")
    clock = Clock(0.0)
    journal = Journal(None, clock)
    journal.turns(agent, [_call("toolu_make", "make")])
    clock.now = 1.2  # the keys began at 1.0; the result is read before they are recorded
    journal.turns(agent, [_result("toolu_make")])
    clock.now = 1.3
    journal.answered(_keys(agent, "Bash", began=1.0, at=1.3))
    (evidence,) = [e.payload for e in journal.timeline(who(agent)) if e.kind == "answer_evidence"]
    assert (evidence["channel"], evidence["tool_use_id"], evidence["first"]) == ("keys", "toolu_make", "headspace")
    journal.turns(agent, [_result("toolu_make")])  # read again: not confirmed twice
    assert len([e for e in journal.timeline(who(agent)) if e.kind == "answer_evidence"]) == 1


def test_keys_are_not_bound_to_the_call_claude_made_after_them():
    """Between the keys and their record Claude ran the call and asked the next: the answer is the first's."""
    agent, clock, evidence = _watching(0.0)
    evidence.turns("k1", [_call("toolu_make", "make")])
    clock.now = 1.2
    evidence.turns("k1", [_result("toolu_make"), _call("toolu_next", "make install")])
    clock.now = 1.3
    (found,) = evidence.answered("k1", _keys(agent, "Bash", began=1.0, at=1.3))
    assert found.tool_use_id == "toolu_make"
    clock.now = 3.0  # the next dialog, answered too: its call was left for it
    assert evidence.answered("k1", _keys(agent, "Bash", began=2.0, at=3.0, shown="make install")) == []
    (after,) = evidence.turns("k1", [_result("toolu_next")])
    assert after.tool_use_id == "toolu_next" and after.answer.began == 2.0
    # The same command asked again right after (a retry): read after the keys began, it is not theirs either.
    clock.now = 4.0
    evidence.turns("k1", [_call("toolu_try1", "make")])
    clock.now = 4.2  # the keys began at 4.1
    evidence.turns("k1", [_result("toolu_try1"), _call("toolu_try2", "make")])
    clock.now = 4.3
    (first,) = evidence.answered("k1", _keys(agent, "Bash", began=4.1, at=4.3))
    assert first.tool_use_id == "toolu_try1"


def test_keys_do_not_claim_a_result_that_came_before_them_nor_a_call_read_after_them():
    """A call settled before the keys began was not their dialog; one read after they began is not known to be (a wrong word is worse than none)."""
    agent, clock, evidence = _watching(0.0)
    evidence.turns("k1", [_call("toolu_old", "make"), _result("toolu_old")])  # answered in the pane, long before
    clock.now = 1.3
    assert evidence.answered("k1", _keys(agent, "Bash", began=1.0, at=1.3)) == []
    clock.now = 1.5  # one lagging read: a call a rule let run, and the call whose dialog the keys answered
    assert evidence.turns("k1", [_call("toolu_ls", "ls"), _result("toolu_ls", by="rule"), _call("toolu_make", "make"), _result("toolu_make")]) == []
    assert evidence._waiting.get("k1", []) == []  # nothing left waiting to be matched to a guess later


def test_parallel_calls_confirm_keys_only_when_their_results_leave_one_dialog():
    """Calls open when the keys began: the dialog's command tells them apart; without one, a rule's result rules a call out,
    and two a dialog decided leave it unknown."""
    agent, clock, evidence = _watching(0.0)
    evidence.turns("k1", [_call("toolu_ls", "ls"), _call("toolu_rm", "rm x")])
    clock.now = 1.3
    assert evidence.answered("k1", _keys(agent, "Bash", began=1.0, at=1.3, shown="rm x")) == []
    (found,) = evidence.turns("k1", [_result("toolu_rm")])  # ls is not what the dialog showed
    assert (found.tool_use_id, found.first) == ("toolu_rm", "headspace")

    clock.now = 2.0
    evidence.turns("k1", [_mcp("toolu_select", "select 1"), _mcp("toolu_drop", "drop table t")])
    clock.now = 3.3
    assert evidence.answered("k1", _keys(agent, "mcp__db__run", began=3.0, at=3.3, shown="")) == []
    assert evidence.turns("k1", [_result("toolu_drop")]) == []  # the select may still have had a dialog: wait
    (found,) = evidence.turns("k1", [_result("toolu_select", by="rule")])
    assert (found.tool_use_id, found.first) == ("toolu_drop", "headspace")

    clock.now = 5.0
    evidence.turns("k1", [_mcp("toolu_a", "a"), _mcp("toolu_b", "b")])
    clock.now = 6.3
    assert evidence.answered("k1", _keys(agent, "mcp__db__run", began=6.0, at=6.3, shown="")) == []
    assert evidence.turns("k1", [_result("toolu_a"), _result("toolu_b")]) == []  # both by a dialog: which one is not known
    assert evidence._waiting["k1"] == []


def test_a_second_answer_to_one_call_is_not_confirmed_against_claudes_next_call():
    """A question with two parts takes two answers by keys; the call is the first's, and the next call is neither's."""
    agent, clock, evidence = _watching(0.0)
    evidence.turns("k1", [_question("toolu_q", "which?")])
    clock.now = 1.0
    evidence.answered("k1", _keys(agent, "AskUserQuestion", began=1.0, at=1.0, shown=""))
    clock.now = 2.0
    assert evidence.answered("k1", _keys(agent, "AskUserQuestion", began=2.0, at=2.0, shown="")) == []
    clock.now = 2.5
    (found,) = evidence.turns("k1", [_result("toolu_q"), _question("toolu_q2", "and?")])
    assert found.tool_use_id == "toolu_q" and found.answer.at == 1.0
    assert evidence.turns("k1", [_result("toolu_q2")]) == []


def test_a_call_read_again_is_not_reopened_and_old_results_are_let_go():
    agent, clock, evidence = _watching(0.0)
    evidence.turns("k1", [_call("toolu_make", "make"), _result("toolu_make")])
    clock.now = 3.0  # the file read again from the start, then keys to another dialog
    evidence.turns("k1", [_call("toolu_make", "make"), _result("toolu_make")])
    assert evidence.answered("k1", _keys(agent, "Bash", began=3.5, at=3.6)) == []
    clock.now = 3.0 + SETTLED_KEPT + 1  # a result nobody claimed (its input may be a whole file) does not stay
    evidence.turns("k1", [_call("toolu_next", "ls")])
    assert list(evidence._calls["k1"]) == ["toolu_next"]


def test_a_dialog_up_when_headspace_started_is_matched_through_the_replayed_history():
    """History before start-up is replayed off the journal; its open calls meet an answer, its settled ones never do."""
    agent = Agent(pane_id="%1", target="s:0.0", session="s", key="k1")
    clock = Clock(5.0)
    journal = Journal(None, clock)
    history = [turn for i in range(300) for turn in (_call(f"toolu_{i}", f"echo {i}"), _result(f"toolu_{i}"))][:-1]
    adopt = journal.replayed(agent, history)  # read at 5.0, after the keys below began: still before any answer of this run
    clock.now = 5.5
    adopt()
    clock.now = 6.0
    journal.answered(_keys(agent, "Bash", began=4.9, at=6.0, shown="echo 299"))
    journal.turns(agent, [_result("toolu_299")])
    (evidence,) = [e.payload for e in journal.timeline(who(agent)) if e.kind == "answer_evidence"]
    assert (evidence["tool_use_id"], evidence["input"]) == ("toolu_299", json.dumps({"command": "echo 299"}))
    # An identical request through the hook right after: yesterday's settled call is not its call.
    journal.answered(Answered(agent, "hook", "Bash: echo 298", "Bash", json.dumps({"command": "echo 298"}), at=6.1))
    assert len([e for e in journal.timeline(who(agent)) if e.kind == "answer_evidence"]) == 1


def test_an_answer_with_the_exact_input_takes_the_call_still_waiting_before_one_just_settled():
    """Two identical calls: the first settled a moment ago (answered in the pane), the second waits for this hook answer."""
    agent, clock, evidence = _watching(0.0)
    evidence.turns("k1", [_call("toolu_1", "make"), _result("toolu_1"), _call("toolu_2", "make")])
    clock.now = 1.0
    exact = json.dumps({"command": "make"})
    assert evidence.answered("k1", Answered(agent, "hook", "Bash: make", "Bash", exact, at=1.0)) == []
    (found,) = evidence.turns("k1", [_result("toolu_2", by="hook")])
    assert (found.tool_use_id, found.first) == ("toolu_2", "headspace")
    # The pane's answer to the first, seen gone after its result was read: that result is still there to claim.
    (late,) = evidence.answered("k1", Answered(agent, "pane", "Bash: make", "Bash", exact, at=1.5))
    assert (late.tool_use_id, late.first) == ("toolu_1", "pane")


def test_keys_do_not_match_an_open_call_whose_command_their_dialog_did_not_show():
    """Keys to ``make install`` whose call is not read yet, while ``make`` (decided by the user's own hook) has no result read: not ``make``."""
    agent, clock, evidence = _watching(0.0)
    evidence.turns("k1", [_call("toolu_make", "make")])
    clock.now = 2.0
    assert evidence.answered("k1", _keys(agent, "Bash", began=1.9, at=2.0, shown="make install")) == []
    assert evidence.turns("k1", [_result("toolu_make", by="hook"), _call("toolu_install", "make install"), _result("toolu_install")]) == []
    # The same keys with the dialog's command that was open: confirmed (the screen folds a wrapped command's whitespace).
    evidence.turns("k1", [_call("toolu_test", "make  test")])
    clock.now = 3.0
    assert evidence.answered("k1", _keys(agent, "Bash", began=2.9, at=3.0, shown="make test")) == []
    (found,) = evidence.turns("k1", [_result("toolu_test")])
    assert found.tool_use_id == "toolu_test"
    # Keys whose dialog's command was not read from the screen: a call acting on one is not known to be theirs.
    evidence.turns("k1", [_call("toolu_lint", "make lint")])
    clock.now = 4.0
    assert evidence.answered("k1", _keys(agent, "Bash", began=3.9, at=4.0, shown="")) == []
    assert evidence.turns("k1", [_result("toolu_lint")]) == []


def test_an_exact_answer_whose_call_is_gone_does_not_claim_the_next_identical_call():
    """The pane's answer seen 3 s after its result was read: not confirmed, and ten minutes later not the new identical call's either."""
    agent, clock, evidence = _watching(0.0)
    exact = json.dumps({"command": "npm test"})
    evidence.turns("k1", [_call("toolu_1", "npm test"), _result("toolu_1")])
    clock.now = 3.0
    assert evidence.answered("k1", Answered(agent, "pane", "Bash: npm test", "Bash", exact, at=3.0)) == []
    clock.now = 600.0
    evidence.turns("k1", [_call("toolu_2", "npm test")])
    assert evidence.answered("k1", Answered(agent, "hook", "Bash: npm test", "Bash", exact, at=600.0)) == []
    (found,) = evidence.turns("k1", [_result("toolu_2", by="hook")])
    assert (found.tool_use_id, found.answer.channel, found.first) == ("toolu_2", "hook", "headspace")
    assert evidence._waiting["k1"] == []  # the pane's answer gave up once its call could no longer be read in time


def test_an_exact_answer_whose_line_lags_is_matched_when_it_is_read():
    agent, clock, evidence = _watching(1.0)
    exact = json.dumps({"command": "make"})
    assert evidence.answered("k1", Answered(agent, "hook", "Bash: make", "Bash", exact, at=1.0)) == []
    clock.now = 1.0 + UNREAD_WAIT - 1
    (found,) = evidence.turns("k1", [_call("toolu_make", "make"), _result("toolu_make", by="hook")])
    assert found.first == "headspace"


def test_two_identical_calls_answered_through_the_hook_each_get_their_own_word():
    agent, clock, evidence = _watching(0.0)
    exact = json.dumps({"command": "make"})
    evidence.turns("k1", [_call("toolu_1", "make"), _call("toolu_2", "make")])
    clock.now = 1.0
    for _ in range(2):
        assert evidence.answered("k1", Answered(agent, "hook", "Bash: make", "Bash", exact, at=1.0)) == []
    found = evidence.turns("k1", [_result("toolu_1", by="hook"), _result("toolu_2", by="dialog")])
    assert [(f.tool_use_id, f.first) for f in found] == [("toolu_1", "headspace"), ("toolu_2", "pane")]


def test_a_result_a_waiting_answer_still_needs_is_kept_past_the_settled_time():
    """Parallel calls: the dialog's result came, the other call runs a minute; when a rule's result rules it out, the first is confirmed."""
    agent, clock, evidence = _watching(0.0)
    evidence.turns("k1", [_mcp("toolu_drop", "drop table t"), _mcp("toolu_slow", "select sleep(60)")])
    clock.now = 1.0
    evidence.answered("k1", _keys(agent, "mcp__db__run", began=1.0, at=1.0, shown=""))
    evidence.turns("k1", [_result("toolu_drop")])
    clock.now = 1.0 + SETTLED_KEPT + 30
    evidence.turns("k1", [_call("toolu_other", "ls")])  # results nobody waits for go; this one is waited for
    (found,) = evidence.turns("k1", [_result("toolu_slow", by="rule")])
    assert found.tool_use_id == "toolu_drop"


def test_calls_let_go_do_not_come_back_when_the_transcript_is_read_again():
    """After its result is forgotten, a call read again (the file read from the start) is not a fresh call an exact answer may claim."""
    agent, clock, evidence = _watching(0.0)
    evidence.turns("k1", [_call("toolu_1", "make"), _result("toolu_1")])
    clock.now = SETTLED_KEPT + 5
    evidence.turns("k1", [])  # forgotten
    evidence.turns("k1", [_call("toolu_1", "make"), _result("toolu_1")])  # read again
    assert evidence.answered("k1", Answered(agent, "pane", "Bash: make", "Bash", json.dumps({"command": "make"}), at=clock.now)) == []


def test_an_exact_answer_left_waiting_never_binds_to_an_identical_call_read_long_after():
    """One read brings a new identical call and its result ten minutes on: the old pane answer is not its answer."""
    agent, clock, evidence = _watching(0.0)
    evidence.turns("k1", [_call("toolu_1", "npm test"), _result("toolu_1")])
    clock.now = 3.0
    evidence.answered("k1", Answered(agent, "pane", "Bash: npm test", "Bash", json.dumps({"command": "npm test"}), at=3.0))
    clock.now = 600.0
    assert evidence.turns("k1", [_call("toolu_2", "npm test"), _result("toolu_2")]) == []


def test_an_exact_answer_waits_for_its_own_call_not_one_keys_hold_or_a_rule_let_run():
    agent, clock, evidence = _watching(0.0)
    exact = json.dumps({"command": "make"})
    evidence.turns("k1", [_call("toolu_x", "make")])
    clock.now = 1.0
    assert evidence.answered("k1", _keys(agent, "Bash", began=1.0, at=1.0)) == []  # the keys hold toolu_x
    assert evidence.answered("k1", Answered(agent, "hook", "Bash: make", "Bash", exact, at=1.0)) == []  # its own call is not read yet
    clock.now = 2.0
    found = evidence.turns("k1", [_result("toolu_x"), _call("toolu_y", "make"), _result("toolu_y", by="hook")])
    assert [(f.tool_use_id, f.answer.channel) for f in found] == [("toolu_x", "keys"), ("toolu_y", "hook")]
    # A call of the same input a rule let run just before is not the pane's: it waits for the one with a dialog.
    evidence.turns("k1", [_call("toolu_r", "make"), _result("toolu_r", by="rule")])
    clock.now = 3.0
    assert evidence.answered("k1", Answered(agent, "pane", "Bash: make", "Bash", exact, at=3.0)) == []
    clock.now = 3.5
    (pane,) = evidence.turns("k1", [_call("toolu_d", "make"), _result("toolu_d")])
    assert (pane.tool_use_id, pane.first) == ("toolu_d", "pane")
