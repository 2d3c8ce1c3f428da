"""Hook events into a monitor: the spools they arrive in, and the answer channel beside them.

A hook is the most confident and often the first word on a change.  Each
event is matched to the pane it names (and to that pane's agent process, as
the same ``%N`` exists on every tmux server), weighed by the pane's fuser and
handed to the monitor's update.  The spools: headspace's own, and each local
agent's whose XDG_RUNTIME_DIR differs (its hooks write there).  The answer
channel: opened once, taken over when the headspace that held it ends, and
listening beside each agent's spool elsewhere too.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from pathlib import Path

from ...answering.desk import AnswerDesk
from ...events import Notice
from ...hooks.channel import ChannelUnavailable, MakeChannel, socket_path
from ...hooks.spool import HookEvent, SpoolRefused, hook_observation, spool_dir, spool_in, tool_detail
from ...model import CLAUDE_MODES, Agent, Blocked, Observation
from ...shared.safe_text import clean
from ..records.store import AgentStore
from .claude_facts import ClaudeFacts
from .host import Host
from .pane_watch import PaneWatch
from .supervise import Supervisor

CHANNEL_RETRY = 5.0  # while another headspace holds the answer channel, ask for it this often
SPOOL_LOOK = 1.0  # an agent's spool elsewhere is looked for this often until its hooks make it
# ... and, in the first seconds after its agent is found, this often: its first permission can follow at once, and
# its answer hook finding no socket beside its spool gives up (Claude's own dialog; a hook-held answer lost).
SPOOL_LOOK_SOON, SPOOL_SOON_FOR = 0.1, 10.0

log = logging.getLogger(__name__)


class HookIntake:
    def __init__(
        self,
        host: Host,
        store: AgentStore,
        desk: AnswerDesk,
        supervisor: Supervisor,
        facts: ClaudeFacts,
        panes: dict[str, PaneWatch],
        *,
        spool: Path | None,
        hooks: bool,
        answers: bool,
        clock: Callable[[], float],
        update: Callable[[PaneWatch, Observation], Agent],
        read_soon: Callable[[str], None],
        stopping: Callable[[], bool],
    ) -> None:
        self.host = host
        self.store = store
        self.desk = desk
        self.supervisor = supervisor
        self.facts = facts
        self.panes = panes  # the monitor's watched panes
        self.spool = spool
        self.hooks = hooks
        self.answers = answers  # open the answer channel (where the host has one)
        self.clock = clock
        self._update = update  # the monitor's: a reading to the store
        self._read_soon = read_soon
        self._stopping = stopping
        self._spools: set[Path] = set()  # the local spool folders watched (resolved): headspace's own and its agents'

    async def start(self) -> None:
        """Watch the spool, open the answer channel (or wait to take it over), and watch the spools of the agents known already."""
        if not self.hooks:
            return
        self.supervisor.start("the hook watcher", functools.partial(self._watch_hooks, self.spool))
        channel = self.host.answer_channel(self.spool) if self.answers else None
        if channel is not None:
            problem = await self.desk.open(channel)
            if problem:
                self.store.emit(Notice(problem))
            if self.desk.taken:  # another headspace answers hooks: take over once it is gone
                self.supervisor.start("the answer channel's takeover", functools.partial(self._take_over_channel, channel))
        if not self.host.remote:
            self._spools = {(self.spool or spool_dir()).resolve()}
            self.watch_agents_spools(list(self.facts.processes))  # run again after a stop: the agents known already

    async def _take_over_channel(self, channel: MakeChannel) -> None:
        """Ask for the answer channel again every few seconds while another headspace holds it.

        Its owner holds a lock the kernel releases however it ends, so a first
        headspace killed with ``kill -9`` hands the channel to this one within
        CHANNEL_RETRY seconds (before, hooks went unanswered until a restart).
        """
        while self.desk.taken and not self._stopping():
            await asyncio.sleep(CHANNEL_RETRY)
            if await self.desk.open(channel) is None:
                self.store.emit(Notice("answer channel on: the headspace that had it has ended"))
                return

    def watch_agents_spools(self, pids: list[int]) -> None:
        """Watch the spool of each new local agent whose hooks write to another one than headspace's.

        A hook writes under the XDG_RUNTIME_DIR of the Claude that runs it
        (``hooks/program.py``), read from that Claude's environment here; one
        that differs from headspace's (a tmux server started without it,
        headspace run from another login) would otherwise lose every event.
        Once per folder; none where that XDG_RUNTIME_DIR does not exist (the
        hook drops its events there too), and nothing is made there: the
        folder is looked for until the agent's first hook makes it.  A remote
        host's probe watches its own.
        """
        if not self.hooks or self.host.remote or self._stopping():
            return
        for pid in pids:
            process = self.facts.process(pid)
            if process is None or process.runtime is None or not process.runtime.parent.is_dir():
                continue
            folder = spool_in(process.runtime)
            if folder.resolve() in self._spools:
                continue
            self._spools.add(folder.resolve())
            log.info("watching the hook spool %s too (an agent's XDG_RUNTIME_DIR differs from headspace's)", folder)
            self.supervisor.start(f"the hook watcher of {folder}", functools.partial(self._watch_hooks, folder, create=False))
            if self.answers:
                self.supervisor.start(f"the answer socket beside {folder}", functools.partial(self._answer_beside, folder))

    async def _answer_beside(self, folder: Path) -> None:
        """The answer channel also listens beside an agent's spool elsewhere, once its hooks have made it.

        Its answer hook looks for headspace there, not beside headspace's own
        spool.  Only while the channel is open here (not when another
        headspace holds it); a headspace whose own place that is keeps it.
        """
        since = time.monotonic()
        while not folder.is_dir():
            await asyncio.sleep(SPOOL_LOOK_SOON if time.monotonic() - since < SPOOL_SOON_FOR else SPOOL_LOOK)
        listen_also = getattr(self.desk.channel, "listen_also", None)
        if listen_also is None:
            return
        try:
            await listen_also(socket_path(folder))
        except ChannelUnavailable as exc:
            log.info("no answer socket beside %s: %s", folder, exc)

    async def _watch_hooks(self, spool: Path | None, *, create: bool = True) -> None:
        """Hook events (when installed), as they come.

        One bad event is skipped (and logged), never the end of the watch; an
        unsafe spool folder turns hooks off with one line to the user.
        """
        try:
            async for event in self.host.watch_hooks(spool, create=create):
                try:
                    self.event(event)
                except Exception:
                    log.exception("hook event %s skipped", event.name)
        except SpoolRefused as exc:
            log.warning("%s", exc)
            self.store.emit(Notice(str(exc)))

    def event(self, event: HookEvent) -> None:
        """One hook event, to the pane it names (if watched, and still its agent's) and on to the store."""
        watch = self.panes.get(event.pane_id)
        if watch is None or event.pane_id not in self.store.agents:
            return  # not a pane we watch (another server, or not yet discovered)
        if event.pid and watch.agent_pid and event.pid != watch.agent_pid:
            return  # the same %N on another tmux server: not this agent
        if watch.family is not None and watch.family.hooks is None:
            return  # its agent's family runs no hooks: another agent's event (one it started, say)
        if event.transcript_path and watch.tail is None:
            watch.tail = self.host.transcript(Path(event.transcript_path))  # replayed at the pane's next read
            watch.usage.conversation = event.session_id  # the conversation its tokens are of
        observation = hook_observation(event)
        mode = hook_mode(event)
        if mode:
            self.store.mode(event.pane_id, mode, self.clock())
        # Dated by the event where its clock is this one (a spool replayed at a restart keeps its times), else as read.
        at = min(self.clock(), event.ts) if event.ts and not self.host.remote else self.clock()
        if event.event == "UserPromptSubmit":
            self.store.turn(event.pane_id, at, event.ts, by="hook")
        blocked = hook_blocked(event, at)
        if blocked is not None:
            self.store.blocked(event.pane_id, (blocked,), blocked.at)
        prompt = event.raw.get("prompt") if event.event == "UserPromptSubmit" else None
        if isinstance(prompt, str) and prompt.strip():
            # The prompt Claude starts on, before its transcript says so: the row says the present.
            agent = self.store.agents[event.pane_id]
            self.store.work(event.pane_id, clean(prompt, 500), agent.outcome, self.clock())
        if observation is not None:
            fused = watch.fuser.observe(observation, self.clock(), at=event.ts)
            self._update(watch, fused)
        self._read_soon(event.pane_id)


def hook_mode(event: HookEvent) -> str:
    """The permission mode the event's Claude runs in (``permission_mode``, in headspace's words), "" when it does not say."""
    value = event.raw.get("permission_mode")
    return CLAUDE_MODES.get(value, "") if isinstance(value, str) else ""


def hook_blocked(event: HookEvent, at: float) -> Blocked | None:
    """A ``PermissionDenied`` event: the call auto mode's check refused, exactly as Claude made it, and the check's reason.

    ``at``: this clock's time (the hook's own is its host's: every block of an agent is dated by one clock).
    """
    if event.event != "PermissionDenied":
        return None
    return Blocked(
        tool=clean(event.tool_name, 80),
        detail=clean(tool_detail(event.tool_input), 2000),
        reason=clean(event.raw["reason"] if isinstance(event.raw.get("reason"), str) else "", 500),
        at=at,
        source="hook",
        call=clean(event.raw["tool_use_id"], 100) if isinstance(event.raw.get("tool_use_id"), str) else "",
    )
