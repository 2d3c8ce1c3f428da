"""Answering an agent by keys without ever typing into the wrong prompt.

Keystrokes are dangerous: a digit typed into Claude's input box becomes part
of a message, a "y" sent to a pane whose dialog already changed approves
something the user never saw.  So every answer by keys goes through one
guarded path:

1. the pane is addressed by its id (``%N``) only, the one the user looked at,
   and one send at a time goes to it (``pane_lock``);
2. right before sending, the pane is re-read by its agent family's reader
   (``detect/families.py``): not in copy mode, the agent still
   running, and the prompt still has the fingerprint the user saw, on a
   screen that has held still (``settled_read``);
3. the keys are derived from the prompt as it is *now* (``No`` found by its
   label, ``y``'s option by ``detect/approval.py``, digits only for a
   numbered menu, text sent literally and Enter separately), only where
   ``policy.FITS`` says the answer fits, and a line is typed only into an
   empty input box (``draft_refusal``);
4. afterwards the pane is watched until the agent reacted (working, its input
   box, the next prompt); otherwise the result says "not delivered".

``plan_keys`` is pure and tested on the corpus; ``send_guarded`` does the
I/O, as a coroutine on the caller's loop (the app's, or ``asyncio.run`` in
the CLI): its waits are ``asyncio.sleep``, so nothing blocks while it watches.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..detect.approval import Approval, approval
from ..detect.claude.screen import RULE as DIALOG_TOP  # a rule, or a rounded box's edge (2.0 dialogs)
from ..detect.family import Family
from ..detect.screen_text import strip_sgr
from ..model import AgentState, Observation, Option, Prompt
from ..shared.paths import runtime_dir
from ..shared.safe_files import is_private_dir
from . import multi
from .pane_io import SETTLE, STEP_TIMEOUT, STILL_WITHIN, ActionError, BlockingPaneIO, KeyStroke, Outcome, PaneIO, ThreadedPaneIO, read_pane, settled_read
from .policy import MENU_ANSWERS, REACTION_TIME, Intent, IntentKind, unfit

__all__ = [
    "SETTLE",
    "STEP_TIMEOUT",
    "ActionError",
    "BlockingPaneIO",
    "DraftInBox",
    "Intent",
    "KeyStroke",
    "Outcome",
    "PaneIO",
    "ThreadedPaneIO",
    "WidensPermissions",
    "plan_keys",
    "read_pane",
    "same_prompt",
    "send_guarded",
    "settled_read",
]


class DraftInBox(ActionError):
    """The agent's input box holds text the user typed and did not send: a typed line would join it."""


def draft_refusal(family: Family, ansi: str) -> str:
    """Why nothing may be typed into the agent's input box on this screen ("" when its box is empty, or the family cannot tell).

    The one rule for every typed line at the box (``c``, ``r``, ``send
    --nudge/--text``, the web view, Stop's ``/exit``): text there is the
    user's own draft, or the prompt Claude puts back after an interrupt, and
    whatever is typed joins it and is submitted with it.  Each family's
    reader says what its box holds (``Family.box_text``).
    """
    return draft_words(family, family.box_text(ansi))


def draft_words(family: Family, draft: str | None) -> str:
    """``draft_refusal`` of a box already read (``Family.box_text``)."""
    if not draft:
        return ""
    shown = draft if len(draft) <= 40 else draft[:39] + "…"
    return f"{family.label}'s input box holds text you did not send ({shown!r}); nothing sent: finish or clear it in the pane (i types there)"


class WidensPermissions(ActionError):
    """Every way to approve this prompt also widens what the agent may do: the approve key sends nothing.

    A front end may ask the user and then send the option's digit (a
    deliberate choice); ``send`` says which ``--option`` that is.
    """

    def __init__(self, chosen: Approval) -> None:
        self.chosen = chosen
        how = f"choose it deliberately by its number: {chosen.option.key}, or send --option {chosen.option.key}" if chosen.option.key.isdigit() else "choose it in the pane itself"
        super().__init__(f"every way to approve here also changes more: {chosen.describe()!r} {chosen.widens}; nothing sent ({how})")


