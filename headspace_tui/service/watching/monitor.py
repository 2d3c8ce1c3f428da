"""Keeping the agent model of one tmux server current.

Data flows one way: pane output (tmux control mode), Claude's status files
and hook events become observations; a fuser per pane turns them into the
agent's state; the store (store.py) keeps the agents and sends every change
out as a typed event (events.py) to its subscribers: the journal (command
machine, event log) first, then the service, which the front ends read.
No Textual here.

The monitor reads panes and runs discovery; the rest is in parts, each
small and in its own module:

* ``Host`` (host.py): everything outside headspace (tmux, processes,
  Claude's files) is asked of the host: this machine, or one over SSH;
* ``discovery.plan``: which panes to watch and who their agents are (pure);
* ``Sessions`` (sessions.py): one detector per tmux session, its control
  client, and *when* each pane is read again (``schedule.py``, pure);
* ``ClaudeFacts`` (claude_facts.py): each Claude process's version and
  config dir, its status file, ``claude agents``;
* ``TranscriptFollower`` (transcripts.py): each agent's transcript, through
  the journal, to the store;
* ``PaneWatch`` (pane_watch.py): everything kept about one watched pane, so
  forgetting a pane is one operation;
* ``Fuser`` (detect/fusion.py): how the sources add up;
* ``AgentStore`` (store.py): the agents, the one writer of them, and the
  subscribers told of each change;
* ``HookIntake`` (hook_intake.py): hook events from the spools, to the
  pane they name, and the answer channel beside them;
* ``Supervisor`` (supervise.py): every long-lived loop here (discovery, one
  detector per tmux session, the socket, status-file and hook watchers)
  restarts after an error, which is logged and told as one line.

Discovery lists panes and reads the process table (one ``list-panes`` and
one process-table read for the whole server) when something says the
layout changed, when a pane we do not watch starts another program, when
the server's socket appears or goes, and every 30 s as a safety net.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from ...answering.desk import AnswerDesk, Watched
from ...detect.codex.rollout import from_terminal
from ...detect.families import CLAUDE
from ...detect.family import Family
from ...detect.fusion import Fuser
from ...detect.session_usage import FIND_EVERY
from ...detect.sources import Source
from ...events import Event, Notice, PaneCaptured, ProblemChanged
from ...hooks.calls import PendingCall
from ...hooks.spool import HookEvent
from ...model import Agent, Observation
from ...tmux.attach_pace import AttachPace
from ...tmux.control import ControlClient, ControlError
from ...tmux.server import PaneRecord, TmuxCommandError, TmuxServer, TmuxUnavailable
from ...usage.prices import priced
from ..records.journal import Journal
from ..records.scan import other_version, screen_observation
from ..records.store import AgentStore
from . import discovery
from .claude_facts import ClaudeFacts
from .hook_intake import HookIntake
from .host import Host, LocalHost
from .pane_watch import PaneWatch, agent_key
from .sessions import Sessions
from .socket_watch import watch_socket
from .supervise import Backoff, Supervisor
from .transcripts import TranscriptFollower
from .work_changes import WorkChanges

DISCOVERY_INTERVAL = 30.0  # a full look even without any event (a safety net; events trigger it sooner)
# A remote host's look is an ssh session there (a login shell and ``tmux list-panes``) and its whole
# process table through the probe: about 0.4% of a core at a 30 s pace, most of an idle
# host's cost (benchmarks/remote_idle.py).  Its events ask for one sooner (tmux's layout
# notifications, output from a pane not watched, the probe's pushes, a lost link), so the safety net waits longer.
REMOTE_DISCOVERY_INTERVAL = 300.0
DISCOVERY_MIN_GAP = 0.5
SERVER_RETRY = 2.0  # with no server, look again this often (the socket watch usually says sooner)
# After a state change, read the pane (and its transcript) again this much later:
# Claude writes a turn's last lines a moment after drawing it, and on a busy
# machine that moment can pass 0.5 s (CI saw the answer's evidence never read).
TRANSCRIPT_LOOKS = (0.5, 2.0, 5.0)
RECORDS_EVERY = 1.0  # a streaming agent's screen changes many times a second: its record is read at most once a second
RECORD_LOOK = FIND_EVERY + 0.5  # after a changed screen, for a family whose session record is found by a search
REMOTE_RESTART_LIMIT = 10.0  # a remote host's failed loop starts again at most this long after
# While a remote host is out of reach, connection attempts back off from 0.5 s to at most
# this long between two starts (sooner after an attempt that itself took this long: a
# dropped SYN waits out ssh's ConnectTimeout).  The cap is what the network asks: a laptop
# back from an hour's sleep or a cable plugged in again must find its hosts within 5 s,
# not at the next of ever rarer tries.  An attempt that fails at once (refused, no route)
# costs one short-lived ssh process per period; one TCP handshake every 2 s is nothing
# to the far sshd (its MaxStartups throttles at 10 unauthenticated at once).
REMOTE_RETRY_PACE = 2.0


def remote_retry() -> Backoff:
    """A remote host's reconnect pace: 0, 0.5, 1, then every REMOTE_RETRY_PACE s, however long it is away."""
    return Backoff(first=0.5, limit=REMOTE_RETRY_PACE, healthy_after=float("inf"))


