"""Answering a multi-select question by keys: a digit toggles one box, ``submit`` sends the ticks on.

Measured on Claude Code 2.1.330 and 2.1.250 (the corpus records each screen:
``question_multi_ticked``, ``question_several_multi_ticked``,
``question_multi_review``, ``question_several_review``):

* at a multi-select question a digit toggles that option's box ("[ ]" ↔
  "[✔]") and nothing else: the question stays.  So a toggle is confirmed by
  the box changing, never by the question going (waiting for that was the
  "not delivered … still shows question after 5s" of issue 37);
* → goes to the dialog's next tab: the next question, or after the last one
  the "Submit" tab, Claude's "Review your answers" page, which lists every
  answer; its "1. Submit answers" hands them to Claude (the tool result reads
  ``"Which features should ship first?"="Auth, Search"``);
* nothing is submitted by a digit or by Enter at the question itself (Enter
  toggles the box under the cursor).

So ``submit`` at a multi-select page is →, then, where that page was the
dialog's last, "Submit answers" on the review page once it lists exactly the
ticks; at the review page itself it is "Submit answers".  An option intent
naming several options ("1,3") first toggles every box whose state differs,
so exactly those are ticked, then submits.  Each key goes only once the one
before it is seen to have landed on the same dialog; otherwise the rest is not
sent and the outcome says where it stopped.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ..detect.family import Family
from ..model import AgentState, Observation, Option, Prompt
from .pane_io import STEP_TIMEOUT, ActionError, KeyStroke, Outcome, PaneIO, settled_read
from .policy import REACTION_TIME, Intent, IntentKind, unfit

# The key that moves a question dialog to its next tab (the next question, or the review page).
NEXT_TAB = "Right"
# Screens that prove nothing: a frame between two drawings, or a layout not understood.
_NO_PROOF = (AgentState.UNKNOWN, AgentState.STARTING)


@dataclass(frozen=True)
class Step:
    """One key of a multi-select answer and what must show after it."""

    kind: str  # "toggle" (a box), "next" (→: the next page), "submit" (the review's "Submit answers")
    key: str = ""  # the key to press; "" for "submit": found by its label once the review page shows
    option: str = ""  # the box a toggle is for


def chosen(intent: Intent) -> tuple[str, ...]:
    """The option keys an option intent names: "1,3" → ("1", "3"), each once, in the order given."""
    return tuple(dict.fromkeys(part.strip() for part in intent.option.split(",") if part.strip()))


def handles(now: Observation, intent: Intent) -> bool:
    """Is ``intent`` a multi-select matter (a submit, several options, a box to toggle)?  Otherwise keys.py answers it with one key."""
    if intent.kind is IntentKind.SUBMIT:
        return True
    if intent.kind is not IntentKind.OPTION:
        return False
    return "," in intent.option or _box(now.prompt, intent.option) is not None


def _box(prompt: Prompt | None, key: str) -> Option | None:
    """The multi-select option ``key`` picks, when it has a box to toggle."""
    if prompt is None or not prompt.multi_select:
        return None
    return next((o for o in prompt.options if o.key == key and o.ticked is not None), None)


def plan(now: Observation, intent: Intent) -> list[Step]:
    """The keys that carry out ``intent`` at the multi-select question (or review page) ``now``; raise when they don't fit."""
    refusal = unfit(intent.kind, now.state)
    prompt = now.prompt
    if refusal or prompt is None or not prompt.options:
        raise ActionError(refusal or f"the pane shows no question's options (it is {now.state.value}); nothing sent")
    if prompt.review:
        if intent.kind is IntentKind.SUBMIT:
            return [Step("submit")]
        raise ActionError("this is Claude's review of every answer: pick 'Submit answers' or 'Cancel' by its number; nothing sent")
    if not prompt.multi_select:
        if intent.kind is IntentKind.SUBMIT:
            raise ActionError("nothing to submit: a single-choice question is answered by its option's digit; nothing sent")
        raise ActionError("several options go only to a multi-select question; pick one by its number; nothing sent")
    boxes = {o.key: o for o in prompt.options if o.ticked is not None}
    if intent.kind is IntentKind.OPTION and "," not in intent.option:
        return [Step("toggle", intent.option, intent.option)]
    steps: list[Step] = []
    ticked = prompt.ticked
    if intent.kind is IntentKind.OPTION:
        if prompt.hidden_options or prompt.more_below:
            # "Exactly these" needs every box in view: one ticked out of view would go too.
            raise ActionError("some of its options are out of view (Claude scrolled the dialog): tick them one by one; nothing sent")
        wanted = chosen(intent)
        unknown = [key for key in wanted if key not in boxes]
        if unknown:
            raise ActionError(f"no option {', '.join(unknown)} to tick here (boxes: {', '.join(boxes) or 'none'}); nothing sent")
        steps = [Step("toggle", key, key) for key, option in boxes.items() if bool(option.ticked) != (key in wanted)]
        ticked = wanted
    if not ticked:
        raise ActionError("nothing ticked: tick options with their digits first; nothing sent")
    steps.append(Step("next", NEXT_TAB))
    if prompt.last_page:
        steps.append(Step("submit"))
    return steps