def plan_keys(now: Observation, intent: Intent, family: Family) -> list[KeyStroke]:
    """The keystrokes that carry out ``intent`` on the prompt ``now`` (of ``family``'s agent); raise if they don't fit."""
    prompt = now.prompt
    if intent.kind in (IntentKind.TEXT, IntentKind.NUDGE):
        text = intent.text.replace("\r", " ").replace("\n", " ").strip()
        if not text:
            raise ActionError("nothing to send: the text is empty")
    refusal = unfit(intent.kind, now.state)
    if refusal:
        raise ActionError(refusal)
    if intent.kind is IntentKind.INTERRUPT:
        return [KeyStroke((key,)) for key in family.interrupt_keys]

    if multi.handles(now, intent):
        steps = multi.plan(now, intent)
        if not family.question_review and any(step.kind != "toggle" for step in steps):
            raise ActionError(f"{family.label}'s multi-select question is finished in the pane itself: tick its boxes here by number; nothing sent")
        return multi.strokes(steps)
    if intent.kind is IntentKind.TEXT and now.state is AgentState.QUESTION:
        return [KeyStroke((free_text_key(now),)), KeyStroke((text,), literal=True), KeyStroke(("Enter",))]
    if intent.kind in MENU_ANSWERS:
        if prompt is None or not prompt.options:
            raise ActionError(f"the pane shows no numbered menu (it is {now.state.value}); nothing sent")
        if intent.kind is IntentKind.APPROVE:
            chosen = approval(prompt)
            if chosen is None:
                raise ActionError("this prompt has no 'Yes' choice")
            if chosen.widens:
                raise WidensPermissions(chosen)
            choice = chosen.option
        elif intent.kind is IntentKind.DENY:
            refuse = prompt.no
            if refuse is None and prompt.deny_key:
                return [KeyStroke((prompt.deny_key,))]  # the dialog itself says this key refuses
            if refuse is None:
                raise ActionError("this prompt has no 'No' choice; pick an option by number instead")
            choice = refuse
        else:
            if not intent.option:  # a key-less option is never picked by an empty key (it would match the first one)
                raise ActionError("no option named: pick one by its number")
            if not any(o.key for o in prompt.options):
                raise ActionError("this dialog has no keys to pick its options; answer it in the pane itself")
            picked = next((o for o in prompt.options if o.key == intent.option), None)
            if picked is None:
                keys = ", ".join(o.key for o in prompt.options if o.key) or "none"
                raise ActionError(f"no option {intent.option} here (options: {keys})")
            choice = picked
        moves = cursor_moves(prompt, choice) if intent.kind in (IntentKind.APPROVE, IntentKind.DENY) else None
        if moves is not None:
            return moves
        if not answer_key(choice.key):
            raise ActionError("this dialog has no keys to pick its options; answer it in the pane itself")
        return [KeyStroke((choice.key,))]
    return [KeyStroke((text,), literal=True), KeyStroke(("Enter",))]


def cursor_menu(prompt: Prompt | None) -> bool:
    """A permission menu drawn without numbers, its cursor seen: Claude's "needs your approval" when auto mode's check cannot run (``❯ No`` / ``Yes``)."""
    return prompt is not None and prompt.kind == "permission" and bool(prompt.options) and not any(o.key for o in prompt.options) and sum(o.selected for o in prompt.options) == 1


def cursor_moves(prompt: Prompt, choice: Option) -> list[KeyStroke] | None:
    """On a ``cursor_menu``: arrows from the cursor to ``choice``, then Enter; None anywhere else (nothing is guessed).

    Only ``y`` and ``n`` come here (their option found by its label).  The
    guarded send counts the arrows again on the screen read right before
    they go, and presses Enter only once a new read shows the cursor on
    ``choice`` (``_move_then_press``).
    """
    if not cursor_menu(prompt) or choice not in prompt.options:
        return None
    cursor = next(i for i, o in enumerate(prompt.options) if o.selected)
    target = prompt.options.index(choice)
    step = KeyStroke(("Down" if target > cursor else "Up",))
    return [step] * abs(target - cursor) + [KeyStroke(("Enter",))]


