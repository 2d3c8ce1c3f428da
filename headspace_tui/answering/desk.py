"""Who answered an agent, and how: the answer hook's requests beside the rows they belong to.

Each monitor has one ``AnswerDesk``.  With hooks on, it opens its host's
answer channel: this machine's socket (``hooks/channel.py``), or a remote
host's hooks relayed by its probe (``remote/answers.py``), through the same
interface; without, it only keeps the audit.  It

* accepts a hook's request only for a pane this monitor watches, from that
  pane's own Claude process (the pid the hook reports);
* after every reading of a pane, notes whether a waiting request's dialog is
  on screen (``calls.why_not``); a request whose dialog was on screen and is
  gone again was answered elsewhere: unless headspace was sending keys to the
  pane at that moment, the person at the pane answered first.  The hook is
  let go at once (its late decision would be ignored anyway) and the answer
  recorded;
* marks the row ``channel = Channel.HOOK`` while its dialog can be answered
  through the hook, and, when that call edits a file, puts on the row the
  change it would make (``changes/proposed.py``: made once per call, here
  where the agent runs, reading the file itself only on this machine);
* ``decide`` hands a decision to the hook and records it; ``record`` is the
  audit for every answer (hook, keys, pane): the row's ``answered`` text and
  an ``Answered`` event for the journal.

Codex's own hook (a family with a ``held_hook``: detect/family.py) is another kind of
request: Codex draws no dialog until its hooks return, so nobody can look
at it and only the rules may answer it, at once.  It comes without a pane;
the desk asks ``locate`` for the agent whose conversation it is and hands it
to ``held`` (the rules), which answers it or lets it go; without either, or
when no single agent is found, it is let go at once and Codex draws its
dialog, answered by keys like any other.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from ..changes.current_file import reader
from ..changes.proposed import NOT_READ, proposed
from ..detect.families import holds_hook, label_of
from ..events import ANSWERED_HOW, Answered
from ..hooks.calls import QUESTION_TOOL, PendingCall, why_not
from ..hooks.channel import ChannelTaken, ChannelUnavailable, HookChannel, MakeChannel
from ..model import LOCAL_HOST, Agent, AgentState, Channel, Observation
from ..service.records.store import AgentStore
from ..shared.proctree import descends
from .report import ChannelReport

log = logging.getLogger(__name__)

# Seconds a held-back call (Codex's hook, which waits 3 s: its family's HeldHook.wait) may take to be placed and
# judged; later, it is let go rather than answered, so no answer is recorded that its hook was no longer there to take.
HELD_WAIT = 2.0

# Screens that say nothing about whether a dialog is still up: a frame between two drawings.
_UNSURE = (AgentState.UNKNOWN, AgentState.STARTING)


def _one(fits: list[PendingCall]) -> PendingCall | None:
    """The request the dialog on screen is, among those that fit it: the newest (the latest drawn).

    Two that fit but ask different things (never seen, but possible with
    parallel tool calls) are no answer: keys then.
    """
    if not fits or len({c.exact_input for c in fits}) > 1:
        return None
    return fits[-1]


@dataclass(frozen=True)
class Watched:
    agent: Agent
    agent_pid: int


class AnswerDesk:
    def __init__(self, store: AgentStore, watched: Callable[[str], Watched | None], clock: Callable[[], float]) -> None:
        self.store = store
        self.watched = watched
        self.clock = clock
        self.channel: HookChannel | None = None
        self.taken = False  # the last open found another headspace holding the channel
        self._shown: set[int] = set()  # requests whose dialog has been on screen
        self._keys: set[str] = set()  # panes headspace is sending keys to right now
        self.last: dict[str, Answered] = {}  # the last answer per pane, for the why view
        self._changes: dict[int, dict[str, Any] | None] = {}  # each waiting request's proposed change (None: no file edit)
        # A held-back call (Codex's hook): which pane's agent asked, and who may answer it (the service's rules).
        self.locate: Callable[[PendingCall], Awaitable[str | None]] | None = None
        self.held: Callable[[PendingCall], object] | None = None
        self._locating: set[asyncio.Task] = set()

    # -- the channel ---------------------------------------------------------------
    async def open(self, make: MakeChannel) -> str | None:
        """Listen for answer hooks on the channel ``make`` makes (the host's); the reason (one line) when that cannot be."""
        channel = make(accept=self._accept, on_gone=self._gone, clock=self.clock)
        self.taken = False
        try:
            await channel.start()
        except ChannelUnavailable as exc:
            self.taken = isinstance(exc, ChannelTaken)  # another headspace has it: worth asking again later
            return str(exc)
        self.channel = channel
        return None

    async def close(self) -> None:
        if self.channel is not None:
            await self.channel.close()
            self.channel = None
        self._shown.clear()
        self._changes.clear()

    def _accept(self, call: PendingCall) -> bool:
        if holds_hook(call.family):
            return self._hold(call)
        seen = self.watched(call.pane_id)
        if seen is None or seen.agent.offline:
            return False
        if call.pid and seen.agent_pid and call.pid != seen.agent_pid:
            return False  # the same %N on another tmux server, or another Claude
        self.observed(call.pane_id)  # a dialog already drawn shows it is answerable now
        return True

    def _hold(self, call: PendingCall) -> bool:
        """A Codex call: kept while its agent is looked for, then handed to the rules (or let go)."""
        if self.locate is None or self.held is None:
            return False
        try:
            task = asyncio.get_running_loop().create_task(self._place(call))
        except RuntimeError:
            return False
        self._locating.add(task)
        task.add_done_callback(self._locating.discard)
        return True

    async def _place(self, call: PendingCall) -> None:
        assert self.locate is not None and self.held is not None
        pane_id: str | None = call.pane_id or None  # a hook run in its agent's pane names it
        if pane_id is None:
            try:
                pane_id = await self.locate(call)
            except Exception:  # a failed search leaves the call to the agent's own dialog
                log.exception("finding the agent of a held hook call")
                pane_id = None
        seen = self.watched(pane_id) if pane_id else None
        late = self.clock() - call.arrived > HELD_WAIT  # its hook is about to give up: an answer now might not land
        # A hook in the pane names the agent's process, or one under it: read here, so only this machine's (another host's is let go).
        stranger = seen is not None and call.pid > 0 and (seen.agent.host != LOCAL_HOST or not descends(call.pid, seen.agent_pid))
        if pane_id is None or seen is None or seen.agent.offline or seen.agent.family != call.family or late or stranger:
            label = label_of(call.family)
            why = (
                f"no single watched {label} agent owns its conversation"
                if pane_id is None or seen is None
                else "too late"
                if late
                else f"its process is not under the pane's {label} agent"
                if stranger
                else f"its pane is not a {label} agent's"
            )
            log.info("a %s hook call (%s) let go to its dialog: %s", label, call.describe(), why)
            self.let_go(call)
            return
        self.held(replace(call, pane_id=pane_id))

    def _gone(self, call: PendingCall) -> None:
        """The hook left on its own (its wait ran out): the dialog is the keys' again."""
        if not call.pane_id:
            return  # a held-back call never tagged a row
        self._shown.discard(call.id)
        self._changes.pop(call.id, None)
        self._tag(call.pane_id)

    # -- after every reading ---------------------------------------------------------
    def observed(self, pane_id: str) -> None:
        if self.channel is None:
            return
        calls = self.channel.pending(pane_id)
        seen = self.watched(pane_id)
        if seen is None:
            for call in calls:
                self.let_go(call)
            return
        observation = seen.agent.observation
        fits = []
        for call in calls:
            if not why_not(call, observation, seen.agent_pid):
                self._shown.add(call.id)
                fits.append(call)
            elif call.id in self._shown and observation.state not in _UNSURE and self._moved_on(observation):
                self.let_go(call)
                if pane_id not in self._keys:
                    self.record(seen.agent, Channel.PANE, call.describe(), call)
        holder = _one(fits)
        if holder is None:
            self.store.channel(pane_id, Channel.NONE, self.clock())
        else:
            self.store.channel(pane_id, Channel.HOOK, self.clock(), holder.id, self.change(holder, seen.agent), holder.until)

    @staticmethod
    def _moved_on(observation) -> bool:
        """The dialog is gone: another state, or another prompt drawn in full."""
        if not observation.state.is_menu:
            return True
        return observation.prompt is not None and bool(observation.prompt.options)

    def let_go(self, call: PendingCall) -> None:
        """Let the hook go without a decision: the dialog is answered by keys (or, for Codex, drawn now)."""
        self._shown.discard(call.id)
        self._changes.pop(call.id, None)
        if self.channel is not None:
            self.channel.release(call.id)

    def _tag(self, pane_id: str) -> None:
        call = self.call_for(pane_id)
        seen = self.watched(pane_id)
        if call is None or seen is None:
            self.store.channel(pane_id, Channel.NONE, self.clock())
        else:
            self.store.channel(pane_id, Channel.HOOK, self.clock(), proposed=self.change(call, seen.agent), until=call.until)

    def change(self, call: PendingCall, agent: Agent) -> dict[str, Any] | None:
        """The change ``call`` would make (``Diff.to_dict()``), None when it edits no file; made once per request.

        The file is read only where headspace runs beside the agent: a
        remote host's is not read from here (the diff is then of the call's
        own text, and says so).
        """
        if call.id not in self._changes:
            local = agent.host == LOCAL_HOST
            diff = proposed(call.tool_name, call.tool_input, reader(call.cwd or agent.cwd) if local else None)
            if diff is not None and not local:
                diff = replace(diff, note=diff.note.replace(NOT_READ, f"{NOT_READ} (on {agent.host})", 1))
            self._changes[call.id] = diff.to_dict() if diff is not None else None
        return self._changes[call.id]

    # -- answering -------------------------------------------------------------------
    def call_for(self, pane_id: str) -> PendingCall | None:
        """The waiting request whose dialog the pane shows now, or None (then keys answer).

        Two requests that both fit but ask different things (never seen, but
        possible with parallel tool calls) are no answer either.
        """
        if self.channel is None:
            return None
        seen = self.watched(pane_id)
        if seen is None or seen.agent.offline:
            return None
        return _one([c for c in self.channel.pending(pane_id) if not why_not(c, seen.agent.observation, seen.agent_pid)])

    def calls_like(self, call: PendingCall) -> list[tuple[Agent, PendingCall]]:
        """Every pane whose on-screen dialog is a request identical to ``call`` (same tool, same exact input)."""
        if self.channel is None:
            return []
        found = []
        for pane_id in sorted({c.pane_id for c in self.channel.calls.values()}):
            other = self.call_for(pane_id)
            seen = self.watched(pane_id)
            if other is not None and seen is not None and other.tool_name == call.tool_name and other.exact_input == call.exact_input:
                found.append((seen.agent, other))
        return found

    def decide(self, call: PendingCall, decision: dict[str, Any], what: str, rule: str = "") -> bool:
        """Hand ``decision`` to ``call``'s hook (``rule``: the rules that decided it); True when the hook was still there to take it."""
        if self.channel is None or not self.channel.decide(call.id, decision):
            return False
        self._shown.discard(call.id)
        self._changes.pop(call.id, None)
        seen = self.watched(call.pane_id)
        if seen is not None:
            behaviour = decision.get("behavior")
            self.record(seen.agent, Channel.HOOK, what, call, decision=behaviour if behaviour in ("allow", "deny") else "", rule=rule)
        self._tag(call.pane_id)
        return True

    def question_mismatch(self, pane_id: str) -> str:
        """Why a digit must not go: Claude's hook asked a question whose labels the screen does not show ("" if fine)."""
        if self.channel is None or self.call_for(pane_id) is not None:
            return ""
        seen = self.watched(pane_id)
        asked = [c for c in self.channel.pending(pane_id) if c.tool_name == QUESTION_TOOL]
        if seen is None or not asked or seen.agent.state is not AgentState.QUESTION:
            return ""
        return why_not(asked[-1], seen.agent.observation, seen.agent_pid)

    def channel_report(self, pane_id: str) -> ChannelReport:
        """What the why view says about the answer channel for this pane."""
        seen = self.watched(pane_id)
        waiting = []
        if self.channel is not None and seen is not None:
            waiting = [(c, why_not(c, seen.agent.observation, seen.agent_pid)) for c in self.channel.pending(pane_id)]
        return ChannelReport(open=self.channel is not None, waiting=waiting, last=self.last.get(pane_id))

    def sending_keys(self, pane_id: str, on: bool) -> None:
        """headspace is typing into ``pane_id``: a dialog that goes away meanwhile was not answered in the pane."""
        if on:
            self._keys.add(pane_id)
        else:
            self._keys.discard(pane_id)

    def record(
        self,
        agent: Agent,
        channel: Channel,
        what: str,
        call: PendingCall | None = None,
        *,
        began: float = 0.0,
        seen: Observation | None = None,
        delivered: bool = True,
        outcome: str = "",
        dialog: bool = True,
        row: bool | None = None,
        decision: str = "",
        rule: str = "",
    ) -> None:
        """The audit: the row's last answer, and an event for the journal; a remote one names its host.

        Keys are recorded once their send ended, delivered (the pane shows
        what came after) or not (``outcome`` says why): ``began`` is when they
        began to go, ``seen`` the dialog they answered.  Only a delivered
        answer to a dialog becomes the row's last answer (``row``: or another
        key the row should say went, an interrupt, in place of an older answer).
        """
        at = self.clock()
        where = f" on {agent.host}" if agent.host != LOCAL_HOST else ""
        if (delivered and dialog) if row is None else row:
            self.store.answered(agent.pane_id, f"{ANSWERED_HOW[channel]}{where}: {what}", at)
        event = Answered(
            agent=agent,
            channel=channel,
            what=what,
            tool=call.tool_name if call is not None else (seen or agent.observation).tool,
            tool_input=call.exact_input if call is not None else "",
            at=at,
            began=began,
            shown=seen.detail if seen is not None else "",
            delivered=delivered,
            outcome=outcome,
            dialog=dialog,
            decision=decision,
            rule=rule,
        )
        if delivered and dialog:
            self.last[agent.pane_id] = event
        self.store.emit(event)
