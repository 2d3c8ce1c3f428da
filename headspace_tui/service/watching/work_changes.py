"""What each agent changed: its work tree's baselines (when headspace first saw it, when its turn began) and their diffs.

A baseline is a snapshot of the agent's work tree (changes/snapshot.py: a
tree in headspace's own object store, the user's repository only read),
taken on the agent's own host (the probe runs it on a remote one):

* **start**: when the monitor first sees the agent.  An agent that was
  already running when headspace started is "since headspace saw it";
  one that appeared later, "since it started".
* **turn**: each time the agent's user submits a prompt (``TurnBegan``, from
  the hook or the transcript, store.turn).  A turn told late (the
  transcript read seconds after the prompt, no hooks) takes the newest
  snapshot of the agent at rest before its prompt instead: one taken now
  could already hold the turn's edits, or catch a file half written (an
  editor's temporary file then showed as deleted).

The diff against a baseline is a snapshot now and ``git diff`` of the two
trees.  After a turn's baseline, and whenever the agent comes to rest (it
waits for the user, or is idle), the turn's summary is worked out again
and put on its row (``Agent.change``: ``+12 −3 · 2 files``), one agent at a
time and at most every ``REST_EVERY`` seconds each: nothing is polled, and
all of it runs off the event loop (git in a thread here, in the probe's
worker there).  Folders that are not git work trees are noted once and
left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from ...changes.model import Diff, failed
from ...changes.trees import ChangeError, Trees
from ...events import AgentChanged, AgentRemoved, Event, TurnBegan
from ...model import Agent, AgentState
from ..records.store import AgentStore
from .supervise import end

log = logging.getLogger(__name__)

DIFFS_KEPT = 64  # diffs of tree pairs kept (an agent at rest is asked again with nothing changed)
REST_EVERY = 3.0
TURN_SLACK = 2.0  # s a prompt may predate the first sight of its agent and still be the turn headspace saw begin
TOLD_LATE = 1.0  # s after its prompt a turn is told late: a snapshot taken then may hold the turn's own work
REFUSED_FOR = 600.0  # s a folder that can have no baseline (not git, too large to count) is not tried again, whichever agent is in it
RESTING = frozenset({AgentState.IDLE, AgentState.PERMISSION, AgentState.QUESTION, AgentState.ERROR})
SCOPES = ("turn", "start")


@dataclass
class Baselines:
    folder: str
    start: str = ""  # tree ids ("" until taken)
    turn: str = ""
    start_at: float = 0.0
    turn_at: float = 0.0
    seen_new: bool = False  # it appeared after headspace started: "since it started"
    seen_at: float = 0.0  # when headspace first saw it: a prompt from before then is not a turn it saw begin
    turned: bool = False  # a turn began since headspace saw it
    unusable: str = ""  # why no snapshot can ever be taken there ("not a git repository"); a passing failure is not kept
    summarised_at: float = 0.0
    rested: str = ""  # the newest snapshot taken while the agent was idle throughout (its turn over), and when it ended
    rested_at: float = 0.0


class WorkChanges:
    """Each agent's baselines on one host, kept from the store's events; ``changes`` answers the diff view and the CLI."""

    def __init__(self, store: AgentStore, trees: Trees, *, started: float, clock: Callable[[], float] = time.time, baselines: bool = True) -> None:
        """``baselines`` off: none is taken (a one-shot look, which no one asks for a diff, and whose end must not wait on git)."""
        self.store = store
        self.trees = trees
        self.started = started
        self.clock = clock
        self._agents: dict[str, Baselines] = {}  # pane id -> its baselines
        self._busy: set[str] = set()  # panes whose summary is being worked out
        self._wanted: set[str] = set()  # panes that came to rest since their last summary
        self._diffs: dict[tuple[str, str, str], Diff] = {}  # (folder, old tree, new tree) -> their diff, the last DIFFS_KEPT
        self._tasks: set[asyncio.Task] = set()
        # Per folder: its snapshots one at a time, and why it can have none (until when). Twenty agents in one
        # large folder outside git counted it twenty times, two at a time (a service at 130% of a core for minutes).
        self._folders: dict[str, asyncio.Lock] = {}
        self._refused: dict[str, tuple[str, float]] = {}
        # Per folder: how many snapshots have begun, and the newest one's number and tree.  A snapshot begun after
        # an agent asked for one serves it: thirty agents in one folder, seen at once, took thirty snapshots one
        # after another (a large folder kept git running for a minute); now the first and one more.
        self._begun: dict[str, int] = {}
        self._latest: dict[str, tuple[int, str]] = {}
        if baselines:
            store.subscribe(self._on_event)

    # -- events -------------------------------------------------------------------------
    def _on_event(self, event: Event) -> None:
        if isinstance(event, AgentRemoved):
            gone = self._agents.pop(event.pane_id, None)
            self._wanted.discard(event.pane_id)
            if gone is not None and all(base.folder != gone.folder for base in self._agents.values()):
                lock = self._folders.get(gone.folder)
                if lock is not None and not lock.locked():
                    del self._folders[gone.folder]  # churn must not grow us: a refusal is kept (bounded below), a lock is not
                    self._begun.pop(gone.folder, None)
                    self._latest.pop(gone.folder, None)
        elif isinstance(event, TurnBegan):
            self._spawn(self._turn(event.agent, event.at))
        elif isinstance(event, AgentChanged):
            agent = event.agent
            if agent.placeholder or not agent.cwd:
                return
            known = self._agents.get(agent.pane_id)
            if known is None or known.folder != agent.cwd:
                self._agents[agent.pane_id] = Baselines(agent.cwd, seen_new=self.clock() - self.started > 10.0, seen_at=self.clock())
                self._spawn(self._first(agent))
            elif agent.state in RESTING:
                self._wanted.add(agent.pane_id)
                if agent.pane_id not in self._busy:
                    self._spawn(self._summarise(agent.pane_id))

    def _spawn(self, work) -> None:
        try:
            task = asyncio.get_running_loop().create_task(work)
        except RuntimeError:  # no loop (a replay, a test without one): nothing to do off it
            work.close()
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _first(self, agent: Agent) -> None:
        base = self._agents.get(agent.pane_id)
        if base is None:
            return
        looked = self.clock()
        tree = await self._take(agent.pane_id, base)
        if tree:
            base.start = base.start or tree
            base.turn = base.turn or tree
            base.start_at = base.turn_at = looked  # when the look began: a look at rest that ended after it came after it

    async def _turn(self, agent: Agent, at: float) -> None:
        base = self._agents.get(agent.pane_id)
        if base is None:
            base = self._agents[agent.pane_id] = Baselines(agent.cwd, seen_new=True, seen_at=self.clock())
        if at < base.seen_at - TURN_SLACK:
            return  # a prompt from before headspace saw the agent (a transcript's first read, a spool replayed): not a turn begun now
        if self.clock() - at > TOLD_LATE and base.rested and base.turn_at <= base.rested_at <= at:
            # The agent at rest after the last turn, before this prompt: what the turn began from. (What the user
            # changed between that look and the prompt counts as the turn's; a look now would miss the agent's own.)
            tree = base.rested
        else:
            tree = await self._take(agent.pane_id, base)
        if tree:
            base.turn, base.turn_at, base.turned = tree, at, True
            base.start, base.start_at = base.start or tree, base.start_at or at
            self.store.changed(agent.pane_id, "")  # a new turn has changed nothing yet

    async def _take(self, pane_id: str, base: Baselines) -> str:
        """A snapshot of the agent's folder, or "": one at a time per folder, and none of a folder refused for good a moment ago."""
        if base.unusable:
            return ""
        asked, turn = self._queued(base.folder)
        async with turn:
            refused = self._refused.get(base.folder)
            if refused is not None and self.clock() < refused[1]:
                base.unusable = refused[0]  # another agent's look found it: this one's would find the same
                return ""
            try:
                return await self._snapshot(pane_id, base, asked)
            except ChangeError as exc:
                if exc.lasting:
                    base.unusable = str(exc)
                    self._refuse(base.folder, str(exc))
                log.info("no baseline for %s: %s", pane_id, exc)
                return ""

    def _refuse(self, folder: str, why: str) -> None:
        now = self.clock()
        for stale in [f for f, (_, until) in self._refused.items() if until <= now]:
            del self._refused[stale]
        self._refused[folder] = (why, now + REFUSED_FOR)

    def _queued(self, folder: str) -> tuple[int, asyncio.Lock]:
        """A look at ``folder`` asked now: the count of its snapshots begun so far (one begun later serves it), and its lock."""
        return self._begun.get(folder, 0), self._folders.setdefault(folder, asyncio.Lock())

    async def _snapshot(self, pane_id: str, base: Baselines, asked: int) -> str:
        """The work tree now (the folder's lock held): the newest snapshot if it began after ``asked`` (the folder's count of
        snapshots begun when this one was asked for), else a new one; kept as the agent at rest (``rested``) when it was
        idle from before the look to after it."""
        idle = self._idle(pane_id)
        latest = self._latest.get(base.folder)
        if latest is not None and latest[0] > asked:
            tree = latest[1]  # begun after this was asked for: what a snapshot of its own, later still, would have read
        else:
            number = self._begun[base.folder] = self._begun.get(base.folder, 0) + 1
            tree = await self.trees.snapshot(base.folder)
            self._latest[base.folder] = (number, tree)
        if idle and self._idle(pane_id):
            base.rested, base.rested_at = tree, self.clock()
        return tree

    def _idle(self, pane_id: str) -> bool:
        agent = self.store.agents.get(pane_id)
        return agent is not None and agent.state is AgentState.IDLE

    async def _summarise(self, pane_id: str) -> None:
        """The turn's summary on the row, as long as it is wanted: a rest that came while one was worked out, or within
        REST_EVERY of the last, is summarised after (the last rest of a turn is never skipped)."""
        self._busy.add(pane_id)
        try:
            while pane_id in self._wanted:
                base = self._agents.get(pane_id)
                if base is None:
                    return
                wait = base.summarised_at + REST_EVERY - self.clock()
                if wait > 0:
                    await asyncio.sleep(wait)
                self._wanted.discard(pane_id)
                if not base.turn:
                    continue  # its first snapshot is on its way; its turn has changed nothing yet
                base.summarised_at, turn = self.clock(), base.turn
                try:
                    diff = await self._diff(pane_id, base, turn)
                except ChangeError as exc:
                    log.info("the turn's change of %s: %s", pane_id, exc)
                    continue
                if base.turn == turn:  # a turn that began meanwhile has its own (empty) summary
                    self.store.changed(pane_id, diff.summary())
        finally:
            self._busy.discard(pane_id)

    async def _diff(self, pane_id: str, base: Baselines, old: str) -> Diff:
        """The work tree now against ``old``; a pair of trees already diffed is not diffed again (the tree ids say the content)."""
        asked, turn = self._queued(base.folder)
        async with turn:
            now = await self._snapshot(pane_id, base, asked)
        key = (base.folder, old, now)
        diff = self._diffs.get(key)
        if diff is None:
            diff = self._diffs[key] = await self.trees.diff(base.folder, old, now)
            while len(self._diffs) > DIFFS_KEPT:
                del self._diffs[next(iter(self._diffs))]
        return diff

    # -- asked ----------------------------------------------------------------------------
    async def changes(self, pane_id: str, scope: str) -> Diff:
        """The agent's change this turn (``scope`` "turn") or since its start ("start"), with a note saying which."""
        if scope not in SCOPES:
            return failed(f"unknown scope {scope!r}: turn or start")
        agent = self.store.agents.get(pane_id)
        base = self._agents.get(pane_id)
        if agent is None or base is None:
            return failed("no such agent")
        if base.unusable:
            return failed(base.unusable)
        if not base.start:
            await self._first(agent)  # its first snapshot was still on its way, or failed for a passing reason: taken now
            if base.unusable:
                return failed(base.unusable)
            if not base.start:
                return failed("its work tree could not be read (see headspace's log)")
        old = base.turn if scope == "turn" else base.start
        try:
            diff = await self._diff(pane_id, base, old)
        except ChangeError as exc:
            return failed(str(exc))
        if scope == "turn":
            self.store.changed(pane_id, diff.summary())
            note = "this turn" if base.turned or base.seen_new else "since headspace saw it (no turn began since)"
        else:
            note = "since it started" if base.seen_new else "since headspace saw it"
        return Diff(diff.files, diff.more_files, diff.added, diff.removed, note=note)

    async def close(self) -> None:
        """Every snapshot and summary ended, each cancelled again while it runs on and never waited for without bound (supervise.end)."""
        with contextlib.suppress(Exception):
            await asyncio.gather(*(end(task) for task in list(self._tasks)))