def cursor_choice(prompt: Prompt | None, intent: Intent) -> Option | None:
    """The option ``y`` or ``n`` takes on a ``cursor_menu`` (None elsewhere, or where none fits)."""
    if not cursor_menu(prompt):
        return None
    assert prompt is not None
    if intent.kind is IntentKind.APPROVE:
        chosen = approval(prompt)
        return chosen.option if chosen is not None and not chosen.widens else None
    return prompt.no if intent.kind is IntentKind.DENY else None


# Named keys a family's reader may give as an option's key (tmux key names).
NAMED_KEYS = frozenset({"Enter", "Escape", "Tab", "Up", "Down", "Left", "Right"})


def answer_key(key: str) -> bool:
    """Is ``key`` one a reader may ask us to press for an option: a digit, one printable character, or a named key?

    Nothing longer: a word typed literally would land in an input box as text.
    """
    return (len(key) == 1 and key.isprintable() and not key.isspace()) or key in NAMED_KEYS


def free_text_key(now: Observation) -> str:
    """The key of the question's own free-text option ("Type something."), found by its label; raise where there is none.

    Never a guessed position: a question with previews has no such option, a
    multi-select one draws a checkbox the digit only ticks, and one whose
    field already holds text (typed in the pane) no longer says "Type something.".
    """
    prompt = now.prompt
    if prompt is None or prompt.kind != "question" or not prompt.options:
        raise ActionError(f"the pane shows no question to type an answer into (it is {now.state.value}); nothing sent")
    if prompt.multi_select:
        raise ActionError("a multi-select question: pick its options by number (free text only for single-choice questions); nothing sent")
    if not prompt.free_text or not prompt.free_text.isdigit():
        raise ActionError("this question has no empty 'Type something.' option to type into; pick an option by number; nothing sent")
    return prompt.free_text


def same_question(seen: Observation, now: Observation) -> bool:
    """Is ``now`` still the question ``seen``, whatever its free-text option holds?

    Typing into the field changes that option's label (and so the
    fingerprint): the question is the same while its text, its place among
    several questions and every other option are.
    """
    if now.state is not AgentState.QUESTION or seen.prompt is None or now.prompt is None:
        return False
    before, after = seen.prompt, now.prompt
    free = before.free_text

    def others(prompt) -> list[tuple[str, str]]:
        return [(o.key, o.label) for o in prompt.options if o.key != free]

    return (
        after.kind == before.kind
        and after.title == before.title
        and (after.question_index, after.question_count) == (before.question_index, before.question_count)
        and others(after) == others(before)
        and any(o.key == free for o in after.options)
    )


def _field(seen: Observation, now: Observation):
    return next((o for o in now.prompt.options if o.key == seen.prompt.free_text), None) if now.prompt and seen.prompt else None


def field_open(seen: Observation, now: Observation) -> bool:
    """The question ``seen`` with Claude's cursor in its free-text field (the digit landed)."""
    option = _field(seen, now)
    return same_question(seen, now) and option is not None and option.selected


def field_holds(seen: Observation, now: Observation, text: str) -> bool:
    """The question ``seen`` with ``text`` in its free-text field (its first line, where a long one wraps)."""
    option = _field(seen, now)
    if not same_question(seen, now) or option is None or not option.selected:
        return False
    shown, wanted = " ".join(option.label.split()), " ".join(text.split())
    return bool(shown) and wanted.startswith(shown) and (shown == wanted or len(shown) >= min(len(wanted), 20))


def same_prompt(seen: Observation, now: Observation) -> bool:
    """Is ``now`` the prompt the user saw?  Same state, and same fingerprint when there is a prompt.

    A question's fingerprint holds its text, its index among several
    questions and its option labels, so question 2 of a dialog is never
    taken for question 1.
    """
    if seen.state is not now.state:
        return False
    if seen.prompt is None or now.prompt is None:
        return seen.prompt is None and now.prompt is None
    return seen.prompt.fingerprint == now.prompt.fingerprint


