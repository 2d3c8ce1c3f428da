"""Keeping the agent model of one tmux server current, one detector per session.

Data flows one way: pane output (tmux control mode), Claude's status files
and hook events become observations; a fuser per pane turns them into the
agent's state; the store (store.py) keeps the agents and sends every change
out as a typed event (events.py) to its subscribers: the journal (command
machine, event log) first, then the app, which turns them into Textual
messages.  No Textual here.

The parts, each small and in its own module:

* ``LocalHost`` (host.py): everything outside headspace (tmux, processes,
  Claude's files) is asked of the host, the seam for remote hosts;
* ``discovery.plan``: which panes to watch and who their agents are (pure);
* ``PaneWatch`` (pane_watch.py): everything kept about one watched pane, so
  forgetting a pane is one operation;
* ``schedule.py``: when a pane is read again (pure, clock injected);
* ``Fuser`` (detect/fusion.py): how the sources add up;
* ``AgentStore`` (store.py): the agents, the one writer of them, and the
  subscribers told of each change;
* ``Supervisor`` (supervise.py): every long-lived loop here (discovery, one
  detector per tmux session, the socket, status-file and hook watchers)
  restarts after an error, which is logged and told as one line.

Discovery lists panes and reads the process table (one ``list-panes`` and
one process-table read for the whole server) when something says the
layout changed, when a pane we do not watch starts another program, when
the server's socket appears or goes, and every 30 s as a safety net.  Every
tmux session gets a control client, so a Claude started in any pane is seen
within about a second.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import discovery
from .answering.desk import AnswerDesk, Watched
from .detect.fusion import Fuser
from .detect.registry import ClaudeStatus, status_observation
from .detect.transcript import transcript_path
from .events import AgentChanged, AgentRemoved, Event, Notice, PaneCaptured, ProblemChanged
from .hooks.spool import HookEvent, SpoolRefused, hook_observation
from .host import LocalHost
from .journal import Journal, turn_time
from .model import Agent, AgentState, Observation
from .pane_watch import PaneWatch, agent_key
from .remote.host import RemoteHost
from .scan import ask_claude, screen_observation
from .schedule import due_at
from .store import AgentStore
from .supervise import Backoff, Supervisor
from .tmux.attach_pace import AttachPace
from .tmux.claude_process import ClaudeProcess
from .tmux.control import ControlClient, ControlError
from .tmux.server import PaneRecord, TmuxCommandError, TmuxServer, TmuxUnavailable

DISCOVERY_INTERVAL = 30.0  # a full look even without any event (a safety net; events trigger it sooner)
DISCOVERY_MIN_GAP = 0.5
SERVER_RETRY = 2.0  # with no server, look again this often (the socket watch usually says sooner)
SOCKET_CHECK = 0.25  # with no server, its socket file is looked at this often (a stat, no fork)...
SOCKET_CHECK_UP = 2.0  # ...and while it runs, this often (its end is told sooner by the control clients)
IDLE_WAKE = 30.0  # with a control client, an unchanged session sleeps this long
UNKNOWN_PANE_RECHECK = 1.0  # a pane we do not watch is asked what it runs at most this often
TRANSCRIPT_LAG = 0.5  # after a state change, read the pane (and its transcript) once more this much later
ASK_CLAUDE_AFTER = 5.0  # an agent without a status file this long is asked about through ``claude agents``...
ASK_CLAUDE_GAP = 30.0  # ...at most this often per binary and config dir
ATTACH_QUIET = 0.3  # a control client attaches after this long without a session or window notification...
ATTACH_QUIET_MAX = 3.0  # ...waiting at most this long for such a moment
REMOTE_RESTART_LIMIT = 10.0  # a remote host's failed loop starts again at most this long after
CHANNEL_RETRY = 5.0  # while another headspace holds the answer channel, ask for it this often
# Notifications after which the panes of the server may have moved or been renamed.
LAYOUT_EVENTS = frozenset(
    {
        "sessions-changed",
        "session-renamed",
        "session-window-changed",
        "window-add",
        "window-close",
        "window-renamed",
        "window-pane-changed",
        "unlinked-window-add",
        "unlinked-window-close",
        "unlinked-window-renamed",
        "layout-change",
    }
)

log = logging.getLogger(__name__)


class Monitor:
    def __init__(
        self,
        server: TmuxServer,
        *,
        on_change: Callable[[Agent], None] | None = None,
        on_remove: Callable[[str], None] | None = None,
        on_problem: Callable[[str | None], None] | None = None,
        include_all: bool = False,
        config_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
        idle_grace: float = 5.0,
        journal: Journal | None = None,
        spool: Path | None = None,
        hooks: bool = True,
        on_capture: Callable[[str], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        host: LocalHost | RemoteHost | None = None,
        answers: bool = False,
    ) -> None:
        self.host = host or LocalHost(server)
        self.server = self.host.server
        self.on_notice = on_notice  # one line for the user: a source turned off, a file refused
        self.on_capture = on_capture
        self.started = clock()
        self.on_change = on_change
        self.on_remove = on_remove
        self.on_problem = on_problem
        self.include_all = include_all
        # Assumed for a Claude whose own config dir cannot be read (a remote host assumes none).
        self.config_dir = config_dir or self.host.default_config_dir()
        self.clock = clock
        self.idle_grace = idle_grace
        self.journal = journal
        self.hooks = hooks
        self.spool = spool
        self.focused: str | None = None
        self.store = AgentStore(self.host.name)
        self.answers = answers  # open the answer channel (where the host has one)
        self.desk = AnswerDesk(self.store, self._watched, clock)
        self._retry = Backoff(first=1.0, limit=5.0, healthy_after=30.0)  # reconnecting to a remote host
        self.panes: dict[str, PaneWatch] = {}  # every watched pane, by id
        self.all_panes: dict[str, PaneRecord] = {}  # every pane of the server at the last discovery
        self.processes: dict[int, ClaudeProcess] = {}  # by pid: version and config dir, read once
        self.statuses: dict[int, ClaudeStatus] = {}  # every watched config dir's status files, by pid
        self.asked: dict[int, ClaudeStatus] = {}  # what ``claude agents --json`` said, for agents without a file
        self._statuses_by_dir: dict[Path, dict[int, ClaudeStatus]] = {}
        self._status_watchers: dict[Path, asyncio.Task] = {}
        self._first_seen: dict[int, float] = {}
        self._asked_at: dict[tuple[str, Path | None], float] = {}
        self._asking: asyncio.Task | None = None
        self._sessions: dict[str, asyncio.Task] = {}
        self._wake: dict[str, asyncio.Event] = {}
        self._unknown_checked: dict[str, float] = {}
        self._unknown_checks: dict[str, asyncio.Task] = {}
        self._unknown_again: set[str] = set()
        self._discover_soon = asyncio.Event()
        self._socket_wake = asyncio.Event()
        self.clients: dict[str, ControlClient] = {}
        # Discoveries are numbered as they start; ``discoveries`` is the number of the last one that
        # listed the server's panes.  A session whose client ended waits for one that started after.
        self._discoveries_started = 0
        self.discoveries = 0
        self.attach_pace: Callable[[], AttachPace] = AttachPace  # how often a session's client may be attached
        self._attaching = asyncio.Lock()  # one control client attaching at a time (see _quiet_moment)
        self._last_notification = 0.0  # when tmux last told a control client of a session or window change
        self._awaiting_discovery: set[str] = set()  # sessions whose client ended, waiting to be seen still there
        self._stopping = False
        self._problem: str | None = "starting"
        # A remote host's loops come back within REMOTE_RESTART_LIMIT after any error, not only
        # "can't reach" (which discovery retries itself): a link always comes back within 10 s.
        restart = functools.partial(Backoff, limit=REMOTE_RESTART_LIMIT) if self.host.remote else Backoff
        self.supervisor = Supervisor(self._loop_failed, backoff=restart)
        self._history_reader = self._new_history_reader()
        if isinstance(self.host, RemoteHost):
            self.host.on_lost = self.request_discovery
            self.host.on_notice = lambda text: self.store.emit(Notice(text))
        if journal is not None:
            journal.on_notice = lambda text: self.store.emit(Notice(text))  # a log that cannot be written, and again
            self.subscribe(journal.on_event)  # first: it sets the command and outcome the others show
        if any(c is not None for c in (on_change, on_remove, on_problem, on_capture, on_notice)):
            self.subscribe(self._callbacks)  # older callers' callbacks; the service subscribes instead

    # -- views for readers that want one thing of every pane ----------------------
    @property
    def agents(self) -> dict[str, Agent]:
        return self.store.agents

    @property
    def records(self) -> dict[str, PaneRecord]:
        return {pane_id: watch.record for pane_id, watch in self.panes.items()}

    @property
    def captures(self) -> dict[str, str]:
        return {pane_id: watch.capture for pane_id, watch in self.panes.items() if watch.capture is not None}

    @property
    def fusers(self) -> dict[str, Fuser]:
        return {pane_id: watch.fuser for pane_id, watch in self.panes.items()}

    @property
    def claude_pids(self) -> dict[str, int | None]:
        return {pane_id: watch.claude_pid for pane_id, watch in self.panes.items()}

    # -- the loops ----------------------------------------------------------
    async def run(self) -> None:
        self._stopping = self.store.quiet = False
        self._attaching = asyncio.Lock()  # this run's loop's
        if self.config_dir is not None:
            self._watch_config_dir(self.config_dir)
        if self.hooks:
            self.supervisor.start("the hook watcher", self._watch_hooks)
            socket = self.host.answer_socket(self.spool) if self.answers else None
            if socket is not None:
                problem = await self.desk.open(socket)
                if problem:
                    self.store.emit(Notice(problem))
                if self.desk.taken:  # another headspace answers hooks: take over once it is gone
                    self.supervisor.start("the answer channel's takeover", functools.partial(self._take_over_channel, socket))
        if self.host.socket_file():
            self.supervisor.start("the tmux socket watcher", self._watch_socket)
        try:
            await self.supervisor.start("discovery", self._discovery_loop)
        finally:
            await self.stop()

    async def _take_over_channel(self, socket: Path) -> None:
        """Ask for the answer channel again every few seconds while another headspace holds it.

        Its owner holds a lock the kernel releases however it ends, so a first
        headspace killed with ``kill -9`` hands the channel to this one within
        CHANNEL_RETRY seconds (before, hooks went unanswered until a restart).
        """
        while self.desk.taken and not self._stopping:
            await asyncio.sleep(CHANNEL_RETRY)
            if await self.desk.open(socket) is None:
                self.store.emit(Notice("answer channel on: the headspace that had it has ended"))
                return

    async def _discovery_loop(self) -> None:
        while True:
            started = self.clock()
            self._discover_soon.clear()  # before looking: a request made while we look is a look again
            await self.discover()
            if self._problem is None:
                wait = DISCOVERY_INTERVAL
            elif self.host.remote:  # out of reach: try again soon, then less often
                wait = self._retry.after_failure(self.clock() - started)
            else:
                wait = SERVER_RETRY
            try:
                await asyncio.wait_for(self._discover_soon.wait(), wait)
            except TimeoutError:
                pass
            await asyncio.sleep(DISCOVERY_MIN_GAP)  # many events at once: one discovery

    async def stop(self) -> None:
        """Stop every loop and wait for it: each detector detaches its control client,
        so no tmux client or pipe outlives the monitor.  Safe to call twice."""
        self._stopping = self.store.quiet = True  # a last read after the stop must not reach the app
        extra = [*self._unknown_checks.values(), *([self._asking] if self._asking else [])]
        for task in extra:
            task.cancel()
        await self.supervisor.stop()
        await asyncio.gather(*extra, return_exceptions=True)
        self._sessions.clear()
        self._status_watchers.clear()
        self._unknown_checks.clear()
        for client in list(self.clients.values()):
            await client.close()
        await self.desk.close()
        await self.host.close()
        self._history_reader.shutdown(wait=False, cancel_futures=True)
        self._history_reader = self._new_history_reader()  # for a run after this one (threads start on first use)

    def _loop_failed(self, name: str, message: str) -> None:
        self.store.emit(Notice(message))

    def subscribe(self, subscriber: Callable[[Event], None]) -> None:
        """Be told every event from now on, in order (see ``AgentStore.subscribe``)."""
        self.store.subscribe(subscriber)

    def _callbacks(self, event: Event) -> None:
        """The constructor's callbacks, as one subscriber (each one optional)."""
        if isinstance(event, AgentChanged) and self.on_change is not None:
            self.on_change(event.agent)
        elif isinstance(event, AgentRemoved) and self.on_remove is not None:
            self.on_remove(event.pane_id)
        elif isinstance(event, PaneCaptured) and self.on_capture is not None:
            self.on_capture(event.pane_id)
        elif isinstance(event, ProblemChanged) and self.on_problem is not None:
            self.on_problem(event.problem)
        elif isinstance(event, Notice) and self.on_notice is not None:
            self.on_notice(event.text)

    def request_discovery(self) -> None:
        self._discover_soon.set()

    async def _watch_socket(self) -> None:
        """Discover as soon as the server's socket appears, goes or is replaced (a restarted server).

        tmux 3.3 leaves its socket behind after ``kill-server`` and the next
        server binds a new one in its place, often with the same inode: its
        modification time (in ns) is what tells them apart.
        """
        path = self.host.socket_file()

        def identity() -> tuple[int, int, int] | None:
            try:
                st = os.stat(path)
            except OSError:
                return None
            return (st.st_dev, st.st_ino, st.st_mtime_ns)

        last = identity()
        while True:
            try:  # a lost server ends the slow wait at once (see _report)
                await asyncio.wait_for(self._socket_wake.wait(), SOCKET_CHECK if self._problem else SOCKET_CHECK_UP)
            except TimeoutError:
                pass
            self._socket_wake.clear()
            now = identity()
            if now != last:
                last = now
                self.request_discovery()

    async def discover(self) -> None:
        """List panes and processes once; start or stop session detectors."""
        self._discoveries_started += 1
        number = self._discoveries_started
        try:
            records, table = await self.host.snapshot()
        except TmuxUnavailable as exc:
            self._report(str(exc))
            if self.host.remote:
                await self._go_offline(str(exc))
            else:
                await self._lose_server()
            return
        except TmuxCommandError as exc:
            self._report(f"tmux: {exc}")
            return
        self._report(None)
        self.store.online()
        self.all_panes = {r.pane_id: r for r in records}
        for pane_id in [p for p in self._unknown_checked if p not in self.all_panes]:
            del self._unknown_checked[pane_id]  # a closed pane: nothing of it is kept (churn must not grow us)
        now = self.clock()
        found = discovery.plan(
            records,
            table,
            {pane_id: watch.key for pane_id, watch in self.panes.items()},
            set(self.processes),
            host=self.host.name,
            server=self.server.key,
            include_all=self.include_all,
        )
        if found.new_claudes:
            for process in await self.host.claude_processes(found.new_claudes, table):
                self.processes[process.pid] = process
                self._first_seen[process.pid] = now
                folder = process.config_dir or self.config_dir
                if folder is not None:
                    self._watch_config_dir(folder)
        for pane_id in found.replaced:
            self._forget(pane_id)
        for sighting in found.watch:
            record, claude_pid = sighting.record, sighting.claude_pid
            watch = self.panes.get(record.pane_id)
            if watch is None:
                self.panes[record.pane_id] = PaneWatch(record, sighting.key, claude_pid, fuser=Fuser(self.idle_grace))
                self._mark(record.pane_id)  # its detector may be asleep (a session with no agent yet): read it now
                continue
            old, watch.record, watch.claude_pid = watch.record, record, claude_pid
            if old.dead != record.dead or old.current_command != record.current_command:
                self._mark(record.pane_id)
            self.store.moved(record, now)  # a renamed session or window, a moved pane: the row follows at once
        seen = {sighting.record.pane_id for sighting in found.watch}
        for pane_id in [p for p in self.panes if p not in seen]:
            self._forget(pane_id)
        for pid in [pid for pid in self.processes if pid not in table]:
            self.processes.pop(pid, None)  # that Claude is gone (a new one may reuse the pid)
            self._first_seen.pop(pid, None)
            self.asked.pop(pid, None)
        self._ask_claude_soon(now)
        # Every session gets a detector (and a control client), not only those with
        # agents: a Claude started in any pane is then noticed by its first output.
        sessions = found.sessions
        for session_id in sessions - set(self._sessions):
            self._wake[session_id] = asyncio.Event()
            self._sessions[session_id] = self.supervisor.start(f"the detector of tmux session {session_id}", functools.partial(self._session_loop, session_id))
        for session_id in set(self._sessions) - sessions:
            await self._end_session(session_id)
        self.discoveries = number
        for session_id in self._awaiting_discovery & sessions:
            self._wake_session(session_id)  # still there: its detector may attach again

    async def _end_session(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._wake.pop(session_id, None)
        await self.supervisor.cancel(f"the detector of tmux session {session_id}")

    async def _go_offline(self, reason: str) -> None:
        """A remote host out of reach: its rows stay, marked offline with ssh's reason; its
        detectors end (their control clients died with the link) until it answers again."""
        self.store.offline(reason, self.clock())
        for session_id in list(self._sessions):
            await self._end_session(session_id)
        assert isinstance(self.host, RemoteHost)
        await self.host.lost()

    async def _lose_server(self) -> None:
        """The server is gone: forget its panes and end its detectors (a new server reuses ``$0`` and ``%0``)."""
        for pane_id in list(self.panes):
            self._forget(pane_id)
        for session_id in list(self._sessions):
            await self._end_session(session_id)
        self.all_panes = {}

    def _mark(self, pane_id: str) -> None:
        """Note that a pane changed; its session's detector will re-read it (coalesced)."""
        watch = self.panes.get(pane_id)
        if watch is None:
            return
        watch.timing.changed(self.clock())
        self._wake_session(watch.record.session_id)

    def _wake_session(self, session_id: str) -> None:
        wake = self._wake.get(session_id)
        if wake is not None:
            wake.set()

    def _pane_output(self, pane_id: str, size: int = 1 << 20) -> None:
        watch = self.panes.get(pane_id)
        if watch is not None:
            agent = self.agents.get(pane_id)
            # A working agent's spinner ticks in small writes; a dialog or the end of
            # a turn is a large redraw.  Small writes are looked at lazily.
            watch.timing.output(self.clock(), size, agent is not None and agent.state is AgentState.WORKING)
            self._wake_session(watch.record.session_id)
        else:
            self._unknown_output(pane_id)

    def _unknown_output(self, pane_id: str) -> None:
        """A pane we do not watch wrote something: maybe Claude just started in it.

        It is asked what it runs (through its session's control client, no
        fork) at most once a second; only a changed answer costs a discovery.
        Output while a question is pending asks once more afterwards, so a
        Claude that draws once and waits is not missed.
        """
        if pane_id in self._unknown_checks:
            self._unknown_again.add(pane_id)
            return
        delay = max(0.0, self._unknown_checked.get(pane_id, 0.0) + UNKNOWN_PANE_RECHECK - self.clock())
        self._unknown_checks[pane_id] = asyncio.create_task(self._check_unknown(pane_id, delay))

    async def _check_unknown(self, pane_id: str, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
            self._unknown_checked[pane_id] = self.clock()
            record = self.all_panes.get(pane_id)
            client = self.clients.get(record.session_id) if record is not None else None
            if record is None or client is None or client.closed:
                self.request_discovery()  # a pane newer than our last look
                return
            lines = await client.command("display-message", "-p", "-t", pane_id, "#{pane_current_command}")
            if (lines[0] if lines else "") != record.current_command:
                self.request_discovery()
        except (TimeoutError, ControlError):
            self.request_discovery()
        except Exception:
            log.exception("checking pane %s failed", pane_id)
        finally:
            self._unknown_checks.pop(pane_id, None)
            if pane_id in self._unknown_again and not self._stopping:
                self._unknown_again.discard(pane_id)
                self._unknown_output(pane_id)

    def _control_event(self, name: str, args: str) -> None:
        self._last_notification = self.clock()
        if name in LAYOUT_EVENTS:
            self.request_discovery()
        elif name == "pane-mode-changed":
            self._mark(args.strip())

    async def _session_loop(self, session_id: str) -> None:
        """The detector of one tmux session: re-read a pane only when it changed.

        Changes come from the session's control client (``%output``), from
        Claude's status file and hooks, and from the panes' own rechecks; the
        pace is ``schedule.due_at``'s.  A control client that ends is replaced
        only as ``AttachPace`` allows and only once a discovery made after its
        end still lists the session (a session that is gone is never attached
        again: its detector is ended by that discovery); until then the panes
        are polled.
        """
        wake = self._wake.setdefault(session_id, asyncio.Event())
        client: ControlClient | None = None
        pace = self.attach_pace()
        attached_at: float | None = None
        confirm_after = -1  # the discovery count a new attach waits to exceed (-1: none needed)

        def ended(reason: str) -> None:
            self.request_discovery()  # the session may be gone...
            wake.set()  # ...or only the client: replace it

        try:
            while not self._stopping:  # a swallowed cancel (see AgentStore.quiet) must still end the loop
                wake.clear()  # before looking: a change marked while we work wakes the next round
                now = self.clock()
                if client is not None and client.closed:
                    self.clients.pop(session_id, None)
                    await client.close()
                    pace.ended(now, attached_at)
                    log.info("control client of session %s ended; attaching again after a discovery still lists it", session_id)
                    client, attached_at, confirm_after = None, None, self._discoveries_started
                    self._awaiting_discovery.add(session_id)
                    self.request_discovery()
                if client is None and now >= pace.next_at() and self.discoveries > confirm_after:
                    self._awaiting_discovery.discard(session_id)
                    pace.attaching(now)
                    # The host's server builds the command line (through ssh for a remote host).
                    fresh = ControlClient(self.server, session_id, on_output=self._pane_output, on_event=self._control_event, on_exit=ended)
                    try:
                        async with self._attaching:  # one at a time, in a quiet moment (see _quiet_moment)
                            await self._quiet_moment()
                            await fresh.start()
                        client, attached_at = fresh, now
                        self.clients[session_id] = client
                        for watch in self._session_panes(session_id):
                            watch.timing.changed(now)  # anything may have changed unseen
                    except TmuxUnavailable:
                        pace.ended(self.clock(), None)
                        confirm_after = self._discoveries_started
                        self._awaiting_discovery.add(session_id)
                        self.request_discovery()
                polling = client is None or client.closed
                watches = self._session_panes(session_id)
                for watch in watches:
                    due = due_at(watch.timing, now, polling=polling, focused=watch.record.pane_id == self.focused)
                    if due is not None and due <= now:
                        watch.timing.read(now)
                        await self.observe(watch.record.pane_id, None if polling else client)
                now = self.clock()
                timeout = IDLE_WAKE if not polling else max(0.05, pace.next_at() - now)
                for watch in watches:
                    due = due_at(watch.timing, now, polling=polling, focused=watch.record.pane_id == self.focused)
                    if due is not None:
                        timeout = min(timeout, due - now)
                try:
                    await asyncio.wait_for(wake.wait(), timeout=max(timeout, 0.005))
                except TimeoutError:
                    pass
        finally:
            self._awaiting_discovery.discard(session_id)
            # Also when cancelled while attaching: the tmux -C process is ours to end.
            if client is not None:
                if self.clients.get(session_id) is client:
                    self.clients.pop(session_id, None)
                await client.close()

    async def _quiet_moment(self) -> None:
        """Wait until tmux has sent no session or window notification for ATTACH_QUIET s (at most ATTACH_QUIET_MAX).

        tmux 3.3a (and later, up to at least 3.5a: upstream PR #4980) crashes
        its server when a session or window notification reaches a control
        client that is still attaching (its control state does not exist yet).
        Measured with a debug build under the churn soak: ``control_write``
        dereferenced that NULL state ("segfault at 20"), right as a second
        headspace attached twenty clients at once while sessions were created
        and killed.  headspace cannot close that window, only stay out of the
        storm: attaches go one at a time, each after a moment without
        notifications (those come in bursts: a session made or killed, a
        window opened or closed), and never in a burst of their own.
        """
        deadline = self.clock() + ATTACH_QUIET_MAX
        while self.clock() < deadline and self.clock() - self._last_notification < ATTACH_QUIET:
            await asyncio.sleep(ATTACH_QUIET / 2)

    def _session_panes(self, session_id: str) -> list[PaneWatch]:
        return [w for w in self.panes.values() if w.record.session_id == session_id]

    def _watch_config_dir(self, folder: Path) -> None:
        """Watch one Claude config dir's status files (once per dir: agents may use different ones)."""
        if folder not in self._status_watchers and not self._stopping:
            self._status_watchers[folder] = self.supervisor.start(f"the status-file watcher of {folder}", lambda: self._watch_statuses(folder))

    async def _watch_statuses(self, folder: Path) -> None:
        async for statuses in self.host.watch_statuses(folder):
            self._statuses_by_dir[folder] = statuses
            merged: dict[int, ClaudeStatus] = {}
            for found in self._statuses_by_dir.values():
                merged.update(found)
            changed = {pid for pid in set(merged) | set(self.statuses) if merged.get(pid) != self.statuses.get(pid)}
            self.statuses = merged
            self._mark_pids(changed)

    def _mark_pids(self, pids: set[int]) -> None:
        for pane_id, watch in list(self.panes.items()):
            if watch.claude_pid in pids:
                self._mark(pane_id)

    def _ask_claude_soon(self, now: float) -> None:
        """Ask ``claude agents --json`` about agents that still have no status file (in the background).

        Only for versions that have the command, only after ASK_CLAUDE_AFTER
        seconds without a file (Claude writes it a moment after start), at
        most every ASK_CLAUDE_GAP seconds per binary and config dir, one call
        at a time: it costs about 0.4 s of CPU.
        """
        if (self._asking is not None and not self._asking.done()) or not self.host.can_ask_claude:
            return
        due = [
            p
            for pid, p in self.processes.items()
            if pid not in self.statuses
            and now - self._first_seen.get(pid, now) >= ASK_CLAUDE_AFTER
            and now - self._asked_at.get((p.binary, p.config_dir), 0.0) >= ASK_CLAUDE_GAP
        ]
        if not due:
            return
        for process in due:
            self._asked_at[(process.binary, process.config_dir)] = now
        self._asking = asyncio.create_task(self._ask_claude(due))

    async def _ask_claude(self, processes: list[ClaudeProcess]) -> None:
        try:
            answers = await ask_claude(processes, {p.pid for p in processes})
        except Exception:
            log.exception("asking claude agents failed")
            return
        changed = {pid for pid, status in answers.items() if self.asked.get(pid) != status}
        self.asked.update(answers)
        self._mark_pids(changed)

    async def _watch_hooks(self) -> None:
        """Hook events (when installed): the most confident and often the first word on a change.

        One bad event is skipped (and logged), never the end of the watch; an
        unsafe spool folder turns hooks off with one line to the user.
        """
        try:
            async for event in self.host.watch_hooks(self.spool):
                try:
                    self.hook_event(event)
                except Exception:
                    log.exception("hook event %s skipped", event.name)
        except SpoolRefused as exc:
            log.warning("%s", exc)
            self.store.emit(Notice(str(exc)))

    def hook_event(self, event: HookEvent) -> None:
        watch = self.panes.get(event.pane_id)
        agent = self.agents.get(event.pane_id)
        if watch is None or agent is None:
            return  # not a pane we watch (another server, or not yet discovered)
        if event.pid and watch.claude_pid and event.pid != watch.claude_pid:
            return  # the same %N on another tmux server: not this agent
        if event.transcript_path and watch.tail is None:
            watch.tail = self.host.transcript(Path(event.transcript_path))  # replayed at the pane's next read
        observation = hook_observation(event)
        if observation is not None:
            fused = watch.fuser.observe(observation, self.clock(), at=event.ts)
            self._update(watch, fused)
        self._mark(event.pane_id)

    # -- transcript ---------------------------------------------------------------
    @staticmethod
    def _new_history_reader() -> ThreadPoolExecutor:
        """One thread reads and replays every transcript, one after another.

        Ten agents starting at once gave ten threads: the event loop then waits
        behind all of them for the interpreter lock each time it gives it up
        (every SQLite write, every pipe read), and one step of the UI took a
        third of a second.  The work is Python code, serialised by the lock
        anyway, so one thread does it as fast.
        """
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix="headspace-history")

    async def _read_transcript(self, watch: PaneWatch, agent: Agent, status: ClaudeStatus | None) -> None:
        """Follow an agent's transcript: history before headspace started is replayed
        silently, anything since is recorded.  Reading runs in a thread: a first
        read of a long transcript takes a tenth of a second."""
        if watch.tail is None:
            if status is None or not status.session_id or not status.cwd:
                return
            process = self.processes.get(agent.claude_pid)
            folder = (process.config_dir if process else None) or self.config_dir
            if folder is None:
                return
            path = transcript_path(folder, status.cwd, status.session_id)
            if not await self.host.exists(path):
                return
            watch.tail = self.host.transcript(path)
        tail, journal = watch.tail, self.journal
        first = not tail.opened
        turns = await asyncio.get_running_loop().run_in_executor(self._history_reader, tail.read_new)
        if not turns or journal is None or self.panes.get(agent.pane_id) is not watch:
            return
        work = None
        if first:
            cut = next((i for i, t in enumerate(turns) if (turn_time(t) or 0.0) >= self.started), len(turns))
            if cut:
                adopt = await asyncio.get_running_loop().run_in_executor(self._history_reader, journal.replayed, agent, turns[:cut])
                if self.panes.get(agent.pane_id) is not watch:
                    return
                work = adopt()
            turns = turns[cut:]
        if turns:
            work = journal.turns(agent, turns)  # the command machine and outcomes; the journal records them
        if work is not None:
            self.store.work(agent.pane_id, *work, self.clock())

    # -- one pane -------------------------------------------------------------
    async def observe(self, pane_id: str, client: ControlClient | None = None) -> Agent | None:
        watch = self.panes.get(pane_id)
        if watch is None:
            return None
        record = watch.record
        try:
            if client is not None and not client.closed:
                ansi = await client.capture(pane_id)
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
        claude_pid = watch.claude_pid
        if claude_pid and not self.host.process_exists(claude_pid):
            # Claude has exited since the last discovery: read the pane as what it is now.
            claude_pid = watch.claude_pid = None
            self.request_discovery()
        now = self.clock()
        fuser = watch.fuser
        process = self.processes.get(claude_pid) if claude_pid else None
        screen = screen_observation(record, claude_pid, ansi, process.version if process else None)
        status = self.statuses.get(claude_pid) if claude_pid else None
        asked = self.asked.get(claude_pid) if claude_pid and status is None else None
        if status is not None:
            fuser.observe(status_observation(status), now, at=status.updated_at or now)
        elif "status-file" in fuser.verdicts:
            del fuser.verdicts["status-file"]  # Claude removed its file (it exited)
        if asked is not None:
            fuser.observe(status_observation(asked, source="claude-agents"), now, at=asked.updated_at or now)
        elif "claude-agents" in fuser.verdicts:
            del fuser.verdicts["claude-agents"]
        observation = fuser.observe(screen, now, output_changed=changed)
        if fuser.idle_deadline is not None:
            watch.timing.look_again(fuser.idle_deadline + 0.05)  # when the grace may have run out
        if fuser.hook_deadline is not None:
            # A redraw's time after a hook the screen contradicts: the hook is then
            # dropped (a forged or stale event must not hold the row while the pane
            # stays quiet).
            watch.timing.look_again(fuser.hook_deadline)
        before = self.agents[pane_id].state if pane_id in self.agents else None
        agent = self._update(watch, observation)
        if before is not None and agent.state is not before:
            # Claude writes a turn to its transcript a moment after drawing it:
            # look once more after a state change, so the last turn is not left
            # unread until the pane next changes.
            watch.timing.look_again(now + TRANSCRIPT_LAG)
        await self._read_transcript(watch, agent, status)
        return agent

    def _update(self, watch: PaneWatch, observation: Observation, at: float | None = None) -> Agent:
        claude_pid = watch.claude_pid
        process = self.processes.get(claude_pid) if claude_pid else None
        now = self.clock() if at is None else at
        with self.store.one_reading():  # the reading and what the answer desk makes of it: one AgentChanged
            agent = self.store.observed(
                watch.record,
                watch.key,
                observation,
                now,
                claude_pid=claude_pid,
                status=self.statuses.get(claude_pid) if claude_pid else None,
                claude_version=(process.version or "") if process else "",
                started=watch.fuser.started(observation.state, now),
            )
            self.desk.observed(watch.record.pane_id)
        return agent

    def replay(self, record: PaneRecord, ansi: str, observation: Observation, at: float) -> Agent:
        """Show a recorded pane as if it had just been observed (the app without tmux: tests, snapshots)."""
        watch = self.panes.get(record.pane_id)
        if watch is None:
            watch = self.panes[record.pane_id] = PaneWatch(record, agent_key("replay", self.server.key, record.pane_id, record.pid, ""))
        watch.record, watch.capture = record, ansi
        return self._update(watch, observation, at=at)

    def _forget(self, pane_id: str) -> None:
        self.panes.pop(pane_id, None)
        self.store.forget(pane_id)
        self.desk.observed(pane_id)  # a hook still waiting for that pane is let go

    def _watched(self, pane_id: str) -> Watched | None:
        """The answer desk's view of a pane: its agent and Claude's pid (None when not watched)."""
        watch = self.panes.get(pane_id)
        agent = self.agents.get(pane_id)
        return Watched(agent, watch.claude_pid or 0) if watch is not None and agent is not None else None

    def _report(self, problem: str | None) -> None:
        if problem is not None:
            self._socket_wake.set()  # look for a new server at the fast pace from now
        if problem != self._problem:
            self._problem = problem
            self.store.emit(ProblemChanged(problem))

    def mark(self, pane_id: str, delivery: str) -> None:
        """Record the result of an action on the row ("not delivered: ...")."""
        self.store.marked(pane_id, delivery, self.clock())

    def refresh_soon(self, pane_id: str) -> None:
        self._mark(pane_id)
