"""Rules paused and resumed: ``rules_pause`` events in the event log (written by ``headspace rules pause`` or by a rule pausing itself), read as they stand now."""

from __future__ import annotations


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
