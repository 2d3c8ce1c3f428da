"""Rules paused, resumed and revoked: ``rules_pause`` and ``rule_revoked`` events in the event log.

Written by ``headspace rules pause|resume|revoke``, by the phone page
through the service, and by a rule pausing itself; one shape for each here,
whoever writes it.  Read, with the rest of a rule's life, by the service's
read model (service/acting/rule_state.py).
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


def is_paused(state: dict[tuple[str, str], bool], rule: str, host: str) -> bool:
    """Is ``rule`` paused on ``host``, by a pause of it, of every rule, on that host or on all: (host, rule) → paused, "" for all."""
    return any(state.get(scope, False) for scope in (("", ""), (host, ""), ("", rule), (host, rule)))
