"""When an answer leaves the agent to the others (the inbox moves on), read off real recorded screens; and which keys commit it."""

from __future__ import annotations

import asyncio

import pytest

from headspace_tui.answering.answerer import _Watched, answers_dialog, moves_on
from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.detect.claude import classify_capture
from tests.harness.record import DEFAULT_OUT


def screen(name: str, size: str = "120x40"):
    return classify_capture((DEFAULT_OUT / "alt" / size / f"{name}.ansi").read_text(), command="claude")


@pytest.mark.parametrize(
    ("name", "intent", "moves"),
    [
        ("permission_bash", Intent(IntentKind.APPROVE), True),
        ("permission_bash", Intent(IntentKind.DENY), True),
        ("plan_exit_short", Intent(IntentKind.OPTION, option="1"), True),
        ("question_two_options", Intent(IntentKind.OPTION, option="2"), True),
        ("input_plain_question", Intent(IntentKind.TEXT, text="yes"), True),
        # Between the parts of one dialog: question 1/2 → 2/2 → its Submit page; a multi-select waits for more.
        ("question_several_first", Intent(IntentKind.OPTION, option="1"), False),
        ("question_several_second", Intent(IntentKind.OPTION, option="2"), False),
        ("question_multi_select", Intent(IntentKind.OPTION, option="1"), False),
        ("question_several_first", Intent(IntentKind.TEXT, text="MySQL"), False),
        ("working_streaming", Intent(IntentKind.INTERRUPT), False),  # the user is still with it
    ],
)
def test_an_answer_moves_on_unless_the_same_dialog_goes_on(name, intent, moves):
    seen = screen(name)
    assert seen.prompt is not None or intent.kind in (IntentKind.INTERRUPT, IntentKind.TEXT)
    assert moves_on(intent, seen) is moves


def test_only_answers_to_a_dialog_wait_for_claudes_word():
    assert answers_dialog(Intent(IntentKind.APPROVE), screen("permission_bash"))
    assert answers_dialog(Intent(IntentKind.TEXT, text="MySQL"), screen("question_two_options"))
    assert not answers_dialog(Intent(IntentKind.NUDGE, text="continue"), screen("idle_finished"))
    assert not answers_dialog(Intent(IntentKind.TEXT, text="yes"), screen("input_plain_question"))
    assert not answers_dialog(Intent(IntentKind.INTERRUPT), screen("working_streaming"))


class Keys:
    """Stands in for tmux (a pure test of which key commits an answer: the live tests send real keys)."""

    def __init__(self) -> None:
        self.sent: list[tuple] = []

    async def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None:
        self.sent.append((keys, literal))


@pytest.mark.parametrize(
    ("intent", "strokes", "commits_at"),
    [
        (Intent(IntentKind.APPROVE), [(("1",), False)], 0),
        (Intent(IntentKind.INTERRUPT), [(("Escape",), False), (("Escape",), False)], 0),
        (Intent(IntentKind.NUDGE, text="continue"), [(("continue",), True), (("Enter",), False)], 1),
        # A reply into a question's field: the digit opens the field, the text goes in, Enter answers.
        (Intent(IntentKind.TEXT, text="Enter"), [(("4",), False), (("Enter",), True), (("Enter",), False)], 2),
    ],
)
def test_the_key_that_commits_an_answer_is_its_last_word(intent, strokes, commits_at):
    went: list[int] = []
    keys = Keys()
    ticks = iter(range(100, 200))
    watched = _Watched(keys, intent, lambda: went.append(len(keys.sent)), lambda: float(next(ticks)))  # type: ignore[arg-type]

    async def send() -> None:
        for stroke, literal in strokes:
            await watched.send_keys("%1", *stroke, literal=literal)

    assert not watched.reached and watched.first_key_at == 0.0
    asyncio.run(send())
    assert watched.reached and watched.went
    assert went == [commits_at + 1]  # once, right after that stroke
    # The audit's "began": when the first key went (a call read before it is the one they answered), not a later key.
    assert watched.first_key_at == 100.0