def strokes(steps: list[Step]) -> list[KeyStroke]:
    """The keys of ``steps`` as keys.py describes them ("submit": the review's first option, as drawn on every version)."""
    return [KeyStroke((step.key or "1",)) for step in steps]


def labels(prompt: Prompt, keys: tuple[str, ...]) -> list[str]:
    """The labels of the options ``keys`` pick, in screen order."""
    return [o.label for o in prompt.options if o.key in keys]


def describe(now: Observation, intent: Intent, steps: list[Step]) -> str:
    """What the answer does, for the user and the audit."""
    prompt = now.prompt
    assert prompt is not None
    if prompt.review:
        return "question review → submitted: " + "; ".join(f"{q} → {a}" for q, a in prompt.answers)
    part = f" ({prompt.question_index}/{prompt.question_count})" if prompt.question_count > 1 else ""
    what = f"question{part} {prompt.title!r}"
    if steps and steps[0].kind == "toggle" and len(steps) == 1:
        box = _box(prompt, steps[0].option)
        assert box is not None
        return f"{what} → {'unticked' if box.ticked else 'ticked'} {box.key}. {box.label}"
    ticked = chosen(intent) if intent.kind is IntentKind.OPTION else prompt.ticked
    shown = ", ".join(labels(prompt, ticked))
    return f"{what} → {shown}" + ("" if prompt.last_page else f"; on to question {prompt.question_index + 1}/{prompt.question_count}")


async def send(io: PaneIO, pane_id: str, seen: Observation, now: Observation, intent: Intent, command: str, family: Family, what: str, timeout: float) -> Outcome:
    """Carry out the plan for ``intent`` on the question ``now`` (the user saw ``seen``), each key seen to land before the next.

    A toggle or a submit acts on the boxes as the user saw them: ticked in
    the pane since, a digit would untick what the user meant to tick, and a
    submit would send ticks the user never saw.  Then nothing is sent.
    (Several options name the boxes wanted, whatever they show now.)
    """
    steps = plan(now, intent)
    prompt = now.prompt
    assert prompt is not None
    as_seen = seen.prompt.ticked if seen.prompt is not None else ()
    if not prompt.review and "," not in intent.option and prompt.ticked != as_seen:
        shown = ", ".join(labels(prompt, prompt.ticked)) or "nothing"
        raise ActionError(f"the boxes in {pane_id} changed since you looked (now ticked: {shown}); nothing sent")
    # The labels the review page must list for this question: the ticks as they will be.
    wanted = labels(prompt, chosen(intent) if intent.kind is IntentKind.OPTION else prompt.ticked) if not prompt.review else []
    page = now
    sent_any = False
    for step in steps:
        if step.kind == "toggle":
            before = _box(page.prompt, step.option)
            assert before is not None
            await io.send_keys(pane_id, step.key)
            sent_any = True
            page, landed = await _watch(io, pane_id, command, family, page, partial(_toggled, before=before), timeout if len(steps) == 1 else STEP_TIMEOUT)
            if not landed:
                return Outcome(False, f"not delivered: option {step.option}'s box did not change in {pane_id}" + _stopped(steps, step), page, what)
        elif step.kind == "next":
            await io.send_keys(pane_id, step.key)
            sent_any = True
            page, landed = await _watch(io, pane_id, command, family, page, partial(_next_page, page), STEP_TIMEOUT)
            if not landed:
                return Outcome(False, f"not delivered: the dialog in {pane_id} did not move on to its next page" + _stopped(steps, step), page, what)
            if page.prompt is not None and not page.prompt.review:
                return Outcome(True, f"{what}: sent; {family.label} shows question {page.prompt.question_index}/{page.prompt.question_count}", page, what, more=True)
        else:
            page, refusal = await _review_ready(io, pane_id, command, family, page, prompt.title, wanted)
            if refusal:
                if sent_any:
                    return Outcome(False, f"not submitted: {refusal} (the review page is open: see the pane)", page, what, more=True)
                raise ActionError(refusal)
            prompt = page.prompt
            assert prompt is not None
            submit = prompt.option_for("submit")
            assert submit is not None  # _review_ready checked it
            await io.send_keys(pane_id, submit.key)
            page, landed = await _watch(io, pane_id, command, family, page, partial(_gone, page), timeout)
            if not landed:
                return Outcome(False, f"not delivered: {pane_id} still shows the review of its answers after {timeout:.0f}s", page, what)
            return Outcome(True, f"{what}: submitted; {family.label} moved on ({page.state.value})", page, what)
    return Outcome(True, f"{what}: sent", page, what, more=True)


