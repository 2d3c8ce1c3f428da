"""What the page shows, as plain data: an agent's row with its actions, its dialog (and the change a held file edit would make), and its screen as coloured runs.

Every string here comes from outside (pane text, names, folders): the page
puts it in with ``textContent``, never as HTML, and colours are passed only as
a palette name or six hex digits (anything else is the default colour), so
nothing from a pane can become markup or a style of its own.
"""

from __future__ import annotations

import re
import time
from typing import Any

from ..api.facade import IntentKind, PaneScreen, key_allowed, sort_key, unfit
from ..api.rows import agent_row
from ..changes.model import Diff
from ..detect.approval import approval, widening
from ..model import STATE_GLYPHS, Agent, AgentState, Channel, Option
from ..notifications.snooze import SNOOZED_RANK, Snooze, snooze_words
from ..screen.virtual import VirtualScreen
from ..usage.words import usage_lines

# The page's buttons and the answer each sends (the terminal's keys, by the same names).
ACTIONS = ("approve", "deny", "option", "submit", "reply", "nudge", "interrupt")
_NAMED = re.compile(r"(bright)?(black|red|green|brown|yellow|blue|magenta|cyan|white)|bfightmagenta")
_HEX = re.compile(r"[0-9a-fA-F]{6}")
_REFUSES = re.compile(r"\s*(no\b|deny|reject|cancel|tell |type here)", re.IGNORECASE)  # a menu's options that refuse or redirect: they widen nothing


def agent_view(agent: Agent, now: float | None = None, snooze: Snooze | None = None) -> dict[str, Any]:
    """The agent as the page lists it: ``status --json``'s row, with its address, glyph, and the actions that fit now.

    ``snooze``: the wait the user put off (one set of snoozes for every
    front end): it does not need you, sorts below those that do, and says so.
    """
    now = time.time() if now is None else now
    snoozed = snooze_words(agent, snooze)
    row = agent_row(agent, now)
    prompt = agent.observation.prompt
    # Reply only where a typed line is taken (the terminal's r opens its box anywhere and checks on send;
    # the page has no box to open first, so it offers only what would not be refused).
    actions = [action for action in ACTIONS if key_allowed(action, agent) and (action != "reply" or not unfit(IntentKind.TEXT, agent.state))]
    menu = agent.state in (AgentState.PERMISSION, AgentState.PLAN)
    chosen = approval(prompt) if menu else None
    if "approve" in actions and (chosen is None or chosen.widens):
        actions.remove("approve")  # Approve never widens what the agent may do: the options say what each one does
    row.update(
        {
            # How long in this state, by this host's clock (the page adds what passed since): Claude's word or the event log's, else since headspace saw it.
            "for": row["in_state_for"] if row["in_state_for"] is not None else max(0.0, now - agent.since) if agent.since else None,
            "address": agent.pane_id,  # "%3", or "%3@box" for a remote host's
            "glyph": STATE_GLYPHS[agent.state],
            "needs_you": agent.state.needs_you and not snoozed,
            "snoozed": snoozed,
            "offline": agent.offline,
            "actions": actions,
            # While Claude's answer hook holds the dialog: when that hook stops waiting (its clock's time.time()); then keys answer.
            "hook_until": agent.hook_until if agent.channel == Channel.HOOK and agent.hook_until else None,
            "fingerprint": prompt.fingerprint if prompt else "",
            "title": prompt.title if prompt else "",
            # ``widens``: what choosing it changes beyond this one request ("" for none): the page asks before it sends one.
            # ``same_as``: the option Approve or Deny already sends (the page shows it once, as that button).
            "choices": [
                {
                    "key": o.key,
                    "label": o.label,
                    "ticked": o.ticked,
                    "widens": widening(o.label) if menu and not _REFUSES.match(o.label) else "",
                    "same_as": _same_as(o, actions, chosen.option if chosen is not None else None, prompt.no),
                }
                for o in prompt.options
                # Only what the page can send: a digit, or the option Approve or Deny sends (a menu without
                # numbers, auto mode's dialog whose keys are Enter and Esc); shift+Tab's way out is never offered.
                if o.key.isdigit() or _same_as(o, actions, chosen.option if chosen is not None else None, prompt.no)
            ]
            if prompt
            else [],
            "multi_select": bool(prompt and prompt.multi_select),
            # The table's order: needing you first, longest-waiting first, then the snoozed waits.
            "order": [SNOOZED_RANK, 0.0, agent.target] if snoozed else list(sort_key(agent)),
            "part": [prompt.question_index, prompt.question_count] if prompt and prompt.question_count > 1 else None,
            # The change a file edit Claude's hook holds would make (``Diff.to_dict()``), shown above Approve; null for none.
            "proposed": _proposed(agent),
            # Its context, tokens and estimated cost, in the words the terminal's e uses: [label, words] pairs ([] before any is read).
            "usage": [list(pair) for pair in usage_lines(agent.usage, agent.limit_reset)],
        }
    )
    return row


def quick(view: dict[str, Any]) -> bool:
    """Whether a push offers Approve and Deny for this row: a plain permission, as app.js ``plain`` says for a tap on the list, with Deny too.

    Its tool named, Approve among its actions (never an option that widens
    what the agent may do), not a multi-select, not a change held for review.
    """
    return bool(
        view["state"] == "permission"
        and view["needs_you"]
        and not view["offline"]
        and view.get("tool")
        and "approve" in view["actions"]
        and "deny" in view["actions"]
        and not view["multi_select"]
        and not view["proposed"]
    )


def _proposed(agent: Agent) -> dict[str, Any] | None:
    """The row's proposed change, while it waits on that permission, in ``Diff.to_dict()``'s shape (read through ``from_dict``: only that shape reaches the page)."""
    if agent.proposed is None or agent.state is not AgentState.PERMISSION:
        return None
    try:
        return Diff.from_dict(agent.proposed).to_dict()
    except ValueError:
        return None


def _same_as(option: Option, actions: list[str], approves: Option | None, denies: Option | None) -> str:
    """The action (approve or deny) that already sends ``option``, or ""."""
    if "approve" in actions and option == approves:
        return "approve"
    if "deny" in actions and option == denies:
        return "deny"
    return ""


def _colour(value: Any) -> str:
    if not isinstance(value, str) or value == "default":
        return ""
    if _NAMED.fullmatch(value):
        return value
    return value.lower() if _HEX.fullmatch(value) else ""


def screen_view(screen: PaneScreen) -> dict[str, Any]:
    """A pane's screen as rows of runs ``[text, fg, bg, flags]`` (flags: b bold, i italic, u underline, r reverse)."""
    virtual = VirtualScreen(max(1, min(screen.width, 1000)), max(1, min(screen.height, 1000)))
    virtual.load_capture(screen.ansi)
    rows = []
    for runs in virtual.runs():
        row = []
        for text, (fg, bg, bold, italics, underscore, _strike, reverse, _blink) in runs:
            flags = "".join(flag for flag, on in (("b", bold), ("i", italics), ("u", underscore), ("r", reverse)) if on)
            row.append([text, _colour(fg), _colour(bg), flags])
        rows.append(row)
    return {"width": virtual.width, "height": virtual.height, "rows": rows}