log = logging.getLogger(__name__)


class Monitor:
    """One host's tmux server, watched: discovery, each pane's readings, hook events; changes go to the store."""

    def __init__(
        self,
        server: TmuxServer,
        *,
        include_all: bool = False,
        config_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
        idle_grace: float = 5.0,
        journal: Journal | None = None,
        spool: Path | None = None,
        hooks: bool = True,
        host: Host | None = None,
        answers: bool = False,
        looking: bool = False,
        names: bool = True,
    ) -> None:
        self.host: Host = host or LocalHost(server)
        self.server = self.host.server
        self.include_all = include_all
        self.clock = clock
        self.idle_grace = idle_grace
        self.journal = journal
        self.store = AgentStore(self.host.name)
        self.desk = AnswerDesk(self.store, self._watched, clock)
        self.desk.locate = self._locate_held
        self.panes: dict[str, PaneWatch] = {}  # every watched pane, by id
        self._retry = remote_retry()  # reconnecting to a remote host
        self._discover_soon = asyncio.Event()
        self._socket_wake = asyncio.Event()
        self._stopping = False
        self._slept = 0.0  # this machine just woke from a sleep this long: discovery redoes the remote link
        self._problem: str | None = "starting"
        # The first full look: the panes the first discovery found, each until it has been read once
        # (None before that discovery, empty once the look is whole).  Until then the problem said is
        # "starting" (the header says it is still looking rather than counting the rows read so far:
        # "0 agents", or fewer needing you than there are).
        self._first_look: set[str] | None = None
        # A remote host's loops come back within REMOTE_RESTART_LIMIT after any error, not only
        # "can't reach" (which discovery retries itself): a link always comes back within 10 s.
        restart = functools.partial(Backoff, limit=REMOTE_RESTART_LIMIT) if self.host.remote else Backoff
        self.supervisor = Supervisor(self._loop_failed, backoff=restart)
        self.sessions = Sessions(
            self.server,
            self.supervisor,
            self.panes,
            read=self._read,
            request_discovery=self.request_discovery,
            state_of=lambda pane_id: agent.state if (agent := self.store.agents.get(pane_id)) else None,
            clock=clock,
        )
        if looking:  # a one-shot look: read by captures, not one control client attached for it (attach rarely)
            self.sessions.attach_pace = AttachPace.never
        self.store.names_appearances = names  # off for a look whose rows outlive it (status): no one keeps its names
        # Assumed for a Claude whose own config dir cannot be read (a remote host assumes none).
        self.facts = ClaudeFacts(self.host, self.supervisor, config_dir or self.host.default_config_dir(), self._facts_changed)
        self.transcripts = TranscriptFollower(self.host, self.facts, journal, self.store, started=clock(), clock=clock, current=lambda watch: self.panes.get(watch.record.pane_id) is watch)
        self.intake = HookIntake(
            self.host,
            self.store,
            self.desk,
            self.supervisor,
            self.facts,
            self.panes,
            spool=spool,
            hooks=hooks,
            answers=answers,
            clock=clock,
            update=self._update,
            read_soon=self.sessions.read_soon,
            stopping=lambda: self._stopping,
        )
        self.changes = WorkChanges(self.store, self.host.trees(), started=clock(), clock=clock, baselines=not looking)  # what each agent changed
        self.host.on_lost = self._link_lost
        self.host.on_notice = lambda text: self.store.emit(Notice(text))
        if journal is not None:
            journal.on_notice = lambda text: self.store.emit(Notice(text))  # a log that cannot be written, and again
            self.store.remembered_blocks = journal.remembered_blocks
            self.subscribe(journal.on_event)  # first: it sets the command and outcome the others show

    @property
    def focused(self) -> str | None:
        """The pane the user looks at (read at a faster pace)."""
        return self.sessions.focused

    @focused.setter
    def focused(self, pane_id: str | None) -> None:
        self.sessions.focused = pane_id

    def client(self, session_id: str) -> ControlClient | None:
        """The session's control client while attached (captures and keys go through it)."""
        return self.sessions.clients.get(session_id)

    def attached(self) -> ControlClient | None:
        """Any control client of this server still attached, for a command about the server as a whole (None: none yet).

        A tmux client of its own costs a server with hundreds of control
        clients about half a second of its CPU (it serves nobody meanwhile);
        the same command through a client already attached, about 12 ms.
        """
        return self.sessions.attached()

    def subscribe(self, subscriber: Callable[[Event], None]) -> None:
        """Be told every event from now on, in order (see ``AgentStore.subscribe``)."""
        self.store.subscribe(subscriber)

    # -- the loops ----------------------------------------------------------
    async def run(self) -> None:
        self._stopping = self.store.quiet = False
        self.sessions.start()
        self.facts.start()
        await self.intake.start()
        if self.host.socket_file():
            self.supervisor.start("the tmux socket watcher", self._watch_socket)
        try:
            await self.supervisor.start("discovery", self._discovery_loop)
        finally:
            await self.stop()

    async def stop(self) -> None:
        """Stop every loop and wait for it: each detector detaches its control client,
        so no tmux client or pipe outlives the monitor.  Safe to call twice."""
        self._stopping = self.store.quiet = True  # a last read after the stop must not reach the app
        self.sessions.stopping = True
        await self.facts.stop()
        await self.supervisor.stop()
        await self.sessions.stop()
        await self.desk.close()
        await self.changes.close()
        await self.host.close()
        self.transcripts.shutdown()

    def _loop_failed(self, name: str, message: str) -> None:
        self.store.emit(Notice(message))

    async def _discovery_loop(self) -> None:
        while True:
            started = self.clock()
            self._discover_soon.clear()  # before looking: a request made while we look is a look again
            await self.discover()
            if self._slept:  # woke from a sleep during that look: the link is redone now
                wait = 0.0
            elif self._problem is None:
                self._retry = remote_retry()  # reached: the next loss starts from the first, short wait
                wait = REMOTE_DISCOVERY_INTERVAL if self.host.remote else DISCOVERY_INTERVAL
            elif self.host.remote:  # out of reach: attempts start 0, 0.5, 1, then every 2 s (see REMOTE_RETRY_PACE)
                wait = max(0.0, self._retry.after_failure(0.0) - DISCOVERY_MIN_GAP - (self.clock() - started))
            else:
                wait = SERVER_RETRY
            try:
                await asyncio.wait_for(self._discover_soon.wait(), wait)
            except TimeoutError:
                pass
            await asyncio.sleep(DISCOVERY_MIN_GAP)  # many events at once: one discovery

    def request_discovery(self) -> None:
        self._discover_soon.set()

    def woke(self, slept: float) -> None:
        """This machine woke from a sleep of ``slept`` s (told by the fleet): a remote link is redone, not trusted."""
        if self._stopping:
            return
        self._slept = slept
        self.store.offline(f"{self.host.name}: reconnecting after a sleep of {slept:.0f} s", self.clock())
        link = getattr(self.host, "link", None)
        if link is not None:  # now, not when discovery comes to it: a discovery may be waiting on that dead link
            link.drop()
        self.request_discovery()

    def _link_lost(self) -> None:
        """A remote host's link ended between discoveries: its rows are stale now, and discovery reconnects.

        Stale at once, not once the reconnect attempt has failed: against a
        host that drops packets that attempt waits out ssh's ConnectTimeout,
        and the rows would go on looking live for those seconds too.
        """
        if self.host.remote and not self._stopping:
            self.store.offline(f"{self.host.name}: the connection was lost", self.clock())
        self.request_discovery()

    async def _watch_socket(self) -> None:
        """Discover as soon as the server's socket appears, goes or is replaced (a restarted server; a lost one ends the slow wait: ``_report``)."""
        await watch_socket(self.host.socket_file(), self._socket_wake, lambda: self._problem is not None, self.request_discovery)

    # -- discovery ----------------------------------------------------------------
    async def discover(self) -> None:
        """List panes and processes once; watch new agents, forget gone ones, start or stop session detectors."""
        number = self.sessions.discovery_started()
        if self._slept:  # a link from before a sleep is not trusted: tidied and made anew here, where it never races a connect
            self._slept = 0.0
            await self.sessions.end_all()
            await self.host.lost()
        try:
            records, table = await self.host.snapshot(self.attached())  # through a control client already attached: a tmux client of its own is dear
        except TmuxUnavailable as exc:
            self._report(str(exc))
            if self.host.remote:  # out of reach, not gone: the rows stay, marked offline with ssh's reason
                self.store.offline(str(exc), self.clock())
                await self.sessions.end_all()  # their control clients died with the link
                await self.host.lost()
            else:  # the server is gone: forget its panes (a new server reuses ``$0`` and ``%0``)
                for pane_id in list(self.panes):
                    self._forget(pane_id)
                await self.sessions.end_all()
            return
        except TmuxCommandError as exc:
            self._report(f"tmux: {exc}")
            return
        self._report(None)
        self.store.online()
        now = self.clock()
        found = discovery.plan(
            records,
            table,
            {pane_id: watch.key for pane_id, watch in self.panes.items()},
            set(self.facts.processes),
            host=self.host.name,
            server=self.server.key,
            include_all=self.include_all,
        )
        await self.facts.learn(found.new_claudes, table, now)
        self.intake.watch_agents_spools(found.new_claudes)
        for pane_id in found.replaced:
            self._forget(pane_id)
        for sighting in found.watch:
            record, agent_pid = sighting.record, sighting.agent_pid
            watch = self.panes.get(record.pane_id)
            if watch is None:
                version = other_version(self.host.remote, sighting.family, table, agent_pid) if sighting.family is not CLAUDE else None
                info = table.get(agent_pid) if agent_pid else None
                mode = (sighting.family or CLAUDE).mode_of(info.argv) if info is not None else ""
                self.panes[record.pane_id] = PaneWatch(record, sighting.key, agent_pid, fuser=Fuser(self.idle_grace), family=sighting.family, version=version or "", mode=mode)
                self.sessions.read_soon(record.pane_id)  # its detector may be asleep (a session with no agent yet): read it now
                continue
            old, watch.record, watch.agent_pid = watch.record, record, agent_pid
            watch.family = sighting.family or watch.family
            if old.dead != record.dead or old.current_command != record.current_command:
                self.sessions.read_soon(record.pane_id)
            self.store.moved(record, now)  # a renamed session or window, a moved pane: the row follows at once
        seen = {sighting.record.pane_id for sighting in found.watch}
        for pane_id in [p for p in self.panes if p not in seen]:
            self._forget(pane_id)
        self.facts.forget_ended(table, now)
        first = self._first_look is None
        if first:
            self._first_look = set(self.panes)  # before any detector runs: no read of these goes uncounted
        # Every session gets a detector (and a control client), not only those with
        # agents: a Claude started in any pane is then noticed by its first output.
        await self.sessions.discovered(number, found.sessions, records)
        if first and not self._first_look and self._problem is None:
            self.store.emit(ProblemChanged(None))  # a server with no agents: the first look is whole now

    def _report(self, problem: str | None) -> None:
        if problem is not None:
            self._socket_wake.set()  # look for a new server at the fast pace from now
        if problem != self._problem:
            self._problem = problem
            self.store.emit(ProblemChanged(self._said_problem))

    @property
    def _said_problem(self) -> str | None:
        """The problem as the front ends hear it: "starting" until the first full look, when nothing else is wrong."""
        looked = self._first_look is not None and not self._first_look
        return "starting" if self._problem is None and not looked else self._problem

    def _looked_at(self, pane_id: str) -> None:
        """``pane_id`` was read (or forgotten): once every pane of the first discovery was, the first look is whole."""
        if not self._first_look:
            return  # before the first discovery, or whole already
        self._first_look.discard(pane_id)
        if not self._first_look and self._problem is None:
            self.store.emit(ProblemChanged(None))

    def _forget(self, pane_id: str) -> None:
        self._looked_at(pane_id)
        self.panes.pop(pane_id, None)
        self.store.forget(pane_id)
        self.desk.observed(pane_id)  # a hook still waiting for that pane is let go

    def _facts_changed(self, pids: set[int]) -> None:
        """Claude's own facts about these processes changed: read their panes again."""
        for pane_id, watch in list(self.panes.items()):
            if watch.agent_pid in pids:
                self.sessions.read_soon(pane_id)

    # -- hook events --------------------------------------------------------------------
    def hook_event(self, event: HookEvent) -> None:
        """One hook event for this host's panes (``HookIntake.event``)."""
        self.intake.event(event)

    # -- one pane -------------------------------------------------------------
    async def _read(self, pane_id: str, client: ControlClient | None) -> Agent | None:
        """A detector's read of a pane (``observe``, looked up at each read: tests count reads), which counts towards the first look."""
        try:
            return await self.observe(pane_id, client)
        finally:
            self._looked_at(pane_id)

    async def observe(self, pane_id: str, client: ControlClient | None = None) -> Agent | None:
        """Read one pane: its screen, joined with Claude's own facts, fused, to the store; then its transcript."""
        watch = self.panes.get(pane_id)
        if watch is None:
            return None
        title: str | None = None
        began = self.clock()  # what this capture shows is from now on (an answer that ended before it is behind it)
        try:
            if client is not None and not client.closed:
                ansi = await client.capture(pane_id)
                if watch.family is not None and watch.family.with_title is not None:
                    # Its screen alone cannot tell every state: the title as it is now, not as last listed.
                    title = "\n".join(await client.command("display-message", "-p", "-t", pane_id, "#{pane_title}"))
            else:
                ansi = await asyncio.to_thread(self.server.capture, pane_id, True)  # a forked capture-pane, off the loop
        except (TimeoutError, TmuxCommandError, TmuxUnavailable, ControlError):
            self.request_discovery()  # the pane (or its session) is probably gone
            return None
        if self.panes.get(pane_id) is not watch:
            return None  # forgotten while it was being read
        changed = watch.capture != ansi
        watch.capture = ansi
        if changed:
            self.store.emit(PaneCaptured(pane_id))
        agent_pid = watch.agent_pid
        if agent_pid and not self.host.process_exists(agent_pid):
            # Claude has exited since the last discovery: read the pane as what it is now.
            agent_pid = watch.agent_pid = None
            self.request_discovery()
        now = self.clock()
        fuser = watch.fuser
        process = self.facts.process(agent_pid)
        screen = screen_observation(watch.record, agent_pid, ansi, process.version if process else (watch.version or None), watch.family, title)
        files = watch.family.status_files if watch.family is not None else None  # the family's own status, if it writes one
        status, asked = (self.facts.status(agent_pid), self.facts.asked_status(agent_pid)) if files is not None else (None, None)
        if status is not None and files is not None:
            fuser.observe(files.observation(status), now, at=status.updated_at or now)
        elif "status-file" in fuser.verdicts:
            del fuser.verdicts["status-file"]  # Claude removed its file (it exited)
        if asked is not None and files is not None:
            fuser.observe(files.observation(asked, source=Source.CLAUDE_AGENTS), now, at=asked.updated_at or now)
        elif "claude-agents" in fuser.verdicts:
            del fuser.verdicts["claude-agents"]
        observation = fuser.observe(screen, now, output_changed=changed)
        if fuser.idle_deadline is not None:
            watch.timing.look_again(fuser.idle_deadline + 0.05)  # when the grace may have run out
        if fuser.claim_deadline is not None:
            watch.timing.look_again(fuser.claim_deadline)  # the file's "waiting" may be passed over then (fusion.Fuser._moved_on)
        if fuser.hook_deadline is not None:
            # A redraw's time after a hook the screen contradicts: the hook is then
            # dropped (a forged or stale event must not hold the row while the pane
            # stays quiet).
            watch.timing.look_again(fuser.hook_deadline)
        before = self.store.agents[pane_id].state if pane_id in self.store.agents else None
        agent = self._update(watch, observation, captured=began, screen=screen)
        # A first read, a changed screen (a reply can land between two reads that both say idle), a look a state change asked for.
        records = before is None or (changed and now - watch.records_read >= RECORDS_EVERY) or any(at <= now for at in watch.transcript_looks)
        if before is not None and agent.state is not before:
            # Claude writes a turn to its transcript a moment after drawing it
            # (and the others their session records): look again after a state
            # change, so the last turn is not left unread until the pane next
            # changes.
            watch.transcript_looks = [now + lag for lag in TRANSCRIPT_LOOKS]
            records = True
        elif changed and not watch.transcript_looks and watch.family is not None and watch.family.transcripts is None:
            # A turn quicker than two reads changes the screen and not the state; its record is written a moment
            # after the reply is drawn: one more look, once the record may be there (and findable again).
            watch.transcript_looks = [now + RECORD_LOOK]
        watch.transcript_looks = [at for at in watch.transcript_looks if at > now]
        if watch.transcript_looks:
            watch.timing.look_again(watch.transcript_looks[0])
        said = (watch.prompted_at, watch.replied_at)
        await self.transcripts.follow(watch, agent, status)
        if records and agent_pid and watch.family is not None and watch.family.transcripts is None:
            await self._session_usage(watch, agent_pid)
        if (watch.prompted_at, watch.replied_at) != said and self.panes.get(pane_id) is watch and watch.fuser.current is not None:
            # The transcript can date the state (a fresh headspace, a state with no
            # word from Claude's files): the clock may move earlier now, not at the
            # next change of a pane that may stay quiet for minutes.
            agent = self._update(watch, watch.fuser.current)
        return agent

    async def _session_usage(self, watch: PaneWatch, agent_pid: int) -> None:
        """A family without a transcript here: its tokens from its own session record, read where it runs, on change only."""
        assert watch.family is not None
        watch.records_read = self.clock()
        usage = await self.host.session_usage(watch.family.name, agent_pid)
        if usage is not None and self.panes.get(watch.record.pane_id) is watch:  # None: not asked (a dropped link); keep what was
            self.store.used(watch.record.pane_id, priced(usage, watch.family.context_window) if usage.model or usage.tokens.total else None)

    def _update(self, watch: PaneWatch, observation: Observation, at: float | None = None, captured: float | None = None, screen: Observation | None = None) -> Agent:
        agent_pid = watch.agent_pid
        process = self.facts.process(agent_pid)
        now = self.clock() if at is None else at
        with self.store.one_reading():  # the reading and what the answer desk makes of it: one AgentChanged
            agent = self.store.observed(
                watch.record,
                watch.key,
                observation,
                now,
                agent_pid=agent_pid,
                status=self.facts.status(agent_pid),
                agent_version=(process.version or "") if process else watch.version,
                family=(watch.family or CLAUDE).name,
                claims=watch.claims(observation.state, self.journal.remembered if self.journal is not None else None),
                captured=captured,
            )
            if screen is not None:  # a capture was read: its mode and blocked calls (``screen``: before fusion)
                self.store.screen_read(watch.record.pane_id, screen, now)
            if watch.mode and not agent.mode:  # nothing on screen or from a hook said it yet: its command line's word
                self.store.mode(watch.record.pane_id, watch.mode, now)
            self.desk.observed(watch.record.pane_id)
        return agent

    def replay(self, record: PaneRecord, ansi: str, observation: Observation, at: float, family: Family) -> Agent:
        """Show a recorded pane (of ``family``'s agent) as if it had just been observed (the app without tmux: tests, snapshots)."""
        watch = self.panes.get(record.pane_id)
        if watch is None:
            watch = self.panes[record.pane_id] = PaneWatch(record, agent_key("replay", self.server.key, record.pane_id, record.pid, ""), family=family)
        watch.record, watch.capture = record, ansi
        return self._update(watch, observation, at=at, screen=observation)

    def _watched(self, pane_id: str) -> Watched | None:
        """The answer desk's view of a pane: its agent and Claude's pid (None when not watched)."""
        watch = self.panes.get(pane_id)
        agent = self.store.agents.get(pane_id)
        return Watched(agent, watch.agent_pid or 0) if watch is not None and agent is not None else None

    async def _locate_held(self, call: PendingCall) -> str | None:
        """The pane of the one watched agent of the call's family whose conversation record a held hook's call names (Codex's; None: not told apart).

        The record is the agent's by folder and time (detect/session_usage.py):
        two Codex agents in one folder own none, so neither is named.  It
        must be a conversation Codex's terminal UI began: an editor's Codex
        in the same folder (its conversations run in the shared server, no
        agent process of their own) writes records that would otherwise
        look like the pane's.
        """
        if not call.transcript or not call.cwd:
            return None
        wanted, folder = os.path.realpath(call.transcript), os.path.realpath(call.cwd)
        found = []
        for pane_id, watch in list(self.panes.items()):
            agent = self.store.agents.get(pane_id)
            if watch.family is None or watch.family.name != call.family or not watch.agent_pid or agent is None:
                continue
            if not agent.cwd or os.path.realpath(agent.cwd) != folder:
                continue  # another folder: not its call (and its records are not searched)
            path = await self.host.record_path(watch.family.name, watch.agent_pid)  # its usage record; None on another host: not searched from here
            if path and os.path.realpath(path) == wanted and await asyncio.to_thread(from_terminal, path):
                found.append(pane_id)
        return found[0] if len(found) == 1 else None

    # -- asked by the answering side -------------------------------------------------------
    def mark(self, pane_id: str, delivery: str) -> None:
        """Record the result of an action on the row ("not delivered: ...")."""
        self.store.marked(pane_id, delivery, self.clock())

    def renew(self, pane_id: str, request: str) -> None:
        """An answer to ``request`` went and ended: the next prompt read there is a new appearance."""
        self.store.renew(pane_id, request, self.clock())

    def refresh_soon(self, pane_id: str) -> None:
        """Read the pane again soon (after keys were sent to it)."""
        self.sessions.read_soon(pane_id)
