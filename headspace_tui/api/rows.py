"""An agent as plain data: the one shape ``headspace status --json`` prints and the resident service serves.

``headspace status`` asks the running service (resident/) or, with none
for its view, the same service run in its own process for one look; either
way the ``rows`` call (resident/facade_routes.py) makes each agent the same
row here, so the two can never print different fields for the same agent.  A
row is JSON-ready: strings, numbers, lists, None.  ``line`` is not printed
by ``--json`` (it is the text view's one human line; ``row_keys.PUBLIC`` lists
the keys ``--json`` prints, and ``row_keys.well_formed`` checks a row
that came from elsewhere).
"""

from __future__ import annotations

from typing import Any

from ..detect.sources import Source
from ..model import DEFAULT_FAMILY, Agent, Option, PaneAddress
from ..state.wait_words import blocked_words, wait_words
from ..usage.model import Usage


def in_state_for(agent: Agent, now: float) -> float | None:
    """Seconds the agent has been in its state, or None when nothing says when it began."""
    return None if agent.since_source == Source.SIGHT else round(max(0.0, now - agent.since), 1)


def agent_row(agent: Agent, now: float, snoozed: str = "") -> dict[str, Any]:
    """The agent as ``status --json`` prints it (``row_keys.PUBLIC``), plus ``line``: what the text view says of it.

    ``snoozed``: how its wait is put off ("snoozed till 14:05"), as the
    service that holds the snoozes says; a wait put off does not need you.
    """
    obs = agent.observation
    return {
        "host": agent.host,
        "target": agent.target,
        "pane_id": PaneAddress.parse(agent.pane_id).pane,
        "state": agent.state.value,
        "tool": obs.tool or None,
        "detail": obs.detail or None,
        "options": obs.option_labels,
        "question": obs.question or None,
        # A multi-select question's ticked options (their numbers): what 'send --submit' sends.
        "ticked": list(obs.prompt.ticked) if obs.prompt else [],
        "error": obs.error or None,
        "retrying": obs.retrying,  # working, and Claude retries a failed request ("error" says which)
        "exit_status": obs.exit_status,
        # The prompt's words, the same each time they are asked.
        "fingerprint": obs.prompt.fingerprint if obs.prompt and obs.prompt.fingerprint else None,
        # What 'send --expect' checks: this appearance of the prompt, and no later one with the same words.
        "request": obs.request or None,
        "snoozed": snoozed or None,  # the wait the user put off (the service's one set of snoozes), or null
        # Its permission mode: manual, auto, accept-edits, plan, bypass, dont-ask; "unknown" when nothing said.
        "mode": agent.mode or "unknown",
        # The calls its mode's check blocked (Claude's auto mode), oldest first; this_turn: since its user's last prompt.
        "blocked": [{**b.to_json(), "this_turn": b.at >= agent.turn_since} for b in agent.blocks],
        "cwd": agent.cwd,
        # What its work tree changed this turn, "+12 −3 · 2 files" (the service's baselines: docs/changes.md); null: nothing known.
        "change": agent.change or None,
        "since": agent.since,  # as before: the look's own time when nothing dates the state
        # How long in this state (seconds), and who says when it began (Claude's status
        # file, or the event log of an earlier headspace); null: nothing says.
        "in_state_for": in_state_for(agent, now),
        "since_source": agent.since_source if agent.since_source != Source.SIGHT else None,
        "agent": agent.family,  # claude, codex, gemini, opencode
        "agent_version": agent.agent_version or None,
        # Older readers' field, from before there were families: the version of an agent of the default family.
        "claude_version": (agent.agent_version or None) if agent.family == DEFAULT_FAMILY else None,
        **usage_fields(agent.usage),
        "limited_until": agent.limited_until or None,  # stopped by its rate limit (state "limited"): when it resets, epoch seconds
        "line": describe(agent),
    }


