"""Which option an approve key (``y``) picks: this one request or plan, and nothing more.

Approval menus mix two kinds of "Yes": one that approves what is on
screen, and others that also change what the agent may do afterwards
without asking.  ``y`` is pressed fast, many times a day, often without
reading the menu again: it must never be the key that widens permissions.
So every option whose label starts "Yes" or "Allow" is sorted by what it
says, and ``y`` takes the first of the best kind:

=====  ===========================================  ==================================================
rank   label (examples, every family)                why
=====  ===========================================  ==================================================
once   "Yes", "Yes, proceed" (Codex), "Allow once"   approves this request only; changes nothing
       (Gemini, opencode), "Allow" (Chrome)
asks   "Yes, manually approve edits", "Yes, and      a plan's way out that keeps the user asked for
       manually approve edits", "Yes, manually       every edit (leaving plan mode is what approving
       accept edits" (Gemini), "Yes, and switch to   a plan means)
       default (ask each time) for this session"
wider  any label with a phrase of ``WIDENS``, or     changes more than this request (below); ``y``
       any other "Yes, …" not understood             picks one only where nothing better approves,
                                                     and only after the user confirms it (the app
                                                     asks; ``send`` refuses and names ``--option``)
=====  ===========================================  ==================================================

A label not in the plain list and without a phrase of either table is
"wider" on purpose: a label cut short at the pane's edge ("Yes, and switch
to…") may hide the phrase that widens, so it is never taken for a plain
"Yes".  Among "wider" options, one that clears the context comes last
(approving must not throw the conversation away).  Digits still choose any
option deliberately; only the approve key is held to this.

Auto mode's own dialogs (tool "Auto mode") have no "Yes": ``y`` takes
"Stay in auto mode" (the user approves each action its check cannot
judge) or 2.1.283's "Continue", never "Leave for accept edits mode".

Pure: labels in, a choice out.  Used by the guarded keys (``plan_keys``),
the hook answer (a digit on the plain "Yes" is the hook's ``allow``), the
prompt bar and the why screen (both say which option ``y`` takes).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Option, Prompt

APPROVING = ("yes", "allow")  # how an approving option's label starts

# Labels that approve exactly this request (lower case, the whole label).
PLAIN = frozenset({"yes", "yes, proceed", "yes, once", "yes, allow once", "allow", "allow once", "approve", "approve once"})

# Phrases that keep the user asked for what follows (a plan approved into the default mode).
KEEPS_ASKING = ("manually approve", "manually accept", "ask each time")
# Auto mode's own dialogs (``detect/claude/auto_mode.py``, tool "Auto mode"): the option that keeps things as they are.
AUTO_MODE_TOOL = "Auto mode"
AUTO_MODE_KEEPS = ("stay in auto mode", "continue")

# Phrases that widen what the agent may do without asking, and what each does (lower case, found anywhere in the label).
WIDENS: tuple[tuple[str, str], ...] = (
    ("clear context", "clears the conversation and starts the plan on a fresh context"),
    ("auto mode", "switches to auto mode: the agent stops asking for permission"),
    ("auto-accept", "accepts every edit without asking"),
    ("automatically accept", "accepts every edit without asking"),
    ("auto-approve", "approves edits and file commands without asking"),
    ("switch to accept edits", "accepts every edit without asking"),
    ("accept edits mode", "switches to accept edits mode: file edits and commands in the project run without asking"),
    ("don't ask again", "stops asking for requests like this one"),
    ("do not ask again", "stops asking for requests like this one"),
    ("always", "adds a standing rule: requests like this one are no longer asked"),
    ("allow all", "allows every such request for the rest of the session"),
    ("allow for this session", "allows every such request for the rest of the session"),
    ("bypass", "turns off permission checks"),
)
NOT_UNDERSTOOD = "says more than approving this request (label not understood)"


@dataclass(frozen=True)
class Approval:
    """The option ``y`` picks, and what else it would do ("" when it approves only this request or plan)."""

    option: Option
    widens: str = ""

    def describe(self) -> str:
        """``"2. Yes, manually approve edits"``: the option as the menu shows it."""
        if self.option.key.isdigit():
            return f"{self.option.key}. {self.option.label}"
        return f"{self.option.label} ({self.option.key})" if self.option.key else self.option.label


def widening(label: str) -> str:
    """What choosing ``label`` changes beyond approving this request ("" for a plain or keeps-asking approval)."""
    text = " ".join(label.lower().replace("’", "'").split())
    if text == "stay in auto mode":
        return ""  # keeps what is (the mode on, each unchecked action asked): "auto mode" in it widens nothing
    for phrase, why in WIDENS:
        if phrase in text:
            return why
    if text.rstrip(".") in PLAIN or any(phrase in text for phrase in KEEPS_ASKING):
        return ""
    return NOT_UNDERSTOOD


def _rank(option: Option) -> int:
    text = " ".join(option.label.lower().split()).rstrip(".")
    if widening(option.label):
        return 3 if "clear context" in text else 2
    return 0 if text in PLAIN else 1


def approval(prompt: Prompt | None) -> Approval | None:
    """The option an approve key picks on ``prompt``, or None when nothing there approves.

    The best rank wins, the first on screen among equals (see the table
    above); ``widens`` is set only when every approving option widens.
    """
    if prompt is None:
        return None
    if prompt.tool == AUTO_MODE_TOOL:
        # "Stay in auto mode" (you approve what its check cannot), 2.1.283's "Continue": never the way out to accept edits.
        keep = next((o for o in prompt.options if o.label.lower() in AUTO_MODE_KEEPS), None)
        return Approval(keep) if keep is not None else None
    approving = [o for o in prompt.options if o.label.lower().startswith(APPROVING)]
    if not approving:
        return None
    best = min(approving, key=_rank)  # min keeps the first of equal rank
    return Approval(best, widening(best.label))