def describe_answer(prompt_before: Observation, intent: Intent, strokes: list[KeyStroke]) -> str:
    """Exactly what was answered, for the user: the tool and its command, or the question and the option."""
    prompt = prompt_before.prompt
    if intent.kind is IntentKind.TEXT and prompt is not None and prompt.kind == "question":
        part = f" ({prompt.question_index}/{prompt.question_count})" if prompt.question_count > 1 else ""
        return f"question{part} {prompt.title!r} → typed {intent.text.strip()!r}"
    if intent.kind in (IntentKind.TEXT, IntentKind.NUDGE):
        return f"{intent.kind} {intent.text.strip()!r}"
    if intent.kind is IntentKind.INTERRUPT:
        return "interrupt (Esc)"
    if prompt is None:
        return intent.describe()
    key = strokes[0].keys[0] if strokes and strokes[0].keys else ""
    option = next((o for o in prompt.options if o.key == key), None) if key else None
    chosen = f"{key}. {option.label}" if option is not None else f"key {key}" if key else ""
    if prompt.kind == "permission":
        what = f"{prompt.tool}: {prompt.detail}" if prompt.detail else prompt.tool or "permission"
    elif prompt.kind == "question":
        part = f" ({prompt.question_index}/{prompt.question_count})" if prompt.question_count > 1 else ""
        what = f"question{part} {prompt.title!r}"
    elif prompt.kind == "plan":
        what = "plan"
    else:
        what = prompt.title or prompt.kind
    return f"{what} → {chosen}" if chosen else what


async def send_guarded(
    io: PaneIO,
    pane_id: str,
    seen: Observation,
    intent: Intent,
    *,
    timeout: float = 5.0,
    shown_at: float | None = None,
    server_key: str = "",
    family: Family,
    still_within: float = STILL_WITHIN,
) -> Outcome:
    """Send ``intent`` to ``pane_id`` only if it still shows ``seen``; confirm it landed.

    ``family`` is the agent's kind: its reader reads the pane, and its
    process must still run there.  One send at a time per pane (across tasks and processes: a lock in
    the runtime folder).  ``shown_at`` (time.time()) is when the prompt was
    first seen on screen; a menu younger than REACTION_TIME is given the
    rest of that time before any key goes (unknown: the full wait).  The
    last read before the keys is of a screen that held still for SETTLE,
    within ``still_within`` seconds (a stop, which races nothing, waits
    longer for a Claude that is still drawing its start on a busy machine).
    """
    if not pane_id.startswith("%"):
        raise ActionError(f"refusing to send to {pane_id!r}: actions address panes by id (%N) only")
    with pane_lock(server_key, pane_id):
        return await _send_locked(io, pane_id, seen, intent, family, timeout=timeout, shown_at=shown_at, still_within=still_within)


