"""What happened while you were away: per agent, the turns it finished, the calls auto mode blocked, what the rules answered, what it changed and spent.

The phone page asks it when it is opened again after a while (``since``:
when it was last looked at, by the phone's own word).  Each entry is one
agent that did something since then, with the facts the service already
keeps: the event log's state changes (``agent_state``: a turn ends when
the agent goes idle), the blocked calls on its row, the rules' answers, the usage
events' ``spent``, and this turn's change as its row says it.  An agent
that did nothing is left out; the busiest first.

Pure: the journal and the rules hand it their records; no clock of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...model import Agent, AgentState, PaneAddress
from ...state.eventlog import StoredEvent
from ...usage.model import Spent
from .command_tracker import who

MAX_LINES = 5  # of each kind per agent (the newest): the page opens the agent for the rest


def address_of(pane: str, host: str) -> str:
    """A rule answer's agent as the page addresses it (``%3``, or ``%3@box`` on another host)."""
    return pane if not host or host == "local" else f"{pane}@{host}"


def away(agents: Iterable[Agent], states: Iterable[StoredEvent], spent: dict[str, Spent], ruled: Iterable[dict], since: float) -> list[dict[str, Any]]:
    """Each agent that did something since ``since``, as the page lists it (see the module's docstring)."""
    by_key = {who(agent): agent for agent in agents if not PaneAddress.parse(agent.pane_id).placeholder}
    by_address = {agent.pane_id: agent for agent in by_key.values()}
    finished: dict[str, list[float]] = {}
    for event in states:
        # A turn ends when the agent goes idle from a state of its own (working, or a wait answered): not from "starting".
        if event.ts >= since and event.agent in by_key and event.payload.get("to") == AgentState.IDLE.value and event.payload.get("from") not in (None, "", "starting"):
            finished.setdefault(event.agent, []).append(event.ts)
    answered: dict[str, list[dict]] = {}
    for answer in ruled:
        agent = by_address.get(address_of(str(answer.get("pane", "")), str(answer.get("host", ""))))
        if agent is not None and float(answer.get("ts", 0)) >= since:
            answered.setdefault(who(agent), []).append(answer)
    entries = []
    for key, agent in by_key.items():
        blocked = [b for b in agent.blocks if b.at >= since]
        ends, rules, cost = finished.get(key, []), answered.get(key, []), spent.get(key, Spent())
        if not (ends or blocked or rules or cost.tokens.total or cost.cost_usd):
            continue
        entries.append(
            {
                "address": agent.pane_id,
                "target": agent.target,
                "host": agent.host,
                "state": agent.state.value,
                "finished": len(ends),
                "finished_last": max(ends) if ends else None,
                "blocked": [{"tool": b.tool, "detail": b.detail, "reason": b.reason, "at": b.at} for b in sorted(blocked, key=lambda b: -b.at)[:MAX_LINES]],
                "blocked_count": len(blocked),
                "ruled": [{key: answer.get(key) for key in ("ts", "rule", "decision", "tool", "detail")} for answer in sorted(rules, key=lambda a: -float(a.get("ts", 0)))[:MAX_LINES]],
                "ruled_count": len(rules),
                "cost_usd": round(cost.cost_usd, 4),
                "tokens": cost.tokens.total,
                "unpriced": cost.unpriced,
            }
        )
    return sorted(entries, key=lambda e: (-(e["blocked_count"] + e["ruled_count"] + e["finished"]), -e["cost_usd"], e["target"]))


def spent_since(events: Iterable[StoredEvent], since: float, spent_of) -> dict[str, Spent]:
    """Each agent's ``spent`` since ``since``, summed by its key (the usage ledger's events)."""
    sums: dict[str, Spent] = {}
    for event in events:
        if event.ts < since or not event.agent:
            continue
        spent = spent_of(event)
        if spent is not None:
            sums[event.agent] = sums.get(event.agent, Spent()) + spent
    return sums