class Routes:
    """The fleet's bookkeeping for one answer (no host behind it: nothing here sends)."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, str]] = []
        self.renewed: list[tuple[str, str]] = []

    def desk(self, address: str):
        return None

    def desks(self) -> list:
        return []

    def mark(self, address: str, delivery: str) -> None:
        self.marks.append((address, delivery))

    def renew(self, address: str, request: str) -> None:
        self.renewed.append((address, request))

    def refresh_soon(self, address: str) -> None:
        pass

    def server_key(self, address: str) -> str:
        return ""


def test_an_answered_agent_is_passed_by_until_its_row_shows_something_new():
    """Delivered, but Claude's status file still says it waits: a row with the answered state and no prompt of its own is not a new wait."""
    from dataclasses import replace

    from headspace_tui.answering.answerer import Answerer, Report
    from headspace_tui.model import Agent, AgentState, Observation

    answerer = Answerer(Routes(), None, clock=lambda: 0.0, confirm_timeout=5.0)  # type: ignore[arg-type]
    seen = screen("permission_bash")
    agent = Agent(pane_id="%1", target="s:0.0", session="s", observation=seen)
    answerer._sending.add("%1")  # as answer() does
    assert answerer.awaits(agent)
    answerer._finish(agent, Report("%1", "s:0.0: sent", "information", True), "", seen)
    assert not answerer.busy("%1") and answerer.awaits(agent)
    agent.observation = Observation(AgentState.PERMISSION, source="status-file")  # the status file's word, the screen not read
    assert answerer.awaits(agent)
    agent.observation = replace(seen)  # the same dialog read again
    assert answerer.awaits(agent)
    agent.observation = screen("permission_write")  # the next request: it needs you
    assert not answerer.awaits(agent)
    agent.observation = screen("working_streaming")
    assert not answerer.awaits(agent)


class Desk:
    """A host's answer desk holding one pending hook call for the pane (records what it decided)."""

    def __init__(self, call) -> None:
        self.call, self.decided, self.keys = call, [], []

    def call_for(self, pane_id: str):
        return self.call

    def decide(self, call, decision, what, rule="") -> bool:
        self.decided.append((call.id, what))
        return True

    def question_mismatch(self, pane_id: str) -> str:
        return ""

    def sending_keys(self, pane_id: str, on: bool) -> None:
        self.keys.append((pane_id, on))


@pytest.mark.parametrize(("family", "by_hook"), [("claude", True), ("codex", False)])
def test_only_a_family_with_an_answer_channel_is_answered_through_the_hook(family, by_hook):
    """Family.answer_channel decides: Claude's hook takes the answer; a family without one gets keys, even with a call waiting."""
    from headspace_tui.answering.answerer import Answerer
    from headspace_tui.detect.families import family_named
    from headspace_tui.model import Agent
    from tests.unit.test_answer_channel import call_of, payload

    assert (family_named(family).answer_channel is not None) is by_hook
    desk = Desk(call_of(payload()))
    routes = Routes()
    routes.desk = lambda address: desk  # type: ignore[method-assign]
    agent = Agent(pane_id="%3", target="s:0.0", session="s", family=family, observation=screen("permission_bash"))

    async def answer() -> str:
        answerer = Answerer(routes, None, clock=lambda: 100.0, confirm_timeout=5.0)  # type: ignore[arg-type]
        try:
            return answerer.answer(agent, Intent(IntentKind.APPROVE))
        finally:
            await answerer.close()  # nothing is sent: the task that would send or confirm is stopped

    assert asyncio.run(answer()) == ""
    assert bool(desk.decided) is by_hook
    assert desk.keys == ([] if by_hook else [("%3", True)])


def test_the_inbox_moves_on_as_soon_as_an_answer_by_keys_is_on_its_way():
    """Not once its keys went: the guarded send settles first (over a second under load), and the next y must find the next agent."""
    from headspace_tui.answering.answerer import Answerer, Report
    from headspace_tui.model import Agent

    agent = Agent(pane_id="%4", target="s:0.0", session="s", family="codex", observation=screen("permission_bash"))
    told: list[Report] = []

    async def answer(kind: IntentKind) -> str:
        answerer = Answerer(Routes(), None, clock=lambda: 100.0, confirm_timeout=5.0)  # type: ignore[arg-type]
        answerer.subscribe(told.append)
        try:
            return answerer.answer(agent, Intent(kind))
        finally:
            await answerer.close()  # the send itself never runs here: only what answer() says at once

    assert asyncio.run(answer(IntentKind.APPROVE)) == ""
    assert [(r.pane_id, r.move_on, r.final, r.delivered) for r in told] == [("%4", True, False, False)]
    # An interrupt is no answer to a dialog: nothing moves.
    told.clear()
    agent.observation = screen("working_streaming")
    assert asyncio.run(answer(IntentKind.INTERRUPT)) == ""
    assert told == []


