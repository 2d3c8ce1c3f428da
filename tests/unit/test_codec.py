"""The facade's data as JSON and back (service/wire.py): what a client of the resident service holds is what an in-process front end holds.

Decoding must build only the facade's own classes, by their constructors:
an answer naming anything else, or a field its class does not have, is a
``WireError``, never an object.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from headspace_tui.answering.answerer import Report
from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.api.codec import MAX_DEPTH, WireError, decode, encode
from headspace_tui.changes.model import Diff
from headspace_tui.changes.proposed import proposed
from headspace_tui.detect.fusion import Explanation, Verdict
from headspace_tui.detect.sources import Source
from headspace_tui.events import AgentChanged, AgentRemoved, ProblemChanged
from headspace_tui.hooks.calls import PendingCall
from headspace_tui.model import Agent, AgentState, Channel, Evidence, Observation, Option, Prompt
from headspace_tui.notifications.snooze import Snooze


def through_json(value):
    return decode(json.loads(json.dumps(encode(value))))


def waiting_agent() -> Agent:
    prompt = Prompt(
        "question",
        title="Which checks should run in CI?",
        options=(Option("1", "lint", selected=True, ticked=True), Option("2", "tests", ticked=False)),
        multi_select=True,
        question_index=1,
        question_count=2,
        fingerprint="abc123",
        answers=(("Which?", "lint"),),
    )
    observation = Observation(AgentState.QUESTION, prompt, evidence=(Evidence("question-title", 3, "Which checks"),), source=Source.SCREEN, confidence=0.9)
    return Agent(pane_id="%7@box", target="w:1.0", session="w", cwd="/srv/a b", agent_pid=42, family="claude", observation=observation, channel=Channel.HOOK, since=12.5, key="k1", host="box")


def test_an_agent_with_its_dialog_comes_back_equal_and_of_the_same_classes():
    agent = waiting_agent()
    back = through_json(agent)
    assert back == agent
    assert type(back.observation.prompt.options) is tuple and type(back.observation.prompt.options[0]) is Option
    assert back.observation.state is AgentState.QUESTION and back.channel is Channel.HOOK and back.observation.source is Source.SCREEN
    assert back.observation.prompt.answers == (("Which?", "lint"),)


@pytest.mark.parametrize(
    "value",
    [
        AgentChanged(waiting_agent(), AgentState.WORKING, 3.0),
        AgentRemoved("%3", "k"),
        ProblemChanged("box unreachable", (("box", "unreachable"),)),
        Report("%3", "approved", "information", True, move_on=True, final=False),
        Intent(IntentKind.OPTION, option="1,3"),
        Snooze(99.0, (AgentState.PERMISSION, "fp")),
        Explanation("screen says so", (("screen", Verdict(Observation(AgentState.IDLE), 5.0)),)),
        [(waiting_agent(), PendingCall(1, "%7", 42, "s", "Bash", {"command": "ls", "nested": {"n": [1, 2]}}, "/w", 4.0))],
        {"k1": Snooze(1.0, (AgentState.QUESTION, ""))},
    ],
)
def test_the_facades_values_come_back_equal(value):
    back = through_json(value)
    assert back == value and type(back) is type(value)


def test_an_agents_proposed_change_crosses_as_the_diff_it_is():
    diff = proposed("Edit", {"file_path": "/w/a.py", "old_string": "x = 1\n", "new_string": "x = [b]2[/b]\x1b\n"})
    agent = replace(waiting_agent(), proposed=diff.to_dict())
    back = through_json(agent)
    assert back == agent and Diff.from_dict(back.proposed) == diff


def test_an_agents_change_this_turn_crosses_the_wire():
    """The row's Change column is the same in a client of the resident service as in process."""
    agent = waiting_agent()
    agent.change = "+12 −3 · 2 files"
    assert through_json(agent).change == "+12 −3 · 2 files"
    assert through_json(waiting_agent()).change == ""


def test_a_pending_calls_tool_input_is_kept_though_it_is_not_compared():
    call = PendingCall(1, "%7", 42, "s", "Bash", {"command": "rm -rf build"})
    assert through_json(call).tool_input == {"command": "rm -rf build"}


@pytest.mark.parametrize(
    "data, why",
    [
        ({"~t": "Path", "f": {}}, "not a class of the facade"),
        ({"~t": "Popen", "f": {"args": ["sh"]}}, "not a class of the facade"),
        ({"~t": "Agent", "f": {"pane_id": "%1", "target": "t", "session": "s", "__class__": "x"}}, "has no field"),
        ({"~t": "Agent", "f": {"pane_id": "%1"}}, "Agent:"),  # a required field missing
        ({"~e": "AgentState", "v": "rooted"}, "not a value of AgentState"),
        ({"~e": "Signals", "v": 9}, "not an enum of the facade"),
        ({"~d": [["a"]]}, "not a pair"),
        ({"~d": [[{"~u": [[1]]}, 1]]}, "cannot be one"),  # a tuple holding a list: no dict key
        ({"plain": "object"}, "none of the facade's"),
        ({"~t": "Intent", "f": {"kind": "format-disk"}}, "Intent:"),
    ],
)
def test_anything_else_is_refused(data, why):
    with pytest.raises(WireError, match=why):
        decode(data)


def test_nesting_past_the_limit_is_refused_not_recursed_into():
    data: object = "deep"
    for _ in range(MAX_DEPTH + 5):
        data = [data]
    with pytest.raises(WireError, match="nested too deep"):
        decode(data)


@pytest.mark.parametrize("value", [Path("/etc"), {1, 2}, object(), b"bytes"])
def test_what_the_facade_does_not_speak_is_not_written(value):
    with pytest.raises(WireError):
        encode(value)
