"""The agents of one tmux server, and the one place they change: observations in, typed events out.

The monitor decides what to read and when; each fused observation of a pane
comes here.  The store turns it into that pane's ``Agent`` and tells its
subscribers what changed (events.py), in the order they subscribed: the
journal first, then the front end.  Nothing else writes an agent (the
journal's command and outcome come back here through ``work``), so a
subscriber can trust that an ``AgentChanged`` is the whole story; and
everything one reading changes about an agent (its state, the answer desk's
hook tag, an answer given in the pane) is told as one ``AgentChanged``
(``one_reading``).

An error in a subscriber is logged and goes no further: it must not stop
the detector that made the observation.  No Textual here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from ...detect.claude.status_files import ClaudeStatus
from ...detect.clock import Clock
from ...detect.sources import Source
from ...events import AgentChanged, AgentRemoved, CallBlocked, Event, TurnBegan
from ...model import DEFAULT_FAMILY, Agent, AgentState, Blocked, Channel, Evidence, Observation, PaneAddress
from ...tmux.server import PaneRecord
from ...usage.limits import reset_at
from ...usage.model import Usage
from .appearances import Appearances
from .prompts_told import PromptsTold
from .scan import new_agent

log = logging.getLogger(__name__)


def same_observation(a: Observation, b: Observation) -> bool:
    """Equal for the table: same state, same appearance of the same prompt with the same boxes ticked, same error (evidence may differ).

    A tick is not in the fingerprint (it is the same question, still
    answerable with the keys the user saw), but the row shows it.
    """
    return (
        a.state is b.state
        and a.request == b.request
        and (a.prompt.fingerprint if a.prompt else "") == (b.prompt.fingerprint if b.prompt else "")
        and (a.prompt.ticked if a.prompt else ()) == (b.prompt.ticked if b.prompt else ())
        and a.error == b.error
        and a.retrying == b.retrying
        and a.exit_status == b.exit_status
    )


BLOCKS_KEPT = 20  # blocked calls kept per agent (status --json, e, the page); the event log keeps them all
EXACT = ("hook", "transcript")  # who tells a blocked call exactly, by its id


def fuller(new: Blocked, old: Blocked) -> bool:
    """Whether ``new`` says more of the same block than ``old``: the exact call (hook, transcript), a call where none was named, an uncut command or reason.

    Of the two exact words the hook's wins: the agent sent it about this call
    as it happened, the transcript is its record.  Which of the two was read
    first depends on the machine's load; the row's source then does not.
    """
    if old.source in EXACT:
        return new.source == "hook" and old.source != "hook"
    return new.source in EXACT or len(new.detail.rstrip("…")) > len(old.detail.rstrip("…")) or len(new.reason.rstrip("…")) > len(old.reason.rstrip("…"))


def counted(block: Blocked) -> bool:
    """A block the screen knows only from a group's count ("2 actions blocked by auto mode"): no call, no reason."""
    return block.source == "screen" and not block.detail and not block.reason


def same_block(new: Blocked, old: Blocked) -> bool:
    """One blocked call told twice: by the hook (exact) and the screen (as drawn: a long command cut with "…"; the
    notice above the box: its reason only, maybe cut), or the screen twice; the hook and the transcript name the call by its id."""
    if new.call and old.call:
        return new.call == old.call
    if counted(new) or counted(old):
        # A group's count drew this one with nothing of its own ("2 actions blocked by auto mode"): any block of
        # its tool this turn is it (the fuller word then takes its place).
        return not (new.tool and old.tool) or new.tool == old.tool
    if new.source in EXACT and old.source in EXACT or new.tool and old.tool and new.tool != old.tool:
        return False  # each PermissionDenied is a call of its own, a retry of the same one too
    a, b = " ".join(new.detail.split()).rstrip("…"), " ".join(old.detail.split()).rstrip("…")
    if not a or not b:  # the notice names no call: one block when its reason (maybe cut) is the other's
        return new.agrees(old)
    return a.startswith(b) or b.startswith(a)


