"""A row's keys and their kinds: what a client needs to check and print a row the service sent, and nothing more.

Why apart from rows.py: making a row (``agent_row``) reads the agent's
words (state/wait_words.py, and through it every family's screen
vocabulary), which the service does; ``headspace status --json`` and the
service's client only check a row and print its public keys.  Kept here,
they start without loading the readers (0.06 s of CPU off every
command line's start).
"""

from __future__ import annotations

from typing import Any

# The keys ``status --json`` prints, in its order (docs/using.md and docs/service.md document them).
PUBLIC = (
    "host", "target", "pane_id", "state", "tool", "detail", "options", "question", "ticked", "error", "retrying",
    "exit_status", "fingerprint", "request", "snoozed", "mode", "blocked", "cwd", "change", "since", "in_state_for", "since_source", "agent", "agent_version", "claude_version",
    "model", "context_tokens", "context_pct", "context_window", "context_window_source", "tokens", "cost_usd_est", "cost_leaves_out", "limited_until",
)  # fmt: skip


# What each key of a row holds: a row from elsewhere (the service) is checked against it before it is printed.
_TYPES: dict[str, tuple[type, ...]] = {
    "host": (str,), "target": (str,), "pane_id": (str,), "state": (str,), "tool": (str, type(None)), "detail": (str, type(None)),
    "options": (list,), "question": (str, type(None)), "ticked": (list,), "error": (str, type(None)), "retrying": (bool,),
    "exit_status": (int, type(None)), "fingerprint": (str, type(None)), "request": (str, type(None)), "snoozed": (str, type(None)),
    "mode": (str,), "blocked": (list,), "cwd": (str,), "change": (str, type(None)), "since": (int, float),
    "in_state_for": (int, float, type(None)), "since_source": (str, type(None)), "agent": (str,), "agent_version": (str, type(None)),
    "claude_version": (str, type(None)), "line": (str,),
    "model": (str, type(None)), "context_tokens": (int, type(None)), "context_pct": (int, type(None)), "tokens": (dict, type(None)),
    "context_window": (int, type(None)), "context_window_source": (str, type(None)),
    "cost_usd_est": (int, float, type(None)), "cost_leaves_out": (list, type(None)), "plan_use": (list, type(None)), "limited_until": (int, float, type(None)),
}  # fmt: skip


def well_formed(row: object) -> bool:
    """Whether ``row`` is a row: every key there, each of its kind (a bool is no number here)."""
    if not isinstance(row, dict):
        return False
    for key, kinds in _TYPES.items():
        value = row.get(key, ...)
        if value is ... or not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            return False
    return True


def public(row: dict[str, Any]) -> dict[str, Any]:
    """The row as ``--json`` prints it: the public keys, in their order (a newer service's extra keys are left out)."""
    return {key: row.get(key) for key in PUBLIC}


def needs_you(row: dict[str, Any]) -> bool:
    """Whether a row's state is a wait on the user (an unknown state word is not)."""
    from ..model import AgentState  # the vocabulary's one list of waits; loaded by the text view only

    try:
        return AgentState(row.get("state")).needs_you
    except ValueError:
        return False
