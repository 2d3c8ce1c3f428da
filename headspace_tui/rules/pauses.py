"""Rules paused, resumed and revoked: ``rules_pause`` and ``rule_revoked`` events in the event log, read as they stand now.

Written by ``headspace rules pause|resume|revoke``, by the phone page
through the service, and by a rule pausing itself; one shape for each here,
whoever writes it.
"""

from __future__ import annotations

from .model import Rule

PAUSE = "rules_pause"
REVOKE = "rule_revoked"


def pause_event(on: bool, rule: str = "", host: str = "", why: str = "") -> dict:
    """A ``rules_pause`` payload: ``rule`` "" for every rule, ``host`` "" for every host; ``on`` False resumes."""
    return {"on": on, "rule": rule, "host": host, "why": why}


def pause_words(on: bool, rule: str = "", host: str = "") -> str:
    """What a pause (or resume) says it did: "rule lab-touch on box: paused", "every rule: answering again"."""
    scope = " ".join(part for part in (f"rule {rule}" if rule else "every rule", f"on {host}" if host else "") if part)
    return f"{scope}: {'paused' if on else 'answering again'}"


def revoke_event(rule: Rule) -> dict:
    """A ``rule_revoked`` payload: the rule as it is written now (its text's hash), so an edited rule is another."""
    return {"rule": rule.id, "text": rule.key[1]}


def revoked(events: list) -> set[tuple[str, str]]:
    """The rule keys (id, text hash) the ``rule_revoked`` events name."""
    return {(str(e.payload.get("rule")), str(e.payload.get("text"))) for e in events}


def pauses(events: list) -> dict[tuple[str, str], bool]:
    """(host, rule) → paused, as the latest ``rules_pause`` event of each scope says ("" for all hosts, all rules)."""
    state: dict[tuple[str, str], bool] = {}
    for event in sorted(events, key=lambda e: (e.ts, e.id)):
        host, rule, on = event.payload.get("host"), event.payload.get("rule"), event.payload.get("on")
        if isinstance(host, str) and isinstance(rule, str) and isinstance(on, bool):
            if not on and not host and not rule:
                state = {}  # resume everything: every pause ends
            else:
                state[(host, rule)] = on
    return state


def is_paused(state: dict[tuple[str, str], bool], rule: str, host: str) -> bool:
    return any(state.get(scope, False) for scope in (("", ""), (host, ""), ("", rule), (host, rule)))
