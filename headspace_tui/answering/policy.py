"""Which answer fits which state: one table, read by every front end and by the send itself.

The footer's keys, the palette's commands, ``check_action``, the guarded
send (``keys.plan_keys``) and ``headspace send`` all ask here, so a key the
footer offers is a key the send accepts, and the other way round.

* ``approve``/``deny`` answer a permission or a plan (never a question: its
  "Yes" may be anything; pick its option by number);
* an ``option`` digit goes to any numbered menu, the trust dialog at start
  included;
* ``text`` and ``nudge`` go to Claude's input box: idle, asking in plain
  text, or after an error (Claude is back at its box; "continue" is how one
  retries); ``text`` also answers a question through its own free-text
  option ("Type something.", picked by its label: ``keys.plan_keys``);
* ``interrupt`` (Esc) only while Claude works: at a dialog Esc would refuse
  it;
* ``submit`` sends a multi-select question's ticks on (its page's "Submit",
  or "Next" to the dialog's next question), and at Claude's "Review your
  answers" page submits them all; a digit there only toggles its box.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..model import Agent, AgentState, Channel, Observation


class IntentKind(StrEnum):
    APPROVE = "approve"
    DENY = "deny"
    OPTION = "option"
    TEXT = "text"
    NUDGE = "nudge"
    INTERRUPT = "interrupt"
    SUBMIT = "submit"


# A prompt younger than this is not answered yet, for two reasons that meet
# at the same number: a person cannot have read it (the app refuses the key),
# and Claude's dialog is not listening yet (measured on 2.1.330: a digit sent
# within ~0.1 s of a menu being drawn is dropped, from ~0.3 s on it lands;
# the guarded send waits out the rest).
REACTION_TIME = 0.4

MENU_ANSWERS = frozenset({IntentKind.APPROVE, IntentKind.DENY, IntentKind.OPTION, IntentKind.SUBMIT})
INPUT_BOX_STATES = frozenset({AgentState.IDLE, AgentState.INPUT, AgentState.ERROR, AgentState.LIMITED})
MENU_STATES = frozenset(state for state in AgentState if state.is_menu)

# The table: in which states each kind of answer can do what it says.
FITS: dict[IntentKind, frozenset[AgentState]] = {
    IntentKind.APPROVE: frozenset({AgentState.PERMISSION, AgentState.PLAN}),
    IntentKind.DENY: frozenset({AgentState.PERMISSION, AgentState.PLAN}),
    IntentKind.OPTION: MENU_STATES,
    IntentKind.TEXT: INPUT_BOX_STATES | {AgentState.QUESTION},
    IntentKind.NUDGE: INPUT_BOX_STATES,
    IntentKind.INTERRUPT: frozenset({AgentState.WORKING}),
    IntentKind.SUBMIT: frozenset({AgentState.QUESTION}),
}


RULE_VIA = "rule "  # ``via`` of an answer a rule gave by keys ("rule lab-touch"): its audit says "✓ by rule lab-touch"


@dataclass(frozen=True)
class Intent:
    """What the user asked for: approve, deny, option, text, nudge or interrupt."""

    kind: IntentKind
    option: str = ""  # the digit, for "option" (several, "1,3", tick exactly those of a multi-select question and submit)
    text: str = ""  # for "text" and "nudge"
    via: str = ""  # who asked, when not this terminal: "web 192.0.2.7" (the audit says so)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", IntentKind(self.kind))  # a plain string from a caller is checked here

    def describe(self) -> str:
        if self.kind is IntentKind.OPTION:
            return f"option {self.option}"
        if self.kind in (IntentKind.TEXT, IntentKind.NUDGE):
            return f"{self.kind} {self.text!r}"
        return str(self.kind)

    @property
    def rule(self) -> str:
        """The rule(s) that gave this answer ("" for a person's): the audit keeps it as a field."""
        return self.via.removeprefix(RULE_VIA) if self.via.startswith(RULE_VIA) else ""

    def audit_suffix(self) -> str:
        """What the audit adds to the answer's line: `` (via web 192.0.2.7)``, `` ✓ by rule ID``, or nothing for this terminal's own keys."""
        if self.via.startswith(RULE_VIA):
            return f" {'✗' if self.kind is IntentKind.DENY else '✓'} by {self.via}"
        return f" (via {self.via})" if self.via else ""


def unfit(kind: IntentKind, state: AgentState) -> str:
    """Why an answer of ``kind`` cannot go to an agent in ``state`` ("" when it fits)."""
    if state in FITS[kind]:
        return ""
    if kind is IntentKind.SUBMIT:
        return f"nothing to submit: the pane shows no multi-select question (it is {state.value}); nothing sent"
    if kind in MENU_ANSWERS:
        if state.is_menu:
            return f"{kind} answers a permission or a plan (this is a {state.value}); pick an option by number"
        return f"the pane shows no numbered menu (it is {state.value}); nothing sent"
    if kind in (IntentKind.TEXT, IntentKind.NUDGE):
        return f"the pane is not at Claude's input box (it is {state.value}); nothing sent"
    return f"Claude is not working (it is {state.value}); nothing to interrupt"


# The front ends' agent keys and the answer each stands for; the others need an agent and no more.
KEY_INTENTS = {
    "approve": IntentKind.APPROVE,
    "deny": IntentKind.DENY,
    "option": IntentKind.OPTION,
    "nudge": IntentKind.NUDGE,
    "interrupt": IntentKind.INTERRUPT,
    "submit": IntentKind.SUBMIT,
}
AGENT_KEYS = frozenset({*KEY_INTENTS, "reply", "approve_all", "jump", "why", "timeline", "input_mode"})
# Keys that only look (they work for a host out of reach too: its last reading).
LOOKING_KEYS = frozenset({"why", "timeline"})


def key_allowed(key: str, agent: Agent | None) -> bool:
    """Whether an agent key can do anything for ``agent`` (what the footer offers and the key does).

    ``reply`` opens the reply box for any reachable agent: what was typed is
    checked against ``text``'s row when it is sent (at a question, it goes
    into the question's own free-text option).  ``input_mode`` forwards the
    user's keys to any pane that still runs its agent.  ``approve_all`` needs
    a permission whose dialog Claude's hook holds (the batch goes through it).
    """
    if key not in AGENT_KEYS:
        return True
    if agent is None:
        return False
    if agent.offline and key not in LOOKING_KEYS:
        return False  # its host is out of reach: no key goes to a reading that may be stale
    if key == "submit":
        return submits(agent.observation)
    if key in KEY_INTENTS:
        return agent.state in FITS[KEY_INTENTS[key]]
    if key == "approve_all":
        return agent.state is AgentState.PERMISSION and agent.channel == Channel.HOOK
    if key == "jump":
        return not agent.placeholder
    if key == "input_mode":
        # Keys straight to the pane: a pane that is there, with an agent still in it.
        return not agent.placeholder and agent.state is not AgentState.EXITED
    return True


def submits(observation: Observation) -> bool:
    """Is there something for ``submit`` to send: a multi-select question's page, or Claude's review of every answer?"""
    prompt = observation.prompt
    return observation.state is AgentState.QUESTION and prompt is not None and bool(prompt.options) and (prompt.multi_select or prompt.review)


def live_keys(agent: Agent | None) -> frozenset[str]:
    """The agent keys ``agent`` allows (the footer is rebuilt only when these change)."""
    return frozenset(key for key in AGENT_KEYS if key_allowed(key, agent))
