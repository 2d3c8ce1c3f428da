"""Following each agent's transcript: what it was asked and what its tools did.

After every reading of a pane the monitor hands its agent here.  The
transcript (found through the hook event's path, or Claude's status file:
config dir, folder and session id) is read from where it was last read; a
first read replays the history from before headspace started silently, and
whatever is newer goes to the journal (the command machine and the
outcomes), whose result the store applies: the store stays the one writer
of the agent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ...detect.claude.status_files import ClaudeStatus
from ...hooks.spool import tool_detail
from ...model import CLAUDE_MODES, Agent, Blocked
from ...shared.safe_text import clean
from ...state.machine import is_interrupt
from ..records.journal import Journal, turn_time
from ..records.store import AgentStore
from ..records.usage_tally import UsageTally
from .claude_facts import ClaudeFacts
from .host import Host
from .pane_watch import PaneWatch

CALLS_KEPT = 200  # tool calls remembered per agent, to name the one a later line says was refused


class TranscriptFollower:
    """Reads transcripts in one background thread and hands their turns to the journal, then the store."""

    def __init__(
        self,
        host: Host,
        facts: ClaudeFacts,
        journal: Journal | None,
        store: AgentStore,
        *,
        started: float,
        clock: Callable[[], float],
        current: Callable[[PaneWatch], bool],
    ) -> None:
        self.host = host
        self.facts = facts
        self.journal = journal
        self.store = store
        self.started = started  # turns before this are history, replayed silently
        self.clock = clock
        self.current = current  # is this still the pane's watch (not forgotten while reading)?
        self._reader = self._new_reader()

    @staticmethod
    def _new_reader() -> ThreadPoolExecutor:
        """One thread reads and replays every transcript, one after another.

        Ten agents starting at once gave ten threads: the event loop then waits
        behind all of them for the interpreter lock each time it gives it up
        (every SQLite write, every pipe read), and one step of the UI took a
        third of a second.  The work is Python code, serialised by the lock
        anyway, so one thread does it as fast.
        """
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix="headspace-history")

    def shutdown(self) -> None:
        """Let the thread go; a later run starts a new one (threads start on first use)."""
        self._reader.shutdown(wait=False, cancel_futures=True)
        self._reader = self._new_reader()

    async def follow(self, watch: PaneWatch, agent: Agent, status: ClaudeStatus | None) -> None:
        """Read what is new in the agent's transcript.  Reading runs in the thread:
        a first read of a long transcript takes a tenth of a second."""
        assumed = watch.family.context_window if watch.family is not None else 0
        if watch.tail is not None and status is not None and status.session_id:
            if not watch.usage.conversation:
                watch.usage.conversation = status.session_id  # the tail a hook named is the status file's conversation
            elif status.session_id != watch.usage.conversation:
                self._switched(watch, agent, status.session_id, assumed)
        if watch.tail is None:
            kept = watch.family.transcripts if watch.family is not None else None
            if kept is None or status is None or not status.session_id or not status.cwd:
                return
            folder = self.facts.config_dir_of(agent.agent_pid)
            if folder is None:
                return
            path = kept.path(folder, status.cwd, status.session_id)
            if not await self.host.exists(path):
                return
            watch.tail = self.host.transcript(path)
            watch.usage.conversation = watch.usage.conversation or status.session_id
        tail, journal, loop = watch.tail, self.journal, asyncio.get_running_loop()
        first = not tail.opened
        turns = await loop.run_in_executor(self._reader, tail.read_new)
        if watch.switched_at and first and self.current(watch):
            self._told_how(watch, agent, turns)
        if turns and self.current(watch):
            note_times(watch, turns)
            watch.last_turn_at = max([watch.last_turn_at, *(t for t in map(turn_time, turns) if t)])
            if watch.usage.add(turns):
                self.store.used(agent.pane_id, watch.usage.usage(assumed))
            self._mode_and_blocks(watch, agent, turns)
        if not turns or journal is None or not self.current(watch):
            return
        work = None
        if first:
            cut = next((i for i, t in enumerate(turns) if (turn_time(t) or 0.0) >= self.started), len(turns))
            if cut:
                adopt = await loop.run_in_executor(self._reader, journal.replayed, agent, turns[:cut])
                if not self.current(watch):
                    return
                work = adopt()
            turns = turns[cut:]
        if turns:
            work = journal.turns(agent, turns)  # the command machine and outcomes; the journal records them
        if work is not None:
            self.store.work(agent.pane_id, *work, self.clock())
        if watch.typed_at:
            # A new prompt, when no hook told it first.  Read a moment after it was written (the screen may already
            # have shown a block of this turn): dated by the transcript where its clock is this one, else as read.
            began = min(self.clock(), watch.typed_at) if not self.host.remote else self.clock()
            self.store.turn(agent.pane_id, began, watch.typed_at, by="transcript")

    def _mode_and_blocks(self, watch: PaneWatch, agent: Agent, turns: list) -> None:
        """What the transcript says of the permission mode and of the calls its check refused, so a service that starts
        late (or again) shows what one that watched from the start does.

        The mode is taken only while nothing fresher said one (the footer and
        the hook speak of now; the transcript's line is the last turn's).  A
        refused call is named by its id (the hook names it by the same), dated
        by its line where this host's clock wrote it.
        """
        modes = [t.text for t in turns if t.role == "mode"]
        current = self.store.agents.get(agent.pane_id)
        if modes and current is not None and not current.mode and CLAUDE_MODES.get(modes[-1]):
            self.store.mode(agent.pane_id, CLAUDE_MODES[modes[-1]], self.clock())
        blocks = []
        for turn in turns:
            for call_id, (tool, call) in zip(turn.tool_use_ids, turn.tool_uses, strict=False):
                watch.calls[call_id] = (tool, tool_detail(call))
            for outcome in turn.outcomes:
                named = watch.calls.get(outcome.tool_use_id)
                if outcome.accepted is False and outcome.said and named is not None:
                    at = (turn_time(turn) or self.clock()) if not self.host.remote else self.clock()
                    blocks.append(Blocked(named[0], clean(named[1], 2000), clean(outcome.said, 500), at, "transcript", outcome.tool_use_id))
        while len(watch.calls) > CALLS_KEPT:
            del watch.calls[next(iter(watch.calls))]
        if blocks:
            self.store.blocked(agent.pane_id, tuple(blocks), self.clock())

    def _switched(self, watch: PaneWatch, agent: Agent, conversation: str, assumed: int) -> None:
        """Claude's conversation changed under the same process (/clear, /resume): its transcript and its count start again.

        The row's totals become the new conversation's (zero until its first
        reply: /clear empties the context); the ledger counts the new one from
        its start and the day keeps both.  How it changed is told once its
        transcript is first read (``_told_how``).
        """
        model = watch.usage.model
        watch.tail, watch.switched_at = None, self.clock()
        watch.usage = UsageTally(conversation)
        watch.usage.model = model
        self.store.used(agent.pane_id, watch.usage.usage(assumed))

    def _told_how(self, watch: PaneWatch, agent: Agent, turns: list) -> None:
        """The timeline's line for a conversation switched to: resumed (its transcript holds lines older than the last conversation's newest) or cleared."""
        older = any((turn_time(t) or 0.0) < watch.last_turn_at for t in turns)
        if self.journal is not None:
            self.journal.conversation(agent, watch.switched_at, watch.usage.conversation, "resumed" if older else "cleared")
        watch.switched_at, watch.last_turn_at = 0.0, 0.0


def note_times(watch: PaneWatch, turns: list) -> None:
    """Keep what the transcript says of when the present began: the last typed prompt, and the last reply line if nothing followed it.

    Read from the end: a first read hands over a whole history, and only its
    last lines say anything of the present.
    """
    replied: float | None = None
    for turn in reversed(turns):
        at = turn_time(turn)
        if at is None:
            continue
        if replied is None:
            replied = at if turn.role == "agent" else 0.0
        if turn.role == "user":
            watch.prompted_at = at
            break
    typed = next((turn_time(t) for t in reversed(turns) if t.role == "user" and not is_interrupt(t.text) and turn_time(t)), None)
    if typed is not None:
        watch.typed_at = typed  # the user's last prompt (Claude's "[Request interrupted by user]" line is none): a turn began
    if replied is not None:
        watch.replied_at = replied