class AgentStore:
    """Every watched pane's agent, by pane id, and the subscribers told of each change."""

    def __init__(self, host: str = "local") -> None:
        self.host = host
        self.remembered_blocks: Callable[[str], tuple[Blocked, ...]] = lambda key: ()  # the journal's, by agent key (monitor.py wires it)
        self.agents: dict[str, Agent] = {}
        self._subscribers: list[Callable[[Event], None]] = []
        # Per pane: the one claim of when its current state began (detect/clock.py).
        self._clocks: dict[str, Clock] = {}
        # Per pane: which appearance of its prompt is on display, the id every answer carries.
        self.appearances = Appearances()
        # Off for a one-shot look: an appearance is named by the service that goes on watching it, and a
        # look ends with its rows, so a name it gave would be carried by an --expect that no one keeps.
        self.names_appearances = True
        # Why the host cannot be read, from ``offline`` until ``online``: a pane read meanwhile (tmux
        # answering through ssh while the host's reader there is down) does not make a row live.
        self._stale = ""
        # While the monitor stops nothing is told: in Python 3.11 a cancelled
        # ``wait_for`` can still return a result that arrived at the same
        # moment, so a detector may finish one last read after it was told to
        # stop, and the app may be tearing its widgets down.
        self.quiet = False
        self._held: list[Event] | None = None  # events of the reading under way (one_reading)
        self._prompts = PromptsTold()  # per pane: the prompts the hook and the transcript told, matched (its host's clock)
        self._drawn: dict[str, tuple[Blocked, ...]] = {}  # per pane: the kept blocks its last screen reading showed

    def subscribe(self, subscriber: Callable[[Event], None]) -> None:
        """Be told every event from now on, in order (subscribers are called in the order they came)."""
        self._subscribers.append(subscriber)

    @contextmanager
    def one_reading(self) -> Iterator[None]:
        """Tell what a reading changed once it is all known: one ``AgentChanged`` per agent, where its first would have been."""
        if self._held is not None:
            yield  # already inside one
            return
        self._held = []
        try:
            yield
        finally:
            held, self._held = self._held, None
            for event in held:
                self._tell(event)

    def emit(self, event: Event) -> None:
        if self._held is not None:
            if isinstance(event, AgentChanged):
                for i, earlier in enumerate(self._held):
                    if isinstance(earlier, AgentChanged) and earlier.agent is event.agent:
                        self._held[i] = AgentChanged(event.agent, earlier.old_state, event.at)
                        return
            self._held.append(event)
            return
        self._tell(event)

    def _tell(self, event: Event) -> None:
        if self.quiet:
            return
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:  # a subscriber's fault stays with the subscriber
                log.exception("a subscriber failed on %s", type(event).__name__)

    def observed(
        self,
        record: PaneRecord,
        key: str,
        observation: Observation,
        at: float,
        *,
        agent_pid: int | None,
        status: ClaudeStatus | None = None,
        agent_version: str = "",
        family: str = DEFAULT_FAMILY,
        claims: Mapping[str, float] | None = None,
        captured: float | None = None,
    ) -> Agent:
        """A pane was read (or a hook or status file spoke): its agent as it is now.

        A reading equal for the table keeps the object the UI already shows
        and tells no one; a new prompt restarts the prompt's clock.  When the
        state began is one claim (``Clock``): ``claims`` is what each source
        says (status file, hook, transcript, an earlier run's journal), the
        most trusted wins, and within one state it only ever moves earlier;
        so a state seen late (headspace started mid-turn, or restarted) keeps
        its real start, and no time on screen jumps back.  ``captured``: when
        the screen capture behind this reading began (None: no new capture).
        """
        clock = self._clocks.get(record.pane_id)
        if clock is None:
            clock = self._clocks[record.pane_id] = Clock()
        claim = clock.update(observation.state, claims or {}, at, observation.prompt.fingerprint if observation.prompt else "")
        since = claim.at
        request = self.appearances.see(record.pane_id, observation, captured) if self.names_appearances else ""
        if request != observation.request:
            observation = replace(observation, request=request)
        observation = observation.stamped()  # kept below (when new): an id of its own, whatever it was made from
        agent = self.agents.get(record.pane_id)
        if agent is None:
            agent = new_agent(record, key, observation, claim, at, agent_pid=agent_pid, status=status, agent_version=agent_version, family=family, host=self.host)
            # A service started again finds its blocks as the log kept them (their times, once each), not as new ones.
            agent.blocks = self.remembered_blocks(key)[-BLOCKS_KEPT:]
            self.agents[record.pane_id] = agent
            self.emit(AgentChanged(agent, None, at))
            return agent
        changed = not same_observation(agent.observation, observation) or agent.target != record.target or bool(agent.offline) != bool(self._stale)
        if self._stale:  # the screen is read, but what else says its state (the reader there) is not: still stale
            if not agent.offline:
                agent.offline, agent.offline_since = self._stale, at
        else:
            agent.offline, agent.offline_since = "", 0.0  # read again: its host answers
        if request and request != agent.observation.request:
            agent.prompt_since = at  # another prompt, or the same words asked anew
        old_state = agent.observation.state
        if old_state is not observation.state:
            agent.delivery = ""
            # The reset as its words said it when the limit was first read ("resets 3pm": the next 3pm from then).
            agent.limited_until = reset_at(observation.error) if observation.state is AgentState.LIMITED else 0.0
        elif int(agent.since) != int(since):
            changed = True  # a more trusted source, arriving late, dates this state earlier
        agent.since, agent.since_source = since, claim.source
        if changed:
            agent.observation = observation
        agent.target = record.target
        agent.session = record.session_name
        agent.agent_pid = agent_pid or 0
        if status and status.name:
            agent.name = status.name
        if changed:
            self.emit(AgentChanged(agent, old_state, at))
        return agent

    def screen_read(self, pane_id: str, screen: Observation, at: float) -> None:
        """What a capture of the pane shows besides its state (the screen's own reading, not the fused one, which a
        status file or a hook may have taken over): the mode its footer names, the blocks it draws (none: those it
        drew before are gone)."""
        if screen.mode:
            self.mode(pane_id, screen.mode, at)
        if screen.blocked:
            agent, asked = self.agents.get(pane_id), screen.prompt.detail if screen.prompt is not None else ""
            # The call a dialog asks about was blocked as the dialog came (auto mode's pause): dated by when it came.
            since = agent.since if agent is not None and agent.state is screen.state and agent.since else at
            calls = tuple(replace(b, at=min(at, since)) if asked and b.detail == asked and not b.at else b for b in screen.blocked)
            self.blocked(pane_id, calls, at, drawn=True)
        else:
            self._drawn.pop(pane_id, None)

    def moved(self, record: PaneRecord, at: float) -> None:
        """A renamed session or window, a moved pane: the row follows at once.

        A folder the row did not know yet is taken too: a pane read the
        moment it was made can have no folder in tmux's listing (its program
        not started yet), and a quiet pane is not read again to learn it.
        A folder the row knows (Claude's own word) is never replaced here.
        """
        agent = self.agents.get(record.pane_id)
        if agent is None:
            return
        learned = not agent.cwd and bool(record.cwd)
        if (agent.target, agent.session) != (record.target, record.session_name) or learned:
            agent.target, agent.session = record.target, record.session_name
            if learned:
                agent.cwd = record.cwd
            self.emit(AgentChanged(agent, agent.state, at))

    def marked(self, pane_id: str, delivery: str, at: float) -> None:
        """The result of an action, shown on the row ("not delivered: ...")."""
        agent = self.agents.get(pane_id)
        if agent is not None:
            agent.delivery = delivery
            self.emit(AgentChanged(agent, agent.state, at))

    def answered(self, pane_id: str, text: str, at: float) -> None:
        """How the agent's prompt was answered, kept on the row until the next one is."""
        agent = self.agents.get(pane_id)
        if agent is not None:
            agent.answered = text
            self.emit(AgentChanged(agent, agent.state, at))

    def channel(self, pane_id: str, channel: Channel, at: float, call: int | None = None, proposed: dict[str, Any] | None = None, until: float = 0.0) -> None:
        """Whether the dialog on screen can be answered through the hook (``Channel.HOOK``: by ``call``) or only by keys (``NONE``).

        A dialog held by another hook call than the one that held it is
        another request, whatever its words: a new appearance.  ``proposed``:
        the change that call would make, when it edits a file (the row keeps
        it only while the hook holds the dialog); ``until``: when that hook
        stops waiting (its own word; keys answer the dialog after it).
        """
        agent = self.agents.get(pane_id)
        if agent is None:
            return
        proposed = proposed if channel == Channel.HOOK else None
        until = until if channel == Channel.HOOK else 0.0
        changed = agent.channel != channel or agent.proposed != proposed or agent.hook_until != until
        agent.channel = channel
        agent.proposed = proposed
        agent.hook_until = until
        if call is not None and self.appearances.held_by(pane_id, call):
            agent.observation = replace(agent.observation, request=self.appearances.current(pane_id)).stamped()
            agent.prompt_since = at
            changed = True
        if changed:
            self.emit(AgentChanged(agent, agent.state, at))

    def renew(self, pane_id: str, request: str, at: float) -> None:
        """An answer to ``request`` went and ended at ``at``: a prompt a capture begun after that shows is a new appearance, whatever its words."""
        self.appearances.renew(pane_id, request, at)

    def mode(self, pane_id: str, mode: str, at: float) -> None:
        """The permission mode the agent runs in (its hook's ``permission_mode``, or its footer); told when it changes."""
        agent = self.agents.get(pane_id)
        if agent is not None and mode and agent.mode != mode:
            agent.mode = mode
            self.emit(AgentChanged(agent, agent.state, at))

    def turn(self, pane_id: str, at: float, prompt_at: float = 0.0, by: str = "") -> None:
        """The agent's user submitted a prompt: a new turn, whose blocked calls the row shows from here on.

        ``at`` is this clock's (as every block's time is); ``prompt_at`` the
        prompt's own time as the agent's host tells it, and ``by`` who told
        it ("hook", "transcript"): the same prompt told by the other source a
        moment later is not another turn (it would hide the blocks between),
        two told by one source are two (prompts_told.py).
        """
        agent = self.agents.get(pane_id)
        if prompt_at and not self._prompts.new_turn(pane_id, prompt_at, by):
            return
        if agent is not None and at > agent.turn_since:
            marked = bool(agent.blocked_this_turn)
            agent.turn_since = at
            if marked:  # the row's blocked mark was the last turn's: it goes
                self.emit(AgentChanged(agent, agent.state, at))
            self.emit(TurnBegan(agent, at))

    def used(self, pane_id: str, usage: Usage | None) -> None:
        """The agent's tokens, context and estimated cost as its files now tell them (service/records/usage_tally.py), on its row (None: nothing counted)."""
        agent = self.agents.get(pane_id)
        if agent is not None and agent.usage != usage:
            agent.usage = usage
            self.emit(AgentChanged(agent, agent.state, time.time()))

    def changed(self, pane_id: str, summary: str) -> None:
        """What the agent's work tree changed this turn (service/watching/work_changes.py), on its row."""
        agent = self.agents.get(pane_id)
        if agent is not None and agent.change != summary:
            agent.change = summary
            self.emit(AgentChanged(agent, agent.state, time.time()))

    def blocked(self, pane_id: str, calls: tuple[Blocked, ...], at: float, *, drawn: bool = False) -> None:
        """Calls its permission mode's check refused: each new one kept (the last BLOCKS_KEPT) and told as ``CallBlocked``.

        One block told twice is kept once: the hook's word (the exact call)
        and the screen's (the call as drawn, maybe cut; the notice above the
        box: its reason only) of this turn, or what the screen still draws
        of a block it drew at the last reading (``drawn``: these ``calls``
        are all the screen shows now), whichever turn it was dated in.  The
        fuller word wins.  Two ``PermissionDenied`` are two calls.
        """
        agent = self.agents.get(pane_id)
        if agent is None:
            return
        blocks, fresh, better, shown = list(agent.blocks), [], False, []
        still = self._drawn.get(pane_id, ()) if drawn else ()
        for call in calls:
            known = next((i for i, old in enumerate(blocks) if (old.at >= agent.turn_since or any(old is d for d in still)) and same_block(call, old)), None)
            if known is None:
                block = call if call.at else replace(call, at=at)
                fresh.append(block)
                shown.append(block)
                continue
            if fuller(call, blocks[known]):
                # The notice came first (its reason, cut), the note or the hook names the call: keep the fuller word.
                blocks[known] = replace(call, at=blocks[known].at)
                better = True
            shown.append(blocks[known])
        if drawn:
            self._drawn[pane_id] = tuple(shown)
        if not fresh and not better:
            return
        agent.blocks = tuple(sorted((*blocks, *fresh), key=lambda b: b.at))[-BLOCKS_KEPT:]  # in the order they happened
        for block in fresh:
            self.emit(CallBlocked(agent, block, block.at))
        self.emit(AgentChanged(agent, agent.state, at))

    def work(self, pane_id: str, command: str, outcome: str, at: float) -> None:
        """The agent's command and last outcome (from its transcript, through the journal); told only when they change."""
        agent = self.agents.get(pane_id)
        if agent is not None and (agent.command, agent.outcome) != (command, outcome):
            agent.command, agent.outcome = command, outcome
            self.emit(AgentChanged(agent, agent.state, at))

    def offline(self, reason: str, at: float) -> None:
        """The host cannot be read: every row keeps its last reading, marked (once) with why and since when.

        A host never reached has no rows: one placeholder row (``@host``)
        says so, with ssh's own reason, until the host answers.  Until
        ``online``, rows stay marked even when their panes are read (``observe``).
        """
        self._stale = reason
        if not any(not a.placeholder for a in self.agents.values()):
            address = str(PaneAddress("", self.host))
            agent = self.agents.get(address)
            if agent is None or agent.offline != reason:
                agent = self.agents[address] = Agent(
                    pane_id=address,
                    target=self.host,
                    session="",
                    observation=Observation(AgentState.UNKNOWN, evidence=(Evidence("host-unreachable", -1, reason),), source=Source.SSH),
                    since=at,
                    host=self.host,
                    offline=reason,
                    offline_since=at,
                )
                self.emit(AgentChanged(agent, None, at))
            return
        for agent in self.agents.values():
            if not agent.offline:
                agent.offline, agent.offline_since = reason, at
                self.emit(AgentChanged(agent, agent.state, at))

    def online(self) -> None:
        """The host answers again (all of it: tmux and its reader): its placeholder row (if any) goes, and reads make rows live."""
        self._stale = ""
        self.forget(str(PaneAddress("", self.host)))

    def forget(self, pane_id: str) -> None:
        self._clocks.pop(pane_id, None)
        self._prompts.forget(pane_id)
        self._drawn.pop(pane_id, None)
        self.appearances.forget(pane_id)
        agent = self.agents.pop(pane_id, None)
        if agent is not None:
            self.emit(AgentRemoved(pane_id, agent.key or pane_id))