async def _send_locked(io: PaneIO, pane_id: str, seen: Observation, intent: Intent, family: Family, *, timeout: float, shown_at: float | None, still_within: float) -> Outcome:
    now, record = await read_pane(io, pane_id, family)
    command = getattr(record, "current_command", "")
    if getattr(record, "in_mode", False):
        raise ActionError(f"pane {pane_id} is in copy mode; leave it first (q) — nothing sent")
    if not family.is_command(command):
        raise ActionError(f"{family.label} is no longer running in pane {pane_id}; nothing sent")
    at_menu = intent.kind in MENU_ANSWERS or (intent.kind is IntentKind.TEXT and seen.state is AgentState.QUESTION)
    if at_menu and seen.state.is_menu and (seen.prompt is None or not seen.prompt.options):
        # Known from a hook or Claude's status file before the dialog was drawn:
        # the user has not seen its choices, so there is nothing to answer yet.
        raise ActionError(f"the prompt in {pane_id} is not on screen yet; nothing sent")
    if intent.kind is IntentKind.INTERRUPT:
        if now.state is not AgentState.WORKING or seen.state is not AgentState.WORKING:
            # Esc at a dialog would refuse it; at the input box it does nothing useful.
            raise ActionError(f"{pane_id} is not working (it is {now.state.value}); nothing to interrupt, nothing sent")
    elif not same_prompt(seen, now):
        raise ActionError(f"the prompt in {pane_id} changed since you looked (now {now.state.value}); nothing sent")
    strokes = plan_keys(now, intent, family)
    if now.state.is_menu and at_menu:
        wait = REACTION_TIME if shown_at is None else shown_at + REACTION_TIME - time.time()
        if wait > 0:
            await asyncio.sleep(wait)
    box: str | None = None  # what the input box holds on the settled screen, for a typed line (None: no box read)
    if intent.kind is not IntentKind.INTERRUPT:
        settled, ansi = await settled_read(io, pane_id, command, family, timeout=still_within)
        if not same_prompt(now, settled):
            raise ActionError(f"the prompt in {pane_id} changed while it settled (now {settled.state.value}); nothing sent")
        if intent.kind in (IntentKind.TEXT, IntentKind.NUDGE) and settled.state is not AgentState.QUESTION:
            # A line at the input box; a question's own field refuses text in it by its label (``free_text_key``).
            box = family.box_text(ansi)
            draft = draft_words(family, box)
            if draft:
                raise DraftInBox(draft)

    target = cursor_choice(now.prompt, intent)
    if target is not None:
        return await _move_then_press(io, pane_id, now, settled, intent, target, command, timeout, family)
    if multi.handles(now, intent):
        what = multi.describe(now, intent, multi.plan(now, intent))
        return await multi.send(io, pane_id, seen, now, intent, command, family, what, timeout)
    what = describe_answer(now, intent, strokes)
    if intent.kind is IntentKind.TEXT and now.state is AgentState.QUESTION:
        return await _type_answer(io, pane_id, now, strokes, command, what, timeout, family)
    if intent.kind in (IntentKind.TEXT, IntentKind.NUDGE) and box is not None:
        return await _type_line(io, pane_id, now, intent, strokes, command, what, timeout, family)
    for n, stroke in enumerate(strokes):
        if n and family.key_gap:
            await asyncio.sleep(family.key_gap)  # presses the agent must see apart (opencode's second Esc)
        await io.send_keys(pane_id, *stroke.keys, literal=stroke.literal)
    return await _confirm(io, pane_id, now, intent, timeout, command, what, family, shown=ansi if intent.kind in MENU_ANSWERS else None)


async def _move_then_press(io: PaneIO, pane_id: str, now: Observation, settled: Observation, intent: Intent, target: Option, command: str, timeout: float, family: Family) -> Outcome:
    """Answer a ``cursor_menu``: arrows counted from where its cursor is on the settled screen, Enter only once a new read shows it on ``target``.

    The cursor is not in the prompt's fingerprint (the menu is the same
    wherever it stands), so it is read again here: a cursor the user moved
    in the pane meanwhile is counted from where it is, and an arrow that was
    lost leaves Enter unsent (arrows alone answer nothing).
    """
    choice = cursor_choice(settled.prompt, intent)
    if choice is None or choice.label != target.label or settled.prompt is None:
        raise ActionError(f"the menu in {pane_id} changed while it settled; nothing sent")
    moves = cursor_moves(settled.prompt, choice) or []
    for stroke in moves[:-1]:
        await io.send_keys(pane_id, *stroke.keys)
    deadline = time.monotonic() + CURSOR_WAIT
    while True:
        seen = family.classify(await io.capture(pane_id, ansi=True), command=command)
        selected = next((o.label for o in seen.prompt.options if o.selected), None) if seen.prompt is not None else None
        if same_prompt(settled, seen) and selected == target.label:
            break
        if seen.state not in _NO_PROOF and not same_prompt(settled, seen):
            raise ActionError(f"the menu in {pane_id} changed while its cursor moved (now {seen.state.value}); Enter not sent")
        if time.monotonic() > deadline:
            raise ActionError(f"the cursor in {pane_id} did not reach {target.label!r} (it is on {selected!r}); Enter not sent")
        await asyncio.sleep(0.05)
    await io.send_keys(pane_id, "Enter")
    what = f"{describe_answer(now, intent, [])} → {target.label}"
    return await _confirm(io, pane_id, now, intent, timeout, command, what, family)


