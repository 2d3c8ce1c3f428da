"""Snoozed waits: an agent the user will get to later, put off for a while or until its wait changes.

Pure, like decide.py.  A snooze belongs to the wait it was made on (its
state and prompt, by the notifier's own rule ``same_wait``): it ends when
that wait ends (the agent works again, goes idle, exits), when a new wait
begins (another command to approve), when its time runs out (``expired``,
asked once a second), or when the user takes it back.  While it lasts the
agent does not count as needing you; when it runs out with the wait still
there, the notifier says it again (``Notifier.remind``); a new wait is news
as always.

Snoozes are keyed by the agent's stable key (``Agent.key``, the pane id
when there is none) and kept in memory only: a restart forgets them, and
the waits they held show as needing you again (the notifier stays quiet at
start-up, so nothing rings for them).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from ..model import Agent, AgentState
from .decide import fingerprint_of, same_wait

UNTIL_IT_CHANGES = math.inf  # a snooze's ``until`` when only a change of its wait ends it
SNOOZED_RANK = 0.5  # where a snoozed wait sorts: below the agents that need you, above the working ones


@dataclass(frozen=True)
class Snooze:
    """One snoozed wait: when the snooze runs out, and the wait (state, prompt fingerprint) it holds."""

    until: float
    wait: tuple[AgentState, str]

    @property
    def timed(self) -> bool:
        return self.until != UNTIL_IT_CHANGES


def key_of(agent: Agent) -> str:
    return agent.key or agent.pane_id


def snoozed_label(snooze: Snooze) -> str:
    """``snoozed till 14:05`` (local time), or ``snoozed till it changes``: the words every front end shows."""
    return f"snoozed till {time.strftime('%H:%M', time.localtime(snooze.until))}" if snooze.timed else "snoozed till it changes"


def snooze_words(agent: Agent, snooze: Snooze | None) -> str:
    """How ``agent``'s wait is put off, in the words every front end shows; "" when it waits for nothing or is not snoozed."""
    return snoozed_label(snooze) if snooze is not None and agent.state.needs_you else ""


class Snoozes:
    """The snoozes on now, per agent key."""

    def __init__(self) -> None:
        self._by_key: dict[str, Snooze] = {}

    def __len__(self) -> int:
        return len(self._by_key)

    def get(self, agent: Agent) -> Snooze | None:
        return self._by_key.get(key_of(agent))

    def snooze(self, agent: Agent, until: float) -> Snooze | None:
        """Put ``agent``'s wait off until ``until`` (``UNTIL_IT_CHANGES``: until it changes); None when it waits for nothing."""
        if not agent.state.needs_you:
            return None
        snooze = self._by_key[key_of(agent)] = Snooze(until, (agent.state, fingerprint_of(agent)))
        return snooze

    def unsnooze(self, agent: Agent) -> bool:
        """Take the snooze back; whether there was one."""
        return self._by_key.pop(key_of(agent), None) is not None

    def observe(self, agent: Agent) -> bool:
        """A new report of ``agent``: whether it ended its snooze (the wait ended, or another one began)."""
        key, state = key_of(agent), agent.state
        snooze = self._by_key.get(key)
        if snooze is None or state is AgentState.UNKNOWN:  # a half-drawn screen ends nothing (as for the notifier)
            return False
        fingerprint = fingerprint_of(agent)
        if state.needs_you and same_wait(snooze.wait, state, fingerprint):
            if fingerprint and not snooze.wait[1]:  # the details arrived: the wait is known by them from now on
                self._by_key[key] = Snooze(snooze.until, (state, fingerprint))
            return False
        del self._by_key[key]
        return True

    def expired(self, now: float) -> list[str]:
        """The keys whose snooze ran out by ``now`` (those snoozes are gone)."""
        ended = [key for key, snooze in self._by_key.items() if snooze.until <= now]
        for key in ended:
            del self._by_key[key]
        return ended

    def all(self) -> dict[str, Snooze]:
        """Every snooze on now, by key (a copy)."""
        return dict(self._by_key)

    def forget(self, key: str) -> None:
        """The agent is gone: its snooze with it."""
        self._by_key.pop(key, None)
