"""The rules' life, as one read model of the event log: loads, uses, pauses, revocations, ends and who is at work.

A rule's ttl, ``max_uses``, pauses, revocation and ``until = "idle"`` end
are all kept in the event log, so a restart renews none of them.  The
service reads them once (``load``), keeps them from the events it writes
itself (``record``: folded at once, recognised by their ``nonce`` when
the log gives them back), and reads only what is new at each request
(``refresh``: rows past the last id seen, such as ``headspace rules
pause`` wrote from another process).

It fails closed.  When the log cannot be read (no log at all, locked past
its timeout, damaged, a row of these kinds the service cannot read), the
state is ``unreadable`` with why, and the caller treats every live rule as
a shadow rule: a pause or revocation it cannot see must not be answered
past.  A full read is tried again every ``RETRY`` seconds.

Time only moves forward here (``now``): the latest time the log holds
counts as now, and a ttl once over is written down (``rule_expired``), so
a clock set back, even across a restart, never revives a rule.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...rules.model import Rule
from ...rules.pauses import PAUSE, REVOKE, is_paused
from ...state.eventlog import EventLog, EventLogError, StoredEvent
from ..records.journal import Journal

log = logging.getLogger(__name__)

LOADED, ANSWER, DONE, WORK, EXPIRED = "rule_loaded", "rule_answer", "rule_done", "rule_work", "rule_expired"
KINDS = (LOADED, ANSWER, PAUSE, REVOKE, DONE, WORK, EXPIRED)
RETRY = 5.0  # seconds between two full reads of a log that could not be read
TIMES_KEPT = 200  # per rule, the answer times kept for its pace
Key = tuple[str, str]  # a rule as written: (id, a hash of its text)


def keys_of(value: object) -> set[Key]:
    """The rule keys an answer event names: one [id, hash], or a list of them (an answer of several rules)."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return {(value[0], value[1])}
    if isinstance(value, list):
        return {(v[0], v[1]) for v in value if isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)}
    return set()


class BadRow(ValueError):
    """A row of the rules' kinds whose fields are not what they must be."""


@dataclass
class Folded:
    """What the rules' events say, folded in order."""

    first: dict[Key, float] = field(default_factory=dict)  # when each rule (as written) was first loaded
    uses: dict[Key, int] = field(default_factory=dict)
    answered_at: dict[Key, list[float]] = field(default_factory=dict)  # its recent answers (its pace)
    paused: dict[tuple[str, str], bool] = field(default_factory=dict)  # (host, rule) → paused ("" all)
    revoked: set[Key] = field(default_factory=set)
    expired: set[Key] = field(default_factory=set)  # a ttl once seen over stays over, whatever the clock says later
    done: set[tuple[Key, str]] = field(default_factory=set)  # (rule, agent) an until-idle rule ended for
    at_work: set[str] = field(default_factory=set)  # agents at work on a task (their mark survives a restart)
    answered_for: set[tuple[Key, str]] = field(default_factory=set)  # (rule, agent) it answered: its task's end ends it there
    pace_from: dict[str, float] = field(default_factory=dict)  # rule id ("" every rule) → its last pause or resume: a pace counts from there
    latest: float = 0.0  # the latest time an event says

    def fold(self, kind: str, agent: str | None, ts: float, payload: dict) -> None:
        if "_unreadable" in payload:
            raise BadRow("its payload is not JSON")
        self.latest = max(self.latest, ts)
        if kind == LOADED:
            key = (_text(payload, "rule"), _text(payload, "text"))
            self.first.setdefault(key, ts)
        elif kind == ANSWER:
            for key in keys_of(payload.get("rule_key")):
                self.uses[key] = self.uses.get(key, 0) + 1
                if isinstance(agent, str):
                    self.answered_for.add((key, agent))
                self.answered_at[key] = [*self.answered_at.get(key, ())[-TIMES_KEPT + 1 :], ts]
        elif kind == PAUSE:
            on, host, rule = payload.get("on"), _text(payload, "host"), _text(payload, "rule")
            if not isinstance(on, bool):
                raise BadRow("a pause that says neither on nor off")
            if not on and not host and not rule:
                self.paused = {}  # resume everything: every pause ends
            else:
                self.paused[(host, rule)] = on
            self.pace_from[rule] = ts
        elif kind == REVOKE:
            self.revoked.add((_text(payload, "rule"), _text(payload, "text")))
        elif kind == EXPIRED:
            self.expired.add((_text(payload, "rule"), _text(payload, "text")))
        elif kind == DONE:
            named = keys_of(payload.get("rule_key"))
            if len(named) != 1 or not isinstance(agent, str):
                raise BadRow("an end that names no rule or no agent")
            self.done.add((named.pop(), agent))
        elif kind == WORK:
            on = payload.get("on")
            if not isinstance(on, bool) or not isinstance(agent, str):
                raise BadRow("an 'at work' mark that says neither")
            (self.at_work.add if on else self.at_work.discard)(agent)


def _text(payload: dict, name: str) -> str:
    value = payload.get(name, "")
    if not isinstance(value, str):
        raise BadRow(f"its {name} is not text")
    return value