async def confirm_moved_on(io: PaneIO, pane_id: str, before: Observation, what: str, family: Family, *, timeout: float = 5.0) -> Outcome:
    """After an answer given elsewhere (the family's answer channel, Claude's hook): wait until the pane shows the agent moved on."""
    record = await io.pane(pane_id)
    return await _confirm(io, pane_id, before, Intent(IntentKind.APPROVE), timeout, getattr(record, "current_command", ""), what, family)


# Screens that prove nothing: a frame between two drawings, or a layout not understood.
_NO_PROOF = (AgentState.UNKNOWN, AgentState.STARTING)
SAME_AGAIN_HOLD = 0.5  # seconds the same words must hold after the transcript moved to be a re-ask, not a redraw's middle
CURSOR_WAIT = 1.5  # seconds a cursor menu's cursor may take to show it moved before Enter is given up


async def _confirm(io: PaneIO, pane_id: str, before: Observation, intent: Intent, timeout: float, command: str, what: str, family: Family, *, shown: str | None = None) -> Outcome:
    """Watch the pane until Claude visibly reacted, or give up and say so.

    "The menu vanished" is not enough (after Ctrl-Z and fg the terminal can
    echo a digit while Claude is not reading): the answer counts as
    delivered only when the pane shows a recognised Claude screen that
    follows from it — Claude working, its input box, or another prompt.
    Only the screen is re-read each round (one capture, no pane record):
    the pane's identity and mode were checked before the keys went.
    """
    deadline = time.monotonic() + timeout
    after = before
    again_since: float | None = None  # since when the same words have shown after the transcript moved
    typed = intent.kind in (IntentKind.TEXT, IntentKind.NUDGE)
    while time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        ansi = await io.capture(pane_id, ansi=True)
        after = family.classify(ansi, command=command)
        if typed and after.state is not AgentState.WORKING and not family.is_command(getattr(await io.pane(pane_id), "current_command", "")):
            # The agent read the line and left (``/exit``): the shell behind it never draws the agent's screen.
            return Outcome(True, f"{what} submitted; {family.label} exited", after)
        if after.state in _NO_PROOF:
            continue
        if intent.kind in MENU_ANSWERS:
            if not same_prompt(before, after):
                # Question 1/2 answered, 2/2 (or Claude's review) showing: the same dialog goes on.
                goes_on = before.prompt is not None and after.prompt is not None and after.prompt.follows(before.prompt)
                return Outcome(True, f"{what}: sent; {family.label} moved on ({after.state.value})", after, what, more=goes_on)
            if shown is not None and family.still_dialog and _history_moved(shown, ansi):
                # The same words asked again (a second identical call) after the first ran, too fast for a read to see
                # Claude working between: the transcript above the dialog moved on.  Claude's dialog is drawn still, so
                # a re-ask holds; a frame in the middle of Claude's own redraw does not (seen under load): it must hold
                # for SAME_AGAIN_HOLD before it is believed.
                again_since = again_since if again_since is not None else time.monotonic()
                if time.monotonic() - again_since >= SAME_AGAIN_HOLD:
                    return Outcome(True, f"{what}: sent; {family.label} asked the same again", after, what)
            else:
                again_since = None
        elif intent.kind in (IntentKind.TEXT, IntentKind.NUDGE):
            text = intent.text.strip()
            if after.state is AgentState.WORKING or after.state is not before.state:
                return Outcome(True, f"{what} submitted", after)
            if _submitted(ansi, text, family):
                return Outcome(True, f"{what} submitted", after)
        else:  # interrupt: Claude stopped working
            if after.state is not AgentState.WORKING:
                return Outcome(True, f"interrupt sent; {family.label} stopped ({after.state.value})", after)
    return Outcome(False, f"not delivered: {pane_id} still shows {after.state.value} after {timeout:.0f}s", after, what)


