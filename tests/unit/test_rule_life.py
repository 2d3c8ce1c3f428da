"""A rule's life in the service: it pauses itself at a loop's pace, ends for an agent when that agent's task does
(``until = "idle"``), and a revoked rule answers nothing again; each as the event log keeps it, across a restart.

The answer desk, the rules and the event log are the real ones; the hook's
socket is stood in for (tests/unit/test_codex_rules_hook.py's ``Held``; the
whole path is in tests/e2e/test_rules_live.py).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from headspace_tui.answering.desk import AnswerDesk, Watched
from headspace_tui.detect.families import vocabulary
from headspace_tui.events import AgentChanged
from headspace_tui.hooks.calls import PendingCall
from headspace_tui.model import Agent, AgentState, Channel, Observation
from headspace_tui.rules.rules_file import DEFAULT_BURST, UNTIL_IDLE_CAP, parse_rules
from headspace_tui.service.acting.rule_answers import RuleAnswers
from headspace_tui.service.acting.rule_book import RuleBook
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.records.store import AgentStore
from headspace_tui.state.eventlog import EventLog
from tests.unit.test_codex_rules_hook import Held


class World:
    """One agent at %4 whose dialog a hook holds, the rules file, the event log and a clock to move."""

    def __init__(self, tmp_path: Path, rules: str) -> None:
        tmp_path.mkdir(parents=True, exist_ok=True)
        self.now = 1000.0
        self.rules_path = tmp_path / "rules.toml"
        self.rules_path.write_text(rules)
        os.chmod(self.rules_path, 0o600)
        self.log_path = tmp_path / "events.db"
        self.next_id = 0
        self.notices: list[str] = []
        self.start()

    def start(self) -> None:
        """The service (again): a new desk and rules on the same event log."""
        self.journal = Journal(EventLog(self.log_path), clock=lambda: self.now)
        self.store = AgentStore("local")
        self.agent = Agent(pane_id="%4", target="w:0.0", session="w", cwd="/srv/lab", key="k4", channel=Channel.HOOK)
        self.store.agents["%4"] = self.agent
        self.desk = AnswerDesk(self.store, lambda pane: Watched(self.agent, 0) if pane == "%4" else None, lambda: self.now)
        self.channel = Held()
        self.desk.channel = self.channel  # type: ignore[assignment]
        self.rules = RuleAnswers(RuleBook(self.rules_path, self.notices.append), lambda pane: self.desk, self.store.agents.get, lambda: self.store.agents.values(), self.journal, lambda: self.now)

    def ask(self, command: str) -> bool:
        """A request for ``command`` at the pane: True when a rule answered it."""
        self.next_id += 1
        call = PendingCall(self.next_id, "%4", 0, "s", "Bash", {"command": command}, cwd="/srv/lab")
        verdict = self.rules._rule(self.agent, call, ("%4", f"req{self.next_id}"), self.rules._by_hook(self.desk, call))
        self.journal.writer.flush(force=True)
        return verdict is not None and verdict.answered

    def state(self, state: AgentState) -> None:
        before = self.agent.state
        self.agent = replace(self.agent, observation=Observation(state))
        self.store.agents["%4"] = self.agent
        self.rules.on_event(AgentChanged(self.agent, before, self.now))
        self.journal.writer.flush(force=True)

    def kinds(self, kind: str) -> list[dict]:
        return [e.payload for e in self.journal.log.query(kind=kind)]


ALLOW = 'id = "touch"\ndecision = "allow"\nhosts = ["local"]\ncommand = "touch /tmp/x_*"\nshadow = false\n'


def test_a_rule_answering_at_a_loops_pace_pauses_itself_and_says_so(tmp_path: Path):
    world = World(tmp_path, f'[[rule]]\n{ALLOW}ttl = "1h"\npause_after = "3 in 1m"\n')
    assert [world.ask(f"touch /tmp/x_{n}") for n in range(3)] == [True, True, True]
    assert world.ask("touch /tmp/x_4") is False  # the third answer in a minute paused it
    (pause,) = world.kinds("rules_pause")
    assert pause["rule"] == "touch" and pause["on"] is True and "3 times in 1 min" in pause["why"]
    assert any("rule touch paused" in n for n in world.notices)


def test_answers_spread_out_do_not_pause_it_and_the_count_outlives_a_restart(tmp_path: Path):
    world = World(tmp_path, f'[[rule]]\n{ALLOW}ttl = "1h"\npause_after = "3 in 1m"\n')
    assert world.ask("touch /tmp/x_1") and world.ask("touch /tmp/x_2")
    world.now += 61
    assert world.ask("touch /tmp/x_3") and world.ask("touch /tmp/x_4")  # two in this minute: still answering
    world.start()  # a restart: the last minute's answers are read back from the event log
    assert world.ask("touch /tmp/x_5") is True
    assert world.kinds("rules_pause") and world.ask("touch /tmp/x_6") is False


def test_every_live_rule_has_a_pace_it_pauses_at_unless_it_says_otherwise():
    (rule,) = parse_rules(f'[[rule]]\n{ALLOW}ttl = "1h"\n', tools=vocabulary()).rules
    assert (rule.burst, rule.burst_window) == DEFAULT_BURST
    refused = parse_rules(f'[[rule]]\n{ALLOW}ttl = "1h"\npause_after = "often"\n', tools=vocabulary())
    assert refused.rules == () and "pause_after must be a count and a span" in refused.errors[0]


def test_until_idle_ends_the_rule_for_an_agent_when_its_task_does_and_a_restart_keeps_it_ended(tmp_path: Path):
    world = World(tmp_path, f'[[rule]]\n{ALLOW}until = "idle"\n')
    world.rules._tick()  # the service dates the rule as it reads the file
    world.state(AgentState.WORKING)
    assert world.ask("touch /tmp/x_1") is True
    world.state(AgentState.PERMISSION)
    assert world.ask("touch /tmp/x_2") is True
    world.state(AgentState.IDLE)  # the task is over
    assert world.ask("touch /tmp/x_3") is False
    (done,) = world.kinds("rule_done")
    assert done["rule"] == "touch"
    world.start()
    world.state(AgentState.WORKING)
    assert world.ask("touch /tmp/x_4") is False  # ended for this agent, whatever it does next


def test_until_idle_stands_for_a_ttl_of_a_day_at_most_and_nothing_else_is_an_until():
    (rule,) = parse_rules(f'[[rule]]\n{ALLOW}until = "idle"\n', tools=vocabulary()).rules
    assert rule.until_idle and rule.ttl == UNTIL_IDLE_CAP  # no ttl given: a day at most
    refused = parse_rules(f'[[rule]]\n{ALLOW}until = "done"\n', tools=vocabulary())
    assert refused.rules == () and 'until must be "idle"' in refused.errors[0]


def test_until_idle_is_per_agent_and_a_first_idle_does_not_end_it(tmp_path: Path):
    world = World(tmp_path, f'[[rule]]\n{ALLOW}until = "idle"\n')
    world.rules._tick()
    world.state(AgentState.IDLE)  # idle when the rule came: no task of its ended yet
    world.state(AgentState.WORKING)
    assert world.ask("touch /tmp/x_1") is True
    assert world.kinds("rule_done") == []


@pytest.mark.parametrize("action", ["revoke", "pause"])
def test_a_revoked_or_paused_rule_answers_nothing_and_the_list_of_answers_says_its_state(tmp_path: Path, action: str):
    world = World(tmp_path, f'[[rule]]\n{ALLOW}ttl = "1h"\n')
    assert world.ask("touch /tmp/x_1") is True
    said = world.rules.control(action, "touch")
    world.journal.writer.flush(force=True)
    assert said == ("rule touch: revoked" if action == "revoke" else "rule touch: paused")
    assert world.ask("touch /tmp/x_2") is False
    (answered,) = world.rules.recent(0.0)
    assert (answered["rule"], answered["detail"], answered["state"]) == ("touch", "touch /tmp/x_1", "revoked" if action == "revoke" else "paused")
    if action == "revoke":
        world.rules.control("resume")  # a resume ends pauses, never a revocation
        world.journal.writer.flush(force=True)
        assert world.ask("touch /tmp/x_3") is False
        world.rules_path.write_text(f'[[rule]]\n{ALLOW}ttl = "2h"\n')  # edited: another rule, answering again
        os.chmod(world.rules_path, 0o600)
        assert world.ask("touch /tmp/x_4") is True
    with pytest.raises(ValueError, match="no rule 'nope'"):
        world.rules.control("revoke", "nope")
    with pytest.raises(ValueError, match="^revoke names one rule$"):  # the page and the command line both ask here
        world.rules.control("revoke", "")


def test_an_agent_outside_the_rules_project_does_not_end_it(tmp_path: Path):
    world = World(tmp_path, f'[[rule]]\n{ALLOW}project = "{tmp_path}"\nuntil = "idle"\n')
    world.rules._tick()
    world.state(AgentState.WORKING)  # an agent in /srv/lab, not in the rule's project
    world.state(AgentState.IDLE)
    assert world.kinds("rule_done") == []


# -- a dialog no hook holds: the keys, when the transcript shows the dialog's call whole -------------------------


def keys_world(tmp_path: Path, shown: str, calls: list[str], cwd: str = "/srv/lab", rule: str = "") -> tuple[World, list]:
    """%4 shows a Bash dialog for ``shown``; Claude's transcript has ``calls`` waiting; the keys' answers are recorded, not sent."""
    from headspace_tui.detect.turns import Turn
    from headspace_tui.model import Option, Prompt

    world = World(tmp_path, f'[[rule]]\n{ALLOW}ttl = "1h"\n{rule}')
    prompt = Prompt(kind="permission", tool="Bash", detail=shown, options=(Option("1", "Yes"), Option("3", "No")), whole=True)
    world.agent = replace(world.agent, channel=Channel.NONE, observation=Observation(AgentState.PERMISSION, prompt=prompt, request="f1~1"))
    world.store.agents["%4"] = world.agent
    uses = tuple(("Bash", {"command": c}) for c in calls)
    world.journal.evidence.turns("k4", [Turn("agent", tool_uses=uses, tool_use_ids=tuple(f"t{n}" for n in range(len(calls))), cwd=cwd)])
    sent: list = []
    world.rules.answer_keys = lambda agent, seen, allow, rule: sent.append((agent.pane_id, seen.request, allow, rule)) or ""
    return world, sent


def test_a_dialog_whose_call_the_transcript_shows_whole_is_answered_by_keys_for_that_appearance(tmp_path: Path):
    world, sent = keys_world(tmp_path, "touch /tmp/x_1", ["touch /tmp/x_1"])
    verdict = world.rules.consider_keys("%4")
    world.journal.writer.flush(force=True)
    assert verdict is not None and verdict.answered and sent == [("%4", "f1~1", True, "touch")]
    (audit,) = world.kinds("rule_answer")
    assert (audit["via"], audit["detail"]) == ("keys", "touch /tmp/x_1")
    assert world.rules.consider_keys("%4") is None and len(sent) == 1  # once per appearance


@pytest.mark.parametrize(
    ("shown", "calls"),
    [
        ("touch /tmp/x_1", ["touch /tmp/x_1; rm -rf ~"]),  # the screen cut the command short: not the call
        ("touch /tmp/x_1", []),  # no call read: nothing known whole
        ("touch /tmp/x_1", ["touch /tmp/x_1", "touch  /tmp/x_1 "]),  # two calls the dialog could be
    ],
)
def test_a_dialog_not_known_whole_gets_no_keys(tmp_path: Path, shown: str, calls: list[str]):
    world, sent = keys_world(tmp_path, shown, calls)
    assert world.rules.consider_keys("%4", tries=1) is None and sent == []


def test_a_dialog_the_hook_holds_is_never_the_keys(tmp_path: Path):
    world, sent = keys_world(tmp_path, "touch /tmp/x_1", ["touch /tmp/x_1"])
    world.agent = replace(world.agent, channel=Channel.HOOK)
    world.store.agents["%4"] = world.agent
    assert world.rules.consider_keys("%4") is None and sent == []


def test_a_rules_answer_by_keys_says_so_in_its_audit():
    from headspace_tui.answering.policy import RULE_VIA, Intent, IntentKind

    assert Intent(IntentKind.APPROVE, via=f"{RULE_VIA}lab-touch").audit_suffix() == " ✓ by rule lab-touch"
    assert Intent(IntentKind.DENY, via=f"{RULE_VIA}no-rm").audit_suffix() == " ✗ by rule no-rm"
    assert Intent(IntentKind.APPROVE, via="web 192.0.2.7").audit_suffix() == " (via web 192.0.2.7)"


def test_the_keys_judge_the_call_in_the_folder_claude_is_in_and_a_call_that_does_not_say_is_none(tmp_path: Path):
    """Claude's shell keeps a ``cd``: a rule for one project never answers a command run after a ``cd`` out of it."""
    moved, sent = keys_world(tmp_path / "moved", "touch /tmp/x_1", ["touch /tmp/x_1"], cwd="/srv/other", rule='project = "/srv/lab"\n')
    assert moved.rules.consider_keys("%4", tries=1).decision is None and sent == []
    unsaid, sent = keys_world(tmp_path / "unsaid", "touch /tmp/x_1", ["touch /tmp/x_1"], cwd="")
    assert unsaid.rules.consider_keys("%4", tries=1) is None and sent == []
    at_home, sent = keys_world(tmp_path / "home", "touch /tmp/x_1", ["touch /tmp/x_1"], rule='project = "/srv/lab"\n')
    assert at_home.rules.consider_keys("%4").answered and len(sent) == 1


def test_an_agent_that_goes_leaves_nothing_behind(tmp_path: Path):
    """Agents come and go all day: the rules keep nothing of one that is gone."""
    from headspace_tui.events import AgentRemoved

    world = World(tmp_path, f'[[rule]]\n{ALLOW}until = "idle"\n')
    world.rules._tick()  # the service reads the rules file as it starts
    world.state(AgentState.WORKING)
    assert world.rules.state.at_work("k4")
    world.rules.on_event(AgentRemoved("%4", "k4"))
    assert not world.rules.state.at_work("k4") and world.rules.state.folded.at_work == set()