def read_state(path: Path) -> tuple[Folded, str]:
    """The rules' state as the event log at ``path`` holds it, and why it cannot be read ("" when it can; a log not made yet holds nothing)."""
    if not path.exists():
        return Folded(), ""
    folded = Folded()
    try:
        with EventLog(path) as events:
            for row in events.query(kinds=KINDS):
                try:
                    folded.fold(row.kind, row.agent, row.ts, row.payload)
                except BadRow as exc:
                    return Folded(), f"a {row.kind} event (id {row.id}) cannot be read: {exc}"
    except EventLogError as exc:
        return Folded(), str(exc)
    return folded, ""


class RuleState:
    """The read model: ``unreadable`` says why it cannot be trusted ("" while it can)."""

    def __init__(self, journal: Journal | None, clock: Callable[[], float], on_unreadable: Callable[[str], None] = lambda why: None) -> None:
        self.journal = journal
        self.clock = clock
        self.folded = Folded()
        self.unreadable = ""
        self._last_id = 0
        self._retry_at = 0.0
        self._mine: set[str] = set()  # nonces of the events this service wrote, not yet read back
        self._nonces = itertools.count(1)
        self._run = f"{os.getpid()}-{id(self):x}"
        self._now = 0.0
        self.on_unreadable = on_unreadable  # told when it starts (or stops: "") being unreadable
        self.load()

    # -- reading ------------------------------------------------------------------------
    def load(self) -> None:
        """Read the whole of the rules' history anew (at start, and after the log could not be read)."""
        self.folded, self._last_id, self._mine = Folded(), 0, set()
        self._read()

    def refresh(self) -> None:
        """Fold in what the log gained since the last look (another process's pause, say); retry a log that failed."""
        if self.unreadable:
            if self.clock() >= self._retry_at:
                self.load()
            return
        self._read()

    def _read(self) -> None:
        journal = self.journal
        if journal is None or journal.log is None:
            self._fail("no event log to keep the rules' state in (it could not be opened)")
            return
        try:
            if self._last_id:
                rows, newest = journal.log.tail(KINDS, self._last_id)
            else:  # the first read, by the kind index
                rows = journal.log.query(kinds=KINDS)
                newest = max((row.id for row in rows), default=0)
        except EventLogError as exc:
            self._fail(str(exc))
            return
        for row in rows:
            try:
                self._fold_row(row)
            except BadRow as exc:
                self._fail(f"a {row.kind} event (id {row.id}) cannot be read: {exc}")
                return
        self._last_id = max(self._last_id, newest)
        if self.unreadable:
            log.info("the rules' state can be read again")
            self.unreadable = ""
            self.on_unreadable("")

    def _fold_row(self, row: StoredEvent) -> None:
        nonce = row.payload.get("nonce")
        if isinstance(nonce, str) and nonce in self._mine:
            self._mine.discard(nonce)  # folded when it was written
            return
        self.folded.fold(row.kind, row.agent, row.ts, row.payload)

    def _fail(self, why: str) -> None:
        self._retry_at = self.clock() + RETRY
        if self.unreadable != why:
            log.warning("the rules' state cannot be read (live rules act as shadow rules): %s", why)
            self.unreadable = why
            self.on_unreadable(why)

    # -- writing ------------------------------------------------------------------------
    def record(self, events: list[dict]) -> None:
        """Write the service's own events: folded now, written through the journal, and known again when read back."""
        now = self.now()
        for event in events:
            event.setdefault("ts", now)
            if event["kind"] in KINDS:  # only these come back in a refresh, to be known by their nonce
                nonce = f"{self._run}-{next(self._nonces)}"
                event["nonce"] = nonce
                self._mine.add(nonce)
            payload = {k: v for k, v in event.items() if k not in ("kind", "agent", "ts")}
            try:
                self.folded.fold(event["kind"], event.get("agent"), event["ts"], payload)
            except BadRow:  # never of our own making; the write is still kept
                log.exception("an event of the rules' own could not be folded")
        if self.journal is not None:
            self.journal.writer.write(events)
        if self.journal is None or self.journal.log is None:
            self._mine.clear()  # nothing will come back to be recognised

    # -- what it says -------------------------------------------------------------------
    def now(self) -> float:
        """The clock, never behind the latest time the log holds or this run saw: a clock set back revives nothing."""
        self._now = max(self.clock(), self.folded.latest, self._now)
        return self._now

    def first(self, rule: Rule) -> float | None:
        return self.folded.first.get(rule.key)

    def uses(self, rule: Rule) -> int:
        return self.folded.uses.get(rule.key, 0)

    def recent(self, rule: Rule, window: float) -> int:
        """How often ``rule`` answered within the last ``window`` seconds, since it was last paused or resumed."""
        since = max(self.now() - window, self.folded.pace_from.get(rule.id, 0.0), self.folded.pace_from.get("", 0.0))
        return sum(1 for t in self.folded.answered_at.get(rule.key, ()) if t > since)

    def paused(self, rule_id: str, host: str) -> bool:
        return is_paused(self.folded.paused, rule_id, host)

    def paused_itself(self, rule_id: str) -> bool:
        """Is this rule paused by a pause of its own, on every host?"""
        return self.folded.paused.get(("", rule_id), False)

    def revoked(self, rule: Rule) -> bool:
        return rule.key in self.folded.revoked

    def expired(self, rule: Rule) -> bool:
        return rule.key in self.folded.expired

    def ended_for(self, rule: Rule, agent: str) -> bool:
        return (rule.key, agent) in self.folded.done

    def answered(self, rule: Rule, agent: str) -> bool:
        return (rule.key, agent) in self.folded.answered_for

    def at_work(self, agent: str) -> bool:
        return agent in self.folded.at_work
