"""One request, one answer: which appearance of a prompt a reading shows (service/records/appearances.py), and what the answerer makes of it."""

from __future__ import annotations

from dataclasses import replace

from headspace_tui.answering.answerer import ALREADY_ANSWERED, Answerer, Report
from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.model import Agent, AgentState, Observation, Prompt
from headspace_tui.service.records.appearances import Appearances
from headspace_tui.service.records.store import AgentStore
from headspace_tui.tmux.server import PaneRecord

PUSH = Observation(AgentState.PERMISSION, Prompt(kind="permission", tool="Bash", detail="git push", fingerprint="f-push"))
RM = Observation(AgentState.PERMISSION, Prompt(kind="permission", tool="Bash", detail="rm x", fingerprint="f-rm"))
WORKING = Observation(AgentState.WORKING)
UNSURE = Observation(AgentState.UNKNOWN)


def test_the_same_dialog_read_again_is_one_appearance():
    seen = Appearances(run="r")
    first = seen.see("%1", PUSH)
    assert first == "f-push~r1"
    assert seen.see("%1", PUSH) == first
    assert seen.see("%1", UNSURE) == ""  # a frame between two drawings ends nothing
    assert seen.see("%1", PUSH) == first


def test_the_same_words_after_the_dialog_left_are_a_new_request():
    seen = Appearances(run="r")
    first = seen.see("%1", PUSH)
    assert seen.see("%1", WORKING) == ""
    second = seen.see("%1", PUSH)
    assert second != first and second.startswith("f-push~")


def test_other_words_are_a_new_request_and_panes_do_not_share_one():
    seen = Appearances(run="r")
    assert seen.see("%1", PUSH) != seen.see("%1", RM)
    assert seen.see("%2", PUSH) != seen.current("%1")


def test_an_answered_appearance_is_followed_by_a_new_one_even_unseen_in_between():
    """The answer's confirmation saw the pane move on; the monitor may have missed it: the words a later capture shows are asked anew."""
    seen = Appearances(run="r")
    first = seen.see("%1", PUSH, captured=1.0)
    seen.renew("%1", "f-push~other", 10.0)  # another appearance's answer: nothing to do with this one
    assert seen.see("%1", PUSH, captured=11.0) == first
    seen.renew("%1", first, 10.0)
    assert seen.see("%1", PUSH, captured=9.5) == first  # a capture begun before the answer ended shows the answered dialog
    assert seen.see("%1", PUSH) == first  # a hook's event fused with the last capture is no new capture either
    second = seen.see("%1", PUSH, captured=10.5)
    assert second != first
    assert seen.see("%1", PUSH, captured=12.0) == second  # and that one holds until it too is answered


def test_a_waiting_state_read_without_its_prompt_keeps_the_appearance():
    """Claude's status file says "waiting" while a frame cannot be read: the dialog is still the one shown."""
    seen = Appearances(run="r")
    first = seen.see("%1", PUSH)
    assert seen.see("%1", Observation(AgentState.PERMISSION, source="status-file")) == ""
    assert seen.see("%1", PUSH) == first
    assert seen.see("%1", Observation(AgentState.QUESTION, source="status-file")) == ""  # another waiting state: it left
    assert seen.see("%1", PUSH) != first


def test_another_hook_call_holding_the_dialog_is_another_request():
    seen = Appearances(run="r")
    first = seen.see("%1", PUSH)
    assert not seen.held_by("%1", 7)  # the hook arrived after the screen drew it: the same request
    assert seen.current("%1") == first
    assert not seen.held_by("%1", 7)
    assert seen.held_by("%1", 8)  # Claude asked again, with the same words
    assert seen.current("%1") not in ("", first)


def test_two_runs_never_name_the_same_appearance():
    assert Appearances().see("%1", PUSH) != Appearances().see("%1", PUSH)


RECORD = PaneRecord(
    pane_id="%1",
    session_id="$1",
    session_name="s",
    window_index=0,
    pane_index=0,
    target="s:0.0",
    pid=10,
    current_command="claude",
    cwd="/w",
    width=80,
    height=24,
    alternate_on=False,
    in_mode=False,
    title="",
    dead=False,
    dead_status=None,
)


