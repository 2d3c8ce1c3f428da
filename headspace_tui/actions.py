"""Answering an agent without ever typing into the wrong prompt.

Keystrokes are dangerous: a digit typed into Claude's input box becomes part
of a message, a "y" sent to a pane whose dialog already changed approves
something the user never saw.  So every action goes through one guarded path:

1. the pane is addressed by its id (``%N``) only, the one the user looked at;
2. right before sending, the pane is re-read: not in copy mode, Claude still
   running, and the prompt still has the fingerprint the user saw;
3. the keys are derived from the prompt as it is *now* (``No`` found by its
   label, digits only for a numbered menu, text sent literally and Enter
   separately);
4. afterwards the pane is watched until the prompt closed or the text was
   submitted; otherwise the result says "not delivered".

``plan_keys`` is pure and tested on the corpus; ``send_guarded`` does the I/O.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from .detect.claude import classify_capture, is_claude_command, strip_sgr
from .model import AgentState, Observation

INPUT_BOX_STATES = (AgentState.IDLE, AgentState.INPUT, AgentState.ERROR)
# Measured on 2.1.330: a digit sent within ~0.1 s of a menu being drawn is
# dropped (the dialog is not listening yet); from ~0.3 s on it lands.
MIN_PROMPT_AGE = 0.4


class ActionError(Exception):
    """Why nothing was sent, in one line for the user."""


@dataclass(frozen=True)
class Intent:
    """What the user asked for: approve, deny, option, text, nudge or interrupt."""

    kind: str
    option: str = ""  # the digit, for "option"
    text: str = ""  # for "text" and "nudge"

    def describe(self) -> str:
        if self.kind == "option":
            return f"option {self.option}"
        if self.kind in ("text", "nudge"):
            return f"{self.kind} {self.text!r}"
        return self.kind


@dataclass(frozen=True)
class KeyStroke:
    keys: tuple[str, ...]
    literal: bool = False


@dataclass(frozen=True)
class Outcome:
    delivered: bool
    detail: str
    after: Observation | None = None


def plan_keys(now: Observation, intent: Intent) -> list[KeyStroke]:
    """The keystrokes that carry out ``intent`` on the prompt ``now``; raise if they don't fit."""
    prompt = now.prompt
    if intent.kind == "interrupt":
        if now.state is AgentState.EXITED:
            raise ActionError("Claude is not running in this pane")
        return [KeyStroke(("Escape",))]
    if intent.kind in ("approve", "deny", "option"):
        if not now.state.is_menu or prompt is None or not prompt.options:
            raise ActionError(f"the pane shows no numbered menu (it is {now.state.value}); nothing sent")
        if intent.kind == "approve":
            choice = prompt.yes
            if choice is None:
                raise ActionError("this prompt has no 'Yes' choice")
        elif intent.kind == "deny":
            choice = prompt.no
            if choice is None and prompt.deny_key:
                return [KeyStroke((prompt.deny_key,))]  # the dialog itself says this key refuses
            if choice is None:
                raise ActionError("this prompt has no 'No' choice; pick an option by number instead")
        else:
            choice = next((o for o in prompt.options if o.key == intent.option), None)
            if choice is None:
                keys = ", ".join(o.key for o in prompt.options if o.key) or "none"
                raise ActionError(f"no option {intent.option} here (options: {keys})")
        if not choice.key.isdigit():
            raise ActionError("this dialog has no number keys; answer it in the pane itself")
        return [KeyStroke((choice.key,))]
    if intent.kind in ("text", "nudge"):
        text = intent.text.replace("\r", " ").replace("\n", " ").strip()
        if not text:
            raise ActionError("nothing to send: the text is empty")
        if now.state not in INPUT_BOX_STATES:
            raise ActionError(f"the pane is not at Claude's input box (it is {now.state.value}); nothing sent")
        return [KeyStroke((text,), literal=True), KeyStroke(("Enter",))]
    raise ActionError(f"unknown action {intent.kind!r}")


def same_prompt(seen: Observation, now: Observation) -> bool:
    """Is ``now`` the prompt the user saw?  Same state, and same fingerprint when there is a prompt."""
    if seen.state is not now.state:
        return False
    if seen.prompt is None or now.prompt is None:
        return seen.prompt is None and now.prompt is None
    return seen.prompt.fingerprint == now.prompt.fingerprint