def test_a_delivered_interrupt_is_the_rows_last_answer_and_a_nudge_is_not():
    """After x a row kept the answer before it ("… → 1. Yes") as if that were what happened last."""
    from headspace_tui.answering.answerer import Answerer, Report
    from headspace_tui.model import Agent

    rows: list[tuple[str, bool | None]] = []

    class RecordingDesk:
        def sending_keys(self, pane_id: str, on: bool) -> None:
            pass

        def record(self, agent, channel, what, call=None, **kw) -> None:
            rows.append((what, kw.get("row")))

    routes = Routes()
    routes.desk = lambda address: RecordingDesk()  # type: ignore[method-assign]
    answerer = Answerer(routes, None, clock=lambda: 100.0, confirm_timeout=5.0)  # type: ignore[arg-type]
    agent = Agent(pane_id="%5", target="s:0.0", session="s", observation=screen("working_streaming"))
    answerer._finish(agent, Report("%5", "s:0.0: interrupted", "information", True), "", agent.observation, "interrupt (Esc)", 99.0, dialog=False, interrupt=True)
    answerer._finish(agent, Report("%5", "s:0.0: nudged", "information", True), "", agent.observation, "nudge 'continue'", 99.0, dialog=False)
    answerer._finish(agent, Report("%5", "s:0.0: not delivered", "error", False), "", agent.observation, "interrupt (Esc)", 99.0, dialog=False, interrupt=True)
    assert rows == [("interrupt (Esc)", True), ("nudge 'continue'", False), ("interrupt (Esc)", False)]


def _recorded_dialog() -> list[str]:
    return (DEFAULT_OUT / "alt" / "80x24" / "permission_bash.txt").read_text().split("\n")  # plain rows: the redraw below is made in words


def test_a_redraw_of_the_dialog_alone_is_not_claudes_reaction_but_a_moved_transcript_is():
    """Seen in a parallel run: the key's own redraw (the dialog's cursor) read as "asked the same again" while Claude had not acted yet."""
    from headspace_tui.answering.keys import _history_moved

    rows = _recorded_dialog()
    shown = "\n".join(rows)
    assert any("❯ 1. Yes" in row for row in rows)
    cursor_moved = "\n".join(row.replace("❯ 1. Yes", "  1. Yes").replace("  4. No", "❯ 4. No") for row in rows)
    assert cursor_moved != shown
    assert not _history_moved(shown, cursor_moved)
    at = next(i for i, row in enumerate(rows) if "Creating a marker file" in row)
    ran = "\n".join([*rows[:at], "  ⎿  headspace-ok", *rows[at:]])  # the first call's result above the same words asked again
    assert _history_moved(shown, ran)


def test_the_guard_knows_a_reading_by_its_id_so_a_copy_from_the_wire_is_the_same_reading():
    """After a delivered answer, keys wait for a new reading: a copy of the answered one (what a client holds) is not new; a reading the store keeps is."""
    import json

    from headspace_tui.answering.answerer import Answerer, Report
    from headspace_tui.api.codec import decode, encode
    from headspace_tui.model import Agent

    answerer = Answerer(Routes(), None, clock=lambda: 100.0, confirm_timeout=5.0)  # type: ignore[arg-type]
    seen = screen("permission_bash").stamped()
    copy = decode(json.loads(json.dumps(encode(seen))))
    assert copy is not seen and copy == seen and copy.id == seen.id
    agent = Agent(pane_id="%1", target="s:0.0", session="s", observation=copy, prompt_since=0.0)
    answerer._sending.add("%1")
    answerer._finish(agent, Report("%1", "s:0.0: sent", "information", True), "", seen)
    assert answerer.refusal(agent) == "waiting to see what the last key did"  # the answered reading, as a copy: still waiting
    agent.observation = seen.stamped()  # the same screen read again and kept: a new reading
    assert seen.stamped() == seen and agent.observation.id != seen.id
    assert answerer.refusal(agent) == ""


def test_a_questions_cursor_moving_is_not_its_transcript_moving():
    """A question dialog draws a second rule below its options (before "Chat about this"): the top is the one above them."""
    from headspace_tui.answering.keys import _history_moved

    rows = (DEFAULT_OUT / "alt" / "80x24" / "question_four_options.txt").read_text().split("\n")
    shown = "\n".join(rows)
    first = next(i for i, row in enumerate(rows) if row.lstrip().startswith("❯ 1."))
    second = next(i for i, row in enumerate(rows) if i > first and row.lstrip().startswith("2."))
    moved = {first: rows[first].replace("❯ 1.", "  1.", 1), second: rows[second].replace("  2.", "❯ 2.", 1)}
    cursor_moved = "\n".join(moved.get(i, row) for i, row in enumerate(rows))
    assert cursor_moved != shown
    assert not _history_moved(shown, cursor_moved)
    at = next(i for i, row in enumerate(rows) if "pick a license" in row)
    assert _history_moved(shown, "\n".join([*rows[: at + 1], "  ⎿  an earlier answer", *rows[at + 1 :]]))