def usage_fields(usage: Usage | None) -> dict[str, Any]:
    """Its tokens, context and cost as its own files tell them (service/records/usage_tally.py); nulls where nothing says."""
    if usage is None:
        keys = ("model", "context_tokens", "context_pct", "context_window", "context_window_source", "tokens", "cost_usd_est", "cost_leaves_out", "plan_use")
        return dict.fromkeys(keys)
    return {
        "model": usage.model or None,
        "context_tokens": usage.context_tokens,  # what its last request filled of the model's window
        "context_pct": usage.context_pct,  # of that window; null: the model's window is not known
        "context_window": usage.context_window or None,  # tokens; null: not known
        "context_window_source": usage.window_source or None,  # "agent" (its files said), "table" (the price table), "assumed" (the family's default)
        "tokens": usage.tokens.to_dict(),  # the session's: input, output, cache_read, cache_write
        "cost_usd_est": usage.cost_usd,  # at list prices (the price table); null: no model of the session is priced
        "cost_leaves_out": list(usage.unpriced) or None,  # the session's models the estimate could not price
        # The plan's windows where the agent's files name them (Codex's rate_limits); null: nothing says.
        "plan_use": [{"window": p.name, "used_pct": p.used_pct, "resets_at": p.resets_at or None} for p in usage.plan] or None,
    }


def describe(agent: Agent) -> str:
    """One human line: its state (and a mode other than manual), what it waits for or does, then a prompt's options.

    What it waits for is the table's words (state/wait_words.py), so the
    terminal, ``status`` and the page say one thing; this line adds what a
    row has no room for: every option, and a call blocked this turn while a
    prompt holds the row's words.
    """
    obs = agent.observation
    parts = [obs.state.value]
    if agent.mode and agent.mode != "manual":
        parts[0] += f" [{agent.mode}]"
    words = wait_words(agent, badge=False)
    if words:
        parts.append(words)
    prompt = obs.prompt
    if prompt is not None and prompt.options:
        parts.append(" | ".join(option_text(o) for o in prompt.options))
    if agent.blocked_this_turn and obs.state.needs_you:  # a prompt holds the row's words: the block is said after them
        parts.append(blocked_words(agent))
    return " — ".join(parts)


def option_text(option: Option) -> str:
    """One option as ``status`` prints it: "1. Yes", "3. [✔] Search" (a multi-select box, ticked)."""
    box = "" if option.ticked is None else ("[✔] " if option.ticked else "[ ] ")
    return f"{option.key}. {box}{option.label}" if option.key else f"{box}{option.label}"


def host_problems(hosts: list[tuple[str, str | None]]) -> list[str]:
    """One line per host with a problem (``Service.hosts()``), as ``status`` and the web page say them: a host still on its first look says so."""
    lines = []
    for host, problem in hosts:
        if problem == "starting":
            problem = "still on its first look"
        if problem:
            lines.append(problem if problem.startswith(host) else f"{host}: {problem}")
    return lines


def away_line(entry: dict[str, Any]) -> str:
    """One agent's entry in one line, as the terminal says it ("w:0.0: finished 2 turns · 1 call blocked · 3 rule answers · $0.12")."""
    parts = []
    if entry["finished"]:
        parts.append("finished a turn" if entry["finished"] == 1 else f"finished {entry['finished']} turns")
    if entry["blocked_count"]:
        last = entry["blocked"][0]
        parts.append(f"auto mode blocked {entry['blocked_count']} (last: {last['tool']}: {last['detail']})")
    if entry["ruled_count"]:
        parts.append(f"{entry['ruled_count']} answered by rules")
    if entry["cost_usd"] >= 0.01:
        parts.append(f"${entry['cost_usd']:.2f}")
    elif entry["tokens"]:
        parts.append(f"{entry['tokens']:,} tokens")
    where = entry["target"] if entry["host"] == "local" else f"{entry['host']}:{entry['target']}"
    return f"{where} (now {entry['state']}): " + " · ".join(parts)