def test_the_store_dates_and_tells_a_new_appearance_of_the_same_words():
    store = AgentStore()
    told: list[str] = []
    store.subscribe(lambda event: told.append(event.agent.observation.request))
    agent = store.observed(RECORD, "k", PUSH, 100.0, agent_pid=11)
    first = agent.observation.request
    assert first.startswith("f-push~") and agent.prompt_since == 100.0
    store.observed(RECORD, "k", PUSH, 101.0, agent_pid=11)
    assert agent.observation.request == first and agent.prompt_since == 100.0 and told == [first]
    store.renew("%1", first, 101.5)
    store.observed(RECORD, "k", PUSH, 101.6, agent_pid=11, captured=101.4)  # begun before the answer ended: the same
    assert agent.observation.request == first
    store.observed(RECORD, "k", PUSH, 102.0, agent_pid=11, captured=101.8)
    assert agent.observation.request != first and agent.prompt_since == 102.0
    assert told == [first, agent.observation.request]  # the row is told: its answers now name the new one
    before = agent.observation.request
    store.channel("%1", agent.channel, 103.0, call=5)
    assert agent.observation.request == before
    store.channel("%1", agent.channel, 104.0, call=6)
    assert agent.observation.request != before and agent.prompt_since == 104.0


class _Routes:
    def __init__(self) -> None:
        self.renewed: list[tuple[str, str]] = []

    def desk(self, address):
        return None

    def desks(self):
        return []

    def mark(self, address, delivery):
        pass

    def renew(self, address, request):
        self.renewed.append((address, request))

    def refresh_soon(self, address):
        pass

    def server_key(self, address):
        return ""


def _agent(observation: Observation) -> Agent:
    return Agent(pane_id="%1", target="s:0.0", session="s", observation=observation, prompt_since=0.0)


def test_a_late_answer_to_an_answered_request_is_refused_at_the_next_one_with_the_same_words():
    """The stale page: its tap names the first appearance; the agent shows the second, same words."""
    routes = _Routes()
    answerer = Answerer(routes, None, clock=lambda: 100.0, confirm_timeout=5.0)  # type: ignore[arg-type]
    first = replace(PUSH, request="f-push~r1")
    agent = _agent(first)
    assert answerer.stale(agent, "f-push~r1") == ""
    answerer._spend("%1", "f-push~r1")  # what an answer that went does (its keys reached the pane, or the hook took it)
    assert answerer.stale(agent, "f-push~r1") == ALREADY_ANSWERED  # still on screen: nothing new yet
    agent.observation = replace(PUSH, request="f-push~r2")
    assert answerer.stale(agent, "f-push~r1") == ALREADY_ANSWERED + "; this is a new one"
    assert answerer.stale(agent, "f-push~r2") == ""
    assert answerer.refusal(agent, request="f-push~r1").startswith(ALREADY_ANSWERED)
    # An answer handed the observation it was drawn for (a reply box, a widening option) is judged the same way.
    assert answerer.answer(agent, Intent(IntentKind.APPROVE), first).startswith(ALREADY_ANSWERED)


def test_an_answer_drawn_for_no_prompt_or_another_prompt_is_refused():
    answerer = Answerer(_Routes(), None, clock=lambda: 100.0, confirm_timeout=5.0)  # type: ignore[arg-type]
    agent = _agent(replace(RM, request="f-rm~r3"))
    assert "was not shown" in answerer.stale(agent, "")
    assert answerer.stale(agent, "f-push~r1").startswith("the prompt changed since it was shown")
    agent.observation = WORKING
    agent.since = 60.0  # working since then: the request ended 40 s before the answer came
    assert answerer.stale(agent, "f-rm~r3") == "the agent stopped waiting for this answer 40 s ago; it is now working"
    agent.since = 0.0  # when is not known: not said
    assert answerer.stale(agent, "f-rm~r3") == "the agent stopped waiting for this answer; it is now working"
    assert answerer.stale(agent, "") == ""


def test_the_end_of_an_answer_that_went_spends_its_request_and_renews_the_pane():
    routes = _Routes()
    answerer = Answerer(routes, None, clock=lambda: 100.0, confirm_timeout=5.0)  # type: ignore[arg-type]
    agent = _agent(replace(PUSH, request="f-push~r1"))
    answerer._finish(agent, Report("%1", "s:0.0: approved", "information", True), "", agent.observation, "Bash: git push → 1. Yes", 99.0, request="f-push~r1")
    assert routes.renewed == [("%1", "f-push~r1")]
    assert answerer.stale(agent, "f-push~r1") == ALREADY_ANSWERED
    # An answer that never reached the pane spends nothing.
    answerer._finish(agent, Report("%1", "s:0.0: not sent", "warning", False), "not sent")
    assert routes.renewed == [("%1", "f-push~r1")]


def test_a_gone_pane_takes_its_answered_requests_with_it():
    """Pane ids come and go all day: what was answered in one is not kept after it."""
    answerer = Answerer(_Routes(), None, clock=lambda: 100.0, confirm_timeout=5.0)  # type: ignore[arg-type]
    answerer._spend("%1", "f-push~r1")
    assert "%1" in answerer._spent
    answerer.forget("%1")
    assert answerer._spent == {}
