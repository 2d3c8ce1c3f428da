"""What the rules did, in the event log, and what a front end does about it: the list of their answers, pause, resume and revoke.

Every answer a rule gives (and what a shadow or ``notify`` rule would have
done) is one event naming the rule, the rules file's hash, the fields that
matched, the host and the pane.  The phone page's "answered for you" and
``headspace rules`` read them here, and pause, resume or revoke through
``control``; the service reads the pauses back through the rules' state
(``rule_state.py``).
"""

from __future__ import annotations

import logging

from ...model import Agent
from ...rules.pauses import PAUSE, REVOKE, pause_event, pause_words, revoke_event
from ...rules.rules_file import Loaded
from ...state.eventlog import EventLogError
from ..records.journal import Journal
from .rule_book import RuleBook
from .rule_state import ANSWER, RuleState

log = logging.getLogger(__name__)
RECENT_SHOWN = 50  # the rules' answers a front end lists at most


def who(agent: Agent) -> str:
    """The agent as the rules' events name it: who it is for history (its pane when not known)."""
    return agent.key or agent.pane_id


class RuleLedger:
    def __init__(self, book: RuleBook, state: RuleState, journal: Journal | None) -> None:
        self.book = book
        self.state = state
        self.journal = journal

    def write(self, kind: str, agent: Agent, payload: dict, loaded: Loaded) -> None:
        """One rule's answer (``kind``: answer, shadow, notify) for ``agent``, with its audit ``payload``."""
        log.info("%s: %s", kind, payload)
        keys = [list(rule.key) for rule_id in payload["rule"].split("+") if (rule := loaded.rule(rule_id))]
        self.state.record([{"kind": kind, "agent": who(agent), **payload, "rule_key": keys[0] if len(keys) == 1 else keys}])

    def pause(self, rule_id: str, why: str, *, on: bool = True, host: str = "") -> None:
        """Pause (``on``) or resume one rule (or all: ``rule_id`` "") on one host (or all), saying why."""
        self.state.record([{"kind": PAUSE, "agent": None, **pause_event(on, rule_id, host, why)}])

    def recent(self, since: float, limit: int = RECENT_SHOWN) -> list[dict]:
        """The rules' answers since ``since``, newest first, each with its rule's state now (answering, paused, revoked, gone)."""
        loaded = self.book.current()
        self.state.refresh()
        out = []
        for event in sorted(self._events(ANSWER, since), key=lambda e: -e.ts)[:limit]:
            p = event.payload
            rules = [loaded.rule(rule_id) for rule_id in str(p.get("rule", "")).split("+")]
            host = str(p.get("host", ""))
            if any(r is None for r in rules):
                state = "gone"
            elif any(self.state.revoked(r) for r in rules if r is not None):
                state = "revoked"
            elif any(self.state.paused(r.id, host) for r in rules if r is not None):
                state = "paused"
            else:
                state = "answering"
            out.append(
                {
                    "ts": event.ts,
                    "rule": str(p.get("rule", "")),
                    "decision": str(p.get("decision", "")),
                    "host": host,
                    "pane": str(p.get("pane", "")),
                    "family": str(p.get("family", "")),
                    "tool": str(p.get("tool", "")),
                    "detail": str(p.get("detail", "")),
                    "state": state,
                }
            )
        return out

    def control(self, action: str, rule_id: str = "", host: str = "", via: str = "the phone page") -> str:
        """``pause`` / ``resume`` (one rule, or all; on one host or all) or ``revoke`` one rule as it is written now; the line to show.

        A revoked rule answers nothing again until its text in the file
        changes (then it is another rule, with a ttl of its own); a pause
        ends with ``resume``.  Both go to the event log, where the service
        and ``headspace rules list`` read them; ``via``: who asked (the page,
        ``headspace rules``), written as the pause's reason.
        """
        if self.journal is None:
            raise ValueError("no event log: rules cannot be paused or revoked here")
        if action == "revoke":
            if not rule_id:
                raise ValueError("revoke names one rule")
            rule = self.book.current().rule(rule_id)
            if rule is None:
                raise ValueError(f"no rule {rule_id!r} in the rules file")
            self.state.record([{"kind": REVOKE, "agent": None, **revoke_event(rule)}])
            self.book.notice(f"rule {rule.id} revoked: it answers nothing until you edit it")
            return f"rule {rule.id}: revoked"
        if action not in ("pause", "resume"):
            raise ValueError("an action is pause, resume or revoke")
        on = action == "pause"
        self.pause(rule_id, f"{via}: {action}", on=on, host=host)
        return pause_words(on, rule_id, host)

    def _events(self, kind: str, since: float | None = None) -> list:
        """The event log's events of ``kind`` (since ``since``) and those still waiting to be written (none without a journal)."""
        if self.journal is None:
            return []
        with self.journal.writer.reading():  # what still waits first, then the log: none missed (event_writer.reading)
            waiting = [e for e in self.journal.writer.waiting_of(kind) if since is None or e.ts >= since]
            if self.journal.log is None:
                return waiting
            try:
                return self.journal.log.query(kind=kind, since=since) + waiting
            except EventLogError:
                return waiting
