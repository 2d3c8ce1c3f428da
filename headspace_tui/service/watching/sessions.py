"""One detector per tmux session: its control client, and when each of its panes is read again.

Every tmux session gets a detector and a control client, not only sessions
with agents: a Claude started in any pane is then noticed by its first
output.  ``%output`` from a watched pane only updates the pane's timing and
wakes its session's detector, which reads the pane when ``schedule.due_at``
says (a working agent's spinner is looked at lazily, a large redraw at
once); output from a pane nobody watches asks tmux what that pane runs now
(at most once a second), and only a changed answer costs a discovery.

Attaching is where tmux is fragile (see ``_quiet_moment``): attaches go one
at a time, each in a quiet moment, paced by ``AttachPace``; a session that
appears while we watch is attached only once it has settled (SETTLE s: the
sessions of a storm, made and killed within a second or two, are never
attached, their panes read by plain captures meanwhile); and a session
whose client ended is attached again only after a discovery made since
still lists it.  The monitor reads the panes (``read``) and runs discovery
(``request_discovery``); this module decides only *when*.

A server has a cap of our control clients (``client_cap``).  At every
turn of its loop tmux walks every pane and, for each, every client; and
it turns its loop for each client's status timer (every
``status-interval``, 15 s by default): at rest, tmux spends about
panes x clients² on ours.  The cap keeps that to what 300 sessions with a
client each cost.  Sessions with agents take the places first (one
without agents that holds a place gives it to a later one with); the
sessions beyond the cap are read through a client attached elsewhere,
when tmux's window activity (asked once a second for the whole server,
``_activity_loop``) says one of their panes wrote.  And once the attaches
are done, the clients' status timers are lined up (tmux/status_timers.py):
they then wake tmux once per interval together, not one after another.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Awaitable, Callable, Iterator

from ...model import AgentState
from ...tmux import status_timers
from ...tmux.attach_pace import AttachPace
from ...tmux.control import ControlClient, ControlError
from ...tmux.server import PaneRecord, TmuxServer, TmuxUnavailable
from .pane_watch import PaneWatch
from .schedule import POLL_GAP, due_at
from .supervise import Supervisor

UNKNOWN_PANE_RECHECK = 1.0  # a pane we do not watch is asked what it runs at most this often
ATTACH_QUIET = 0.3  # a control client attaches after this long without a session or window notification...
ATTACH_QUIET_MAX = 3.0  # ...waiting at most this long for such a moment
POLL_READS = 20.0  # sessions without a control client share this many reads a second, once there are many (Sessions.poll_gap)
SETTLE = 3.0  # a session that appears while we watch is attached only once it has been there this long (read by captures until then)
CLIENT_CAP = 300  # control clients of ours per tmux server of at most that many panes (see client_cap)
ACTIVITY_EVERY = 1.0  # the sessions beyond the cap: their windows' activity is asked this often (tmux keeps it in whole seconds)
FULL_LOOK_EVERY = 60  # ...and every so many looks, every window's
LINE_UP_TRIES = 5  # sessions asked for one without a status-interval of its own, to line the status timers up through
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


def client_cap(panes: int) -> int:
    """How many control clients of ours a server of ``panes`` panes gets: what keeps panes x clients² at most CLIENT_CAP³.

    Measured at rest on a 2-core machine (benchmarks/service.py, status
    line on): 300 sessions with a client each, tmux at 3-4% of a core;
    1,000 sessions with 300 clients, 11%.
    """
    return CLIENT_CAP if panes <= CLIENT_CAP else max(1, int((CLIENT_CAP**3 / panes) ** 0.5))


Read = Callable[[str, "ControlClient | None"], Awaitable[object]]


def _said_if_failed(task: asyncio.Task) -> None:
    """A line-up that failed in a way it did not expect: logged, not lost with its task."""
    if not task.cancelled() and task.exception() is not None:
        log.error("lining up tmux's status timers failed", exc_info=task.exception())


class Sessions:
    """The detectors of one tmux server's sessions and their control clients."""

    def __init__(
        self,
        server: TmuxServer,
        supervisor: Supervisor,
        panes: dict[str, PaneWatch],
        *,
        read: Read,
        request_discovery: Callable[[], None],
        state_of: Callable[[str], AgentState | None],
        clock: Callable[[], float],
    ) -> None:
        self.server = server
        self.supervisor = supervisor
        self.panes = panes  # the monitor's watched panes (read here, never changed)
        self.read = read
        self.request_discovery = request_discovery
        self.state_of = state_of
        self.clock = clock
        self._focused: str | None = None
        self.clients: dict[str, ControlClient] = {}
        self.attach_pace: Callable[[], AttachPace] = AttachPace  # how often a session's client may be attached
        self.stopping = False
        self._loops: dict[str, asyncio.Task] = {}
        self._wake: dict[str, asyncio.Event] = {}
        self._all_panes: dict[str, PaneRecord] = {}  # every pane of the server at the last discovery
        self._unknown_checked: dict[str, float] = {}
        self._unknown_checks: dict[str, asyncio.Task] = {}
        self._unknown_again: set[str] = set()
        self._attaching = asyncio.Lock()  # one control client attaching at a time (see _quiet_moment)
        self._own_name = f"client-{os.getpid()}"  # how tmux names our directly attached clients (direct_attach.py)
        self._attaches_waiting = 0  # attaches queued or under way (_attach)
        self._last_notification = 0.0  # when tmux last told a control client of a session or window change
        self._awaiting_discovery: set[str] = set()  # sessions whose client ended, waiting to be seen still there
        # Discoveries are numbered as they start; ``_discovered`` is the number of the last one that
        # listed the server's panes.  A session whose client ended waits for one that started after.
        self._discoveries_started = 0
        self._discovered = 0
        # When each session was first listed (-inf: it was there at our first look, settled already).
        self._first_seen: dict[str, float] = {}
        self._looked_once = False
        self.cap_of: Callable[[int], int] = client_cap  # the cap for a server of so many panes
        self.client_cap = CLIENT_CAP  # at most this many control clients of ours (``cap_of``, at each discovery)
        self._placed: set[str] = set()  # sessions with a client of ours, attached or on its way (at most ``client_cap``)
        self._beyond: set[str] = set()  # sessions without a place for a client, read on tmux's window activity
        self._evicting: set[str] = set()  # sessions whose client is being ended to give its place to a session with an agent
        self.activity_looks = 0  # listings of the windows' activity made (``_activity_loop``)
        self.line_up_from = status_timers.LINE_UP_FROM  # what the status timers out of line may cost before they are lined up
        self._out_of_line = 0  # our clients attached since the last line-up of the status timers
        self._lined_up_at = float("-inf")
        self._last_attach = float("-inf")
        self._line_up: asyncio.Task | None = None
        self.lined_up = 0  # line-ups made (``_line_up_timers``)

    @property
    def focused(self) -> str | None:
        """The pane the user looks at: read at a faster pace."""
        return self._focused

    @focused.setter
    def focused(self, pane_id: str | None) -> None:
        self._focused = pane_id
        if pane_id is not None:
            self.read_soon(pane_id)  # its detector may sleep (a session beyond the cap has no news of its own): read it at the preview's pace from now

    @property
    def running(self) -> set[str]:
        """The sessions that have a detector."""
        return set(self._loops)

    def start(self) -> None:
        self.stopping = False
        self._attaching = asyncio.Lock()  # this run's loop's
        self._first_seen, self._looked_once = {}, False  # this run's first look finds the sessions settled

    # -- told by discovery ---------------------------------------------------------
    def discovery_started(self) -> int:
        self._discoveries_started += 1
        return self._discoveries_started

    async def discovered(self, number: int, sessions: set[str], panes: list[PaneRecord]) -> None:
        """A discovery listed the server: start a detector for each new session, end those of sessions gone."""
        self._all_panes = {r.pane_id: r for r in panes}
        cap, self.client_cap = self.client_cap, self.cap_of(len(panes))
        if self.client_cap != cap:
            for session_id in self._beyond if self.client_cap > cap else self._placed:
                self._wake_session(session_id)  # more places than before: the sessions beyond may take them; fewer: those without agents give theirs
        now = self.clock()
        for session_id in sessions - set(self._first_seen):
            self._first_seen[session_id] = now if self._looked_once else float("-inf")
        for session_id in set(self._first_seen) - sessions:
            del self._first_seen[session_id]  # gone: nothing of it is kept
        self._looked_once = True
        for pane_id in [p for p in self._unknown_checked if p not in self._all_panes]:
            del self._unknown_checked[pane_id]  # a closed pane: nothing of it is kept (churn must not grow us)
        for session_id in sessions - set(self._loops):
            self._wake[session_id] = asyncio.Event()
            self._loops[session_id] = self.supervisor.start(f"the detector of tmux session {session_id}", functools.partial(self._session_loop, session_id))
        # Gone sessions' detectors end together: each may wait a moment for an attach of ours.
        await asyncio.gather(*(self.end(session_id) for session_id in set(self._loops) - sessions))
        self._discovered = number
        for session_id in self._awaiting_discovery & sessions:
            self._wake_session(session_id)  # still there: its detector may attach again

    async def end(self, session_id: str) -> None:
        self._loops.pop(session_id, None)
        self._wake.pop(session_id, None)
        await self.supervisor.cancel(f"the detector of tmux session {session_id}")

    async def end_all(self) -> None:
        for session_id in list(self._loops):
            await self.end(session_id)
        self._all_panes = {}
        self._out_of_line, self._lined_up_at = 0, float("-inf")  # the next server's clients are counted afresh

    async def stop(self) -> None:
        """After the supervisor stopped the loops: end the pane checks and every control client."""
        self.stopping = True
        checks = list(self._unknown_checks.values())
        if self._line_up is not None:
            checks.append(self._line_up)
        for task in checks:
            task.cancel()
        await asyncio.gather(*checks, return_exceptions=True)
        self._unknown_checks.clear()
        self._loops.clear()
        for client in list(self.clients.values()):
            await self._end_client(client)

    async def _end_client(self, client: ControlClient) -> None:
        """End a control client, never while one of ours attaches (its end is news to every control client).

        Cancelled while waiting its turn (headspace quitting, or its
        detector ended: supervise.end cancels again every half second), it
        is ended at once all the same: a client skipped here would stay
        attached until our process died, and its socket would reach the
        collector after the loop closed ("unclosed transport" on the user's
        terminal).  The direct attach (tmux 3.2-3.6) has no window to guard,
        and 3.7 fixed the crash, so the wait is a courtesy to a stock client
        attaching on such a release (the fallback), not a promise.
        """
        try:
            async with self._attaching:
                await client.close()
        except asyncio.CancelledError:
            await client.close()
            raise

    # -- when a pane is read ---------------------------------------------------------
    def read_soon(self, pane_id: str) -> None:
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
            # A working agent's spinner ticks in small writes; a dialog or the end of
            # a turn is a large redraw.  Small writes are looked at lazily.
            watch.timing.output(self.clock(), size, self.state_of(pane_id) is AgentState.WORKING)
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
            record = self._all_panes.get(pane_id)
            client = (self.clients.get(record.session_id) or self.attached()) if record is not None else None  # the target is the pane: any client asks it
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
            if pane_id in self._unknown_again and not self.stopping:
                self._unknown_again.discard(pane_id)
                self._unknown_output(pane_id)

    def _control_event(self, name: str, args: str) -> None:
        if not self._our_own_news(name, args):
            self._last_notification = self.clock()
        if name in LAYOUT_EVENTS:
            self.request_discovery()
        elif name == "pane-mode-changed":
            self.read_soon(args.strip())

    def _our_own_news(self, name: str, args: str) -> bool:
        """A notification that only tells of our own directly attached clients (one attached, one ended): not a storm to wait out.

        Every attach of ours is told to every other control client
        (``%client-session-changed client-<pid> $3 name``); counted as news,
        each made the next attach wait ATTACH_QUIET, so 300 sessions took
        two and a half minutes to attach.  Our attaches go one at a time, and
        tmux has told the others of one before its client is ready, so the
        next cannot be caught by it.  A directly attached client (tmux 3.2
        to 3.6, the releases with the attach bug) is named by headspace's
        own pid; a ``tmux -C`` child's news still counts (the fallback, and
        tmux 3.7 on, where the attach leaves no window to guard).
        """
        return name in ("client-session-changed", "client-detached") and args.split(" ", 1)[0] == self._own_name

    def _session_panes(self, session_id: str) -> list[PaneWatch]:
        return [w for w in self.panes.values() if w.record.session_id == session_id]

    # -- one session's detector ----------------------------------------------------------
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
        attach: tuple[asyncio.Task, ControlClient] | None = None  # a client attaching (in its turn), and it
        pace = self.attach_pace()
        attached_at: float | None = None
        confirm_after = -1  # the discovery count a new attach waits to exceed (-1: none needed)

        def ended(reason: str) -> None:
            self.request_discovery()  # the session may be gone...
            wake.set()  # ...or only the client: replace it

        this = asyncio.current_task()
        try:
            # A swallowed cancel (see AgentStore.quiet, supervise.end) must still end the loop: it
            # runs only while it is its session's detector (a session gone, or headspace stopping,
            # has none), or a loaded machine kept attaching to sessions long gone.
            while not self.stopping and self._loops.get(session_id) is this:
                wake.clear()  # before looking: a change marked while we work wakes the next round
                now = self.clock()
                if client is not None and client.closed:
                    self.clients.pop(session_id, None)
                    await client.close()
                    pace.ended(now, attached_at)
                    log.info("control client of session %s ended; attaching again after a discovery still lists it", session_id)
                    client, attached_at, confirm_after = None, None, self._discoveries_started
                    self._free_place(session_id)
                    self._awaiting_discovery.add(session_id)
                    self.request_discovery()
                if attach is not None and attach[0].done():
                    task, fresh = attach
                    attach = None
                    failed = task.exception() if not task.cancelled() else TmuxUnavailable("attach cancelled")
                    if failed is None:
                        client, attached_at = fresh, now
                        self.clients[session_id] = client
                        for watch in self._session_panes(session_id):
                            watch.timing.changed(now)  # anything may have changed unseen (a rename or a move too: _attach)
                    else:  # TmuxUnavailable (the session or the server is gone): a discovery says which
                        if not isinstance(failed, TmuxUnavailable):
                            log.error("attaching a control client to session %s failed", session_id, exc_info=failed)
                        pace.ended(now, None)
                        self._free_place(session_id)
                        confirm_after = self._discoveries_started
                        self._awaiting_discovery.add(session_id)
                        self.request_discovery()
                settles_at = self._first_seen.get(session_id, float("-inf")) + SETTLE
                # No place for a client (the server has its fill of ours): read through another one, on tmux's word that a pane wrote.
                room = session_id in self._placed or not self._no_room(session_id)
                if not room and (spare := self._spare_place(session_id)) is not None:
                    # An agent's session beyond the cap while one without agents holds a place (it had it before the
                    # server grew): that client ends, and this session takes the place once its detector has let it go.
                    log.info("control client of session %s ended: its place goes to session %s, which has an agent", spare.session_id, session_id)
                    self._evicting.add(spare.session_id)  # one place, one client ended: not chosen again while it ends
                    await self._end_client(spare)
                if client is not None and not client.closed and session_id not in self._evicting and self._places_taken() > self.client_cap and not self._has_agents(session_id):
                    # The cap fell (the server grew) below the clients we have: one without agents gives its place back.
                    log.info("control client of session %s ended: the server has more of ours than its cap of %d", session_id, self.client_cap)
                    self._evicting.add(session_id)
                    await self._end_client(client)
                    continue  # the next round finds it closed, and reads the session through another client
                via = None if room else self.attached()
                if via is not None:
                    self._beyond.add(session_id)
                    self.supervisor.start("the activity watch", self._activity_loop)  # kept while any session is beyond
                else:
                    self._beyond.discard(session_id)
                if client is None and attach is None and room and now >= pace.next_at() and self._discovered > confirm_after and now >= settles_at:
                    self._awaiting_discovery.discard(session_id)
                    pace.attaching(now)
                    self._placed.add(session_id)
                    # The host's server builds the command line (through ssh for a remote host).
                    fresh = ControlClient(self.server, session_id, on_output=self._pane_output, on_event=self._control_event, on_exit=ended)
                    # Attached in a task of its own, so the panes are read meanwhile: attaches wait their
                    # turn (one at a time, each in a quiet moment), and at hundreds of sessions that turn
                    # comes minutes later; the table must not wait for it.
                    attach = (asyncio.create_task(self._attach(fresh, wake)), fresh)
                unattached = client is None or client.closed
                # Without a client there is no change signal, so the panes are polled; but while this session's
                # attach is under way they are read only when something says they changed (a hook, a status file,
                # a key sent), as an attached session's are: its client marks every pane changed once it attaches.
                # A forked capture per pane and poll, hundreds of sessions deep, is what a busy tmux cannot take.
                polling = unattached and attach is None and via is None
                watches = self._session_panes(session_id)
                gap = self.poll_gap()
                for watch in watches:
                    focused = watch.record.pane_id == self.focused
                    # The previewed pane of a session beyond the cap is polled as well (through another client): its preview moves with it.
                    due = due_at(watch.timing, now, polling=polling or (focused and via is not None), focused=focused, poll_gap=gap)
                    if due is not None and due <= now:
                        watch.timing.read(now)
                        await self.read(watch.record.pane_id, via if unattached else client)
                now = self.clock()
                # Polling: wake when an attach may start (one under way wakes us when it ends). With a client, a
                # session sleeps until something says it changed (its client's news, a hook, a status file, an
                # attach or a client ending: each sets ``wake``) or one of its panes asked for a look then (a
                # recheck, set only by this loop's own reads): no timer of its own while it is quiet.
                # Beyond the cap with no client of ours attached at all yet (the first moments): polled, and looking again for one to read through.
                timeout: float | None = (max(0.05, pace.next_at() - now, settles_at - now) if room else ACTIVITY_EVERY) if polling else None
                for watch in watches:
                    focused = watch.record.pane_id == self.focused
                    due = due_at(watch.timing, now, polling=polling or (focused and via is not None), focused=focused, poll_gap=gap)
                    if due is not None:
                        timeout = due - now if timeout is None else min(timeout, due - now)
                try:
                    await asyncio.wait_for(wake.wait(), timeout=None if timeout is None else max(timeout, 0.005))
                except TimeoutError:
                    pass
        finally:
            self._awaiting_discovery.discard(session_id)
            if session_id in self._placed:
                self._free_place(session_id)
            self._beyond.discard(session_id)
            if attach is not None:  # cancelled while its client waited its turn or attached: that client is ours to end
                task, fresh = attach
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                if not fresh.closed:
                    await self._end_client(fresh)
            # Also when cancelled while attaching: the control client is ours to end.
            if client is not None:
                if self.clients.get(session_id) is client:
                    self.clients.pop(session_id, None)
                await self._end_client(client)

    async def _attach(self, fresh: ControlClient, wake: asyncio.Event) -> None:
        """Attach ``fresh`` in its turn: one at a time, in a quiet moment (see _quiet_moment); then wake its detector.

        Once the last attach waiting has run, one discovery: a rename or a
        move made while sessions waited for their clients (read by captures
        meanwhile) is told by no client's news, and one look at the end
        costs tmux one listing, not one per attach.
        """
        self._attaches_waiting += 1
        try:
            async with self._attaching:
                await self._quiet_moment()
                await fresh.start()
            self._out_of_line += 1
            self._last_attach = self.clock()
        finally:
            self._attaches_waiting -= 1
            if not self._attaches_waiting and not self.stopping:
                self.request_discovery()
                if self._out_of_line and (self._line_up is None or self._line_up.done()):
                    self._line_up = asyncio.get_running_loop().create_task(self._line_up_timers())
                    self._line_up.add_done_callback(_said_if_failed)
            wake.set()

    async def _line_up_timers(self) -> None:
        """Once the attaches are done: line up the status timers, when those out of line cost tmux enough (tmux/status_timers.py).

        Once no client has attached for LINE_UP_QUIET s (the attaches of a
        wave come one at a time, and the queue may run dry between two),
        and at most once a LINE_UP_GAP; an attach that starts meanwhile
        puts it off to the end of its wave.  It holds the attach turn
        while it asks, so no attach is counted as lined up that was not.
        The hooks are read first (reading options runs a user's
        ``after-show-options``), then the global interval, through a client
        whose session has no interval of its own, so that the command's
        check reads the global value it sets.
        """
        while (wait := max(self._lined_up_at + status_timers.LINE_UP_GAP, self._last_attach + status_timers.LINE_UP_QUIET) - self.clock()) > 0:
            await asyncio.sleep(wait)
            if self._attaches_waiting or self.stopping:
                return  # the wave's end asks again
        async with self._attaching:
            counted = self._out_of_line
            if not status_timers.worth_lining_up(counted, len(self._all_panes), len(self.clients), 1, self.line_up_from):
                return  # not worth it at any interval (1 s is tmux's shortest): tmux is not asked
            try:
                if not await self._lined_up(counted):
                    return
            except (TimeoutError, ControlError) as exc:
                log.info("the status timers were not lined up: %s", exc)
                return
            self._out_of_line -= counted
            self._lined_up_at = self.clock()
            self.lined_up += 1

    async def _lined_up(self, counted: int) -> bool:
        """Ask tmux, and line the timers up if it is worth it and harms nothing: whether they were."""
        global_hooks: list[str] | None = None
        for session_id, client in list(self._usable_clients())[:LINE_UP_TRIES]:
            if global_hooks is None:
                global_hooks = await client.command("show-hooks", "-g")
            if status_timers.hooked(global_hooks + await client.command("show-hooks", "-t", session_id)):
                log.info("tmux's status timers are left as they are: a hook of the user's would run on set-option or show-options")
                return False
            if await client.command("show-options", "-t", session_id, "status-interval"):
                continue  # its session's own interval: the command's check would read that one
            interval = status_timers.interval_of(await client.command("show-options", "-gv", "status-interval"))
            if interval is None or not status_timers.worth_lining_up(counted, len(self._all_panes), len(self.clients), interval, self.line_up_from):
                return False
            if "".join(await client.command("show-options", "-gv", "status")).strip() == "off":
                return False  # no status line, no timers: a set would only redraw every terminal
            await client.command(*status_timers.line_up(interval))
            return True
        return False

    def attached(self) -> ControlClient | None:
        """Any of our control clients still attached to this server (None: none yet): a command about another pane can go through it."""
        return next((c for _, c in self._usable_clients()), None)

    def _usable_clients(self) -> Iterator[tuple[str, ControlClient]]:
        """Our control clients still attached and not being ended, with their sessions: what a command may go through."""
        return ((sid, c) for sid, c in self.clients.items() if not c.closed and sid not in self._evicting)

    def _places_taken(self) -> int:
        """Our clients, attached or on their way, not counting those being ended (a walk of the few being ended: this is asked at every detector's round)."""
        return len(self._placed) - len(self._evicting & self._placed)

    def _no_room(self, session_id: str) -> bool:
        """Whether ``session_id`` (which has none) must do without a client of its own: the server has ``client_cap`` of ours (attached or on their way).

        Over the cap in all, a session without an agent leaves its place to
        one with: a Claude started there is found by the activity watch
        (its output asks what the pane runs) instead of by its first
        ``%output``.
        """
        if self._places_taken() >= self.client_cap:
            return True
        return len(self._loops) > self.client_cap and not self._has_agents(session_id)

    def _has_agents(self, session_id: str) -> bool:
        """Whether a pane of ``session_id`` is watched (an agent runs there): such sessions take the places first."""
        return any(w.record.session_id == session_id for w in self.panes.values())

    def _free_place(self, session_id: str) -> None:
        """``session_id`` has no client of ours any more: its place is free, and the sessions beyond the cap may take it."""
        self._placed.discard(session_id)
        self._evicting.discard(session_id)
        for other in self._beyond:
            self._wake_session(other)

    def _spare_place(self, session_id: str) -> ControlClient | None:
        """The client of a session without agents whose place ``session_id`` (beyond the cap, with an agent) may take; None if none or no need.

        Only while the server has more sessions than places: then a session
        without agents never takes one (``_no_room``), so its client, once
        ended, is not attached again in its stead.
        """
        if len(self._loops) <= self.client_cap or not self._has_agents(session_id):
            return None
        return next((c for sid, c in self.clients.items() if sid not in self._evicting and not c.closed and not self._has_agents(sid)), None)

    async def _activity_loop(self) -> None:
        """The sessions beyond the cap: which of their panes wrote since the last look, once a second, from one listing of the server.

        tmux stamps a window at each output, in whole seconds
        (``window_activity``).  A pane whose stamp moved is read; so is it
        once more at the next look, since output later in the same second
        leaves the stamp as it was.  Only windows stamped since the oldest
        stamp still wanted are listed: a quiet server answers with a few
        lines.  Every FULL_LOOK_EVERY looks all are listed, and the newest
        stamp is taken from that listing alone: a clock set back (tmux's
        stamps are its wall clock) cannot hide the panes for longer.  Ends
        when no session is beyond the cap.
        """
        stamps: dict[str, int] = {}  # pane -> its window's stamp at the last listing
        again: set[str] = set()  # panes whose stamp moved at the last listing: read once more
        newest = 0
        first = True
        while self._beyond and not self.stopping:
            client = self.attached()
            whole = self.activity_looks % FULL_LOOK_EVERY == 0
            since = 0 if whole else min([stamps[p] for p in again if p in stamps] + [newest])
            try:
                lines = await client.command("list-panes", "-a", "-f", f"#{{>=:#{{window_activity}},{since}}}", "-F", "#{window_activity} #{pane_id}") if client is not None else None
            except (TimeoutError, ControlError):
                lines = None  # the client is going: the next look asks another, with what this one still wanted
            if lines is not None:
                self.activity_looks += 1
                newest = 0 if whole else newest
                moved: set[str] = set()
                unknown = False
                for line in lines:
                    stamp, _, pane = line.partition(" ")
                    if not stamp.isdigit():
                        continue
                    pane_id, at = self.server.address(pane), int(stamp)
                    newest = max(newest, at)
                    if stamps.get(pane_id) != at:
                        moved.add(pane_id)
                    stamps[pane_id] = at
                    if pane_id not in moved and pane_id not in again:
                        continue
                    record = self._all_panes.get(pane_id)
                    if record is None:
                        unknown = True  # a pane newer than the last discovery (a split in a session beyond, which tells no client of ours)
                    elif record.session_id in self._beyond and (not first or pane_id in self.panes):
                        # A working agent's is looked at lazily, anything else soon.  The first listing finds every
                        # stamp new: the agents' panes are read, the others (each a question to tmux) left to one discovery.
                        self._pane_output(pane_id, 0)
                if unknown or (first and lines):
                    self.request_discovery()
                again = {p for p in moved if p in self.panes} if first else moved  # the others' first stamps were not news
                first = False
                if len(stamps) > 2 * len(self._all_panes) + 64:
                    stamps = {p: at for p, at in stamps.items() if p in self._all_panes}  # closed panes: churn must not grow us
            await asyncio.sleep(ACTIVITY_EVERY)

    def poll_gap(self) -> float:
        """How often a session without a control client has its panes read (forked captures, no change signal).

        POLL_GAP while few wait; while many do (hundreds of sessions, before
        their clients' turns come), all of them together are read at most
        POLL_READS a second, so a whole table waiting to attach costs the
        machine a few forks a second, not hundreds.
        """
        polled = len(self._loops) - len(self.clients) - self._attaches_waiting - len(self._beyond)  # an attach under way, or beyond the cap: not polled
        return max(POLL_GAP, polled / POLL_READS)

    async def _quiet_moment(self) -> None:
        """Wait until tmux has sent no session or window notification for ATTACH_QUIET s (at most ATTACH_QUIET_MAX).

        tmux before 3.7 (upstream PRs #4980 and #5004 fixed it in 3.7) crashes
        its server when a session or window notification reaches a control
        client that is still attaching (its control state does not exist yet).
        Measured with a debug build under the churn soak: ``control_write``
        dereferenced that NULL state ("segfault at 20"), right as a second
        headspace attached twenty clients at once while sessions were created
        and killed.  The stock client cannot close that window, only stay out of the
        storm: attaches go one at a time, each after a moment without
        notifications (those come in bursts: a session made or killed, a
        window opened or closed), and never in a burst of their own.
        Since then the attach itself leaves no such window on the releases
        that have the bug (tmux/direct_attach.py, tmux 3.2-3.6); these
        rules stay for the stock client where it is still used with the bug
        (the fallback when the socket cannot be reached, a remote host
        without its reader, ``HEADSPACE_TMUX_ATTACH=client``) and for
        everyone else's control clients, whom our attaches and ends are
        news to.
        """
        deadline = self.clock() + ATTACH_QUIET_MAX
        while self.clock() < deadline and self.clock() - self._last_notification < ATTACH_QUIET:
            await asyncio.sleep(ATTACH_QUIET / 2)