def _history_moved(before: str, after: str) -> bool:
    """Whether the transcript above Claude's dialog differs from the one before the keys (Claude draws a waiting dialog still).

    Only the rows above the dialog count: a key can redraw the dialog itself
    (its cursor on the option picked) a frame before Claude acts on it, and
    on a loaded machine a read lands in that frame.  The same words asked
    again after the first call ran show that call's result above.
    """
    return _transcript(before) != _transcript(after)


def _transcript(ansi: str) -> list[str]:
    """The rows above the dialog: before its top rule, else all.

    The top is the last full-width rule (not a box's bottom edge) above the
    dialog's first option: a question dialog draws another rule below its
    options (before "Chat about this"), and taking that one would count the
    options' cursor and ticks as transcript.
    """
    rows = [row.rstrip() for row in strip_sgr(ansi)]
    while rows and not rows[-1]:
        rows.pop()
    first_option = next((i for i, row in enumerate(rows) if _OPTION_ROW.match(row)), len(rows))
    tops = [i for i, row in enumerate(rows[:first_option]) if DIALOG_TOP.match(row) and not row.lstrip().startswith("╰")]
    return rows[: tops[-1]] if tops else rows


_OPTION_ROW = re.compile(r"^\s*(?:[❯>]\s*)?\d+\.\s")  # "❯ 1. Yes", "  2. No", "  3. [ ] Search": a dialog's numbered option


# How long each step of typing into a question's field may take to show (Claude redraws within a frame or two).
async def _type_answer(io: PaneIO, pane_id: str, seen: Observation, strokes: list[KeyStroke], command: str, what: str, timeout: float, family: Family) -> Outcome:
    """Type a free-text answer into the question ``seen``, one step at a time, each seen to land before the next.

    1. the digit of "Type something." (on that option it moves the cursor
       into the field, it does not submit: measured on 2.1.330);
    2. the text, literally, once the cursor is in the field (typed earlier, a
       digit in it could pick another option);
    3. Enter, once the field shows the text.

    Between the steps the pane must still show the same question; otherwise
    the rest is not sent.  Afterwards the question must have gone (the next
    question, Claude working, its input box) for the answer to count.
    """
    pick, typed, enter = strokes
    text = typed.keys[0]
    await io.send_keys(pane_id, *pick.keys)
    await _until(io, pane_id, command, family, seen, lambda now: field_open(seen, now), "its 'Type something.' field did not open; the text was not typed")
    await io.send_keys(pane_id, *typed.keys, literal=True)
    await _until(io, pane_id, command, family, seen, lambda now: field_holds(seen, now, text), "the text did not show in its field; Enter not sent (the text may be in the field: see the pane)")
    await io.send_keys(pane_id, *enter.keys)
    deadline = time.monotonic() + timeout
    after = seen
    while time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        after = family.classify(await io.capture(pane_id, ansi=True), command=command)
        if after.state not in _NO_PROOF and not same_question(seen, after):
            goes_on = seen.prompt is not None and after.prompt is not None and after.prompt.follows(seen.prompt)
            return Outcome(True, f"{what}: sent; {family.label} moved on ({after.state.value})", after, what, more=goes_on)
    return Outcome(False, f"not delivered: {pane_id} still shows the question after {timeout:.0f}s (the text is in its field)", after, what)


async def _until(io: PaneIO, pane_id: str, command: str, family: Family, seen: Observation, done, failed: str) -> Observation:
    """Read the pane until ``done`` holds; stop (raise) at once if it no longer shows the question ``seen``, or after STEP_TIMEOUT."""
    deadline = time.monotonic() + STEP_TIMEOUT
    while True:
        await asyncio.sleep(0.05)
        now = family.classify(await io.capture(pane_id, ansi=True), command=command)
        if done(now):
            return now
        if now.state not in _NO_PROOF and not same_question(seen, now):
            raise ActionError(f"the question in {pane_id} changed while typing (now {now.state.value}); nothing more sent")
        if time.monotonic() > deadline:
            raise ActionError(f"the question in {pane_id}: {failed}")