class PaneIO(Protocol):
    """What the guarded path needs from tmux (``tmux.server.TmuxServer`` provides it)."""

    def pane(self, pane_id: str): ...
    def capture(self, pane_id: str, ansi: bool = True) -> str: ...
    def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None: ...


def read_pane(io: PaneIO, pane_id: str) -> tuple[Observation, object]:
    record = io.pane(pane_id)
    return classify_capture(io.capture(pane_id, ansi=True), command=record.current_command), record


def send_guarded(
    io: PaneIO, pane_id: str, seen: Observation, intent: Intent, *, timeout: float = 5.0, shown_at: float | None = None
) -> Outcome:
    """Send ``intent`` to ``pane_id`` only if it still shows ``seen``; confirm it landed.

    ``shown_at`` (time.time()) is when the prompt was first seen on screen; a
    menu younger than MIN_PROMPT_AGE is given the rest of that time and read
    again before any key goes (unknown: the full wait).
    """
    if not pane_id.startswith("%"):
        raise ActionError(f"refusing to send to {pane_id!r}: actions address panes by id (%N) only")
    now, record = read_pane(io, pane_id)
    if getattr(record, "in_mode", False):
        raise ActionError(f"pane {pane_id} is in copy mode; leave it first (q) — nothing sent")
    if intent.kind != "interrupt" and not is_claude_command(getattr(record, "current_command", "")):
        raise ActionError(f"Claude is no longer running in pane {pane_id}; nothing sent")
    if intent.kind in ("approve", "deny", "option") and seen.state.is_menu and (seen.prompt is None or not seen.prompt.options):
        # Known from a hook or Claude's status file before the dialog was drawn:
        # the user has not seen its choices, so there is nothing to answer yet.
        raise ActionError(f"the prompt in {pane_id} is not on screen yet; nothing sent")
    if intent.kind != "interrupt" and not same_prompt(seen, now):
        raise ActionError(f"the prompt in {pane_id} changed since you looked (now {now.state.value}); nothing sent")
    strokes = plan_keys(now, intent)
    if now.state.is_menu and intent.kind in ("approve", "deny", "option"):
        wait = MIN_PROMPT_AGE if shown_at is None else shown_at + MIN_PROMPT_AGE - time.time()
        if wait > 0:
            time.sleep(wait)
            again, _ = read_pane(io, pane_id)
            if not same_prompt(now, again):
                raise ActionError(f"the prompt in {pane_id} changed while it settled (now {again.state.value}); nothing sent")
    for stroke in strokes:
        io.send_keys(pane_id, *stroke.keys, literal=stroke.literal)
    return _confirm(io, pane_id, now, intent, timeout, getattr(record, "current_command", ""))


def _confirm(io: PaneIO, pane_id: str, before: Observation, intent: Intent, timeout: float, command: str) -> Outcome:
    """Watch the pane until the action visibly took effect, or give up and say so.

    Only the screen is re-read each round (one capture, no pane record):
    the pane's identity and mode were checked before the keys went.
    """
    deadline = time.monotonic() + timeout
    after = before
    while time.monotonic() < deadline:
        time.sleep(0.1)
        ansi = io.capture(pane_id, ansi=True)
        after = classify_capture(ansi, command=command)
        if intent.kind in ("approve", "deny", "option"):
            if not same_prompt(before, after):
                return Outcome(True, f"{intent.describe()} sent; the prompt closed", after)
        elif intent.kind in ("text", "nudge"):
            text = intent.text.strip()
            if after.state is AgentState.WORKING or (after.state is not before.state and after.state is not AgentState.UNKNOWN):
                return Outcome(True, f"{intent.describe()} submitted", after)
            if _submitted(ansi, text):
                return Outcome(True, f"{intent.describe()} submitted", after)
        else:  # interrupt: Claude stops working, or the key at least reached a live pane
            if after.state is not AgentState.WORKING:
                return Outcome(True, "interrupt sent", after)
    return Outcome(False, f"not delivered: {pane_id} still shows {after.state.value} after {timeout:.0f}s", after)


def _submitted(ansi: str, text: str) -> bool:
    """The text left the input box: the ❯ line no longer ends with it."""
    lines = strip_sgr(ansi)
    boxes = [line for line in lines if line.startswith("❯")]
    return bool(boxes) and text[-20:] not in boxes[-1]