def _stopped(steps: list[Step], step: Step) -> str:
    rest = steps[steps.index(step) + 1 :]
    return "; the rest was not sent" if rest else ""


async def _watch(io: PaneIO, pane_id: str, command: str, family: Family, page: Observation, done: Callable[[Observation], bool], timeout: float) -> tuple[Observation, bool]:
    """Read the pane until ``done`` holds (True), or time runs out (False): the last reading with it."""
    deadline = time.monotonic() + timeout
    now = page
    while time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        now = family.classify(await io.capture(pane_id, ansi=True), command=command)
        if now.state not in _NO_PROOF and done(now):
            return now, True
    return now, False


def _same_question(page: Observation, now: Observation) -> bool:
    a, b = page.prompt, now.prompt
    return now.state is AgentState.QUESTION and a is not None and b is not None and a.fingerprint == b.fingerprint


def _toggled(now: Observation, before: Option) -> bool:
    """The same question with ``before``'s box the other way round."""
    box = _box(now.prompt, before.key)
    return box is not None and box.label == before.label and box.ticked is not before.ticked


def _next_page(page: Observation, now: Observation) -> bool:
    """The dialog's next tab: the next question of the same dialog, or Claude's review page."""
    return now.state is AgentState.QUESTION and page.prompt is not None and now.prompt is not None and now.prompt.follows(page.prompt)


def _gone(review: Observation, now: Observation) -> bool:
    """The review page went: Claude took the answers (working, its input box, whatever follows)."""
    return not _same_question(review, now)


def _squeeze(text: str) -> str:
    return " ".join(text.split())


async def _review_ready(io: PaneIO, pane_id: str, command: str, family: Family, page: Observation, question: str, wanted: list[str]) -> tuple[Observation, str]:
    """The review page, held still and old enough to take a key, listing ``wanted`` for ``question``: (it, "") or (the reading, why not)."""
    if not page.prompt or not page.prompt.review:
        return page, "the review page is not on screen"
    # Claude drops a key sent within ~0.1 s of a menu being drawn: give the page a reaction time.
    await asyncio.sleep(REACTION_TIME)
    settled, _ = await settled_read(io, pane_id, command, family)
    if settled.prompt is None or not settled.prompt.review or settled.prompt.fingerprint != page.prompt.fingerprint:
        return settled, f"the review page in {pane_id} changed before 'Submit answers'; not submitted"
    if settled.prompt.option_for("submit") is None:
        return settled, "the review page offers no 'Submit answers'; not submitted"
    if wanted:
        answer = {_squeeze(q): a for q, a in settled.prompt.answers}.get(_squeeze(question))
        if answer is None or sorted(answer.split(", ")) != sorted(", ".join(wanted).split(", ")):
            return settled, f"the review page does not list {', '.join(wanted)} for {question!r}; not submitted"
    return settled, ""