async def _type_line(io: PaneIO, pane_id: str, seen: Observation, intent: Intent, strokes: list[KeyStroke], command: str, what: str, timeout: float, family: Family) -> Outcome:
    """A line at the input box of a family that says what its box holds: the text, then Enter once the box shows it.

    Claude, Codex and Gemini CLI take an Enter read together with the text
    (within ~20 ms, or in one read of a loaded agent) as part of a paste (a
    newline in the box, nothing submitted); waiting until the box shows the
    text is the proof the paste is over, not a guessed delay.  It is also
    what makes the confirmation mean something: an agent too busy to draw
    the text still shows an empty box, which is not a line submitted.
    """
    typed, enter = strokes
    text = typed.keys[0]
    await io.send_keys(pane_id, *typed.keys, literal=True)
    deadline = time.monotonic() + max(STEP_TIMEOUT, timeout)
    while not _in_box(family.box_text(await io.capture(pane_id, ansi=True)), text, family):
        if time.monotonic() > deadline:
            raise ActionError(f"the text did not show in {family.label}'s input box in {pane_id}; Enter not sent (the text may be in the box: see the pane)")
        await asyncio.sleep(0.05)
    # Seen in the box is not yet past the paste window: an Enter within ~20 ms of the
    # last typed key still joins it (CI caught the box drawn that fast once).
    await asyncio.sleep(family.paste_gap)
    await io.send_keys(pane_id, *enter.keys)
    return await _confirm(io, pane_id, seen, intent, timeout, command, what, family)


def _flat(text: str) -> str:
    return "".join(text.split())


def _in_box(box: str | None, text: str, family: Family) -> bool:
    """The box holds the end of ``text`` (wrapping and indentation aside), or the family's mark of a long paste in its place."""
    if box is None:
        return False
    return _flat(text)[-40:] in _flat(box) or (family.paste_mark is not None and family.paste_mark.search(box) is not None)


def _submitted(ansi: str, text: str, family: Family) -> bool:
    """The text left the input box: the family's reader finds its box, and the box no longer holds it."""
    box = family.box_text(ansi)
    return box is not None and not _in_box(box, text, family)


# -- one send at a time per pane ------------------------------------------------------


class PaneBusy(ActionError):
    """Another send to the same pane is under way (a double tap, a second headspace)."""


@contextmanager
def pane_lock(server_key: str, pane_id: str) -> Iterator[None]:
    """Hold the pane's send lock, or raise ``PaneBusy`` at once.

    An ``flock`` on a file in the private runtime folder: it excludes other
    threads (each opens its own descriptor) and other processes (``send``
    from a script while the app answers).  Where no private folder can be
    had, a lock inside this process still keeps one send per pane.
    """
    key = hashlib.sha256(f"{server_key}\0{pane_id}".encode()).hexdigest()[:24]
    with _local_guard:
        if key in _local_busy:
            raise PaneBusy(f"a key is already being sent to {pane_id}; nothing more sent until it is confirmed")
        _local_busy.add(key)
    fd = None
    try:
        folder = _lock_dir()
        if folder is not None:
            try:
                import fcntl

                fd = os.open(os.path.join(folder, f"send-{key}.lock"), os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise PaneBusy(f"another headspace is sending to {pane_id}; nothing sent") from None
            except (ImportError, OSError):
                pass  # no cross-process lock here; the in-process one still holds
        yield
    finally:
        if fd is not None:
            os.close(fd)
        with _local_guard:
            _local_busy.discard(key)


_local_guard = threading.Lock()
_local_busy: set[str] = set()
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _lock_dir() -> str | None:
    """``$XDG_RUNTIME_DIR/headspace`` (or ``/tmp/headspace-<uid>``), only if it is private to us."""
    base = str(runtime_dir())
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    return base if is_private_dir(Path(base)) is None else None
