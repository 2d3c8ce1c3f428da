"""headspace as a front end sees it: one object, built before the front end and handed to it.

The service holds every host's monitor (the fleet), the answerer, the
journal and the tmux server headspace runs under.  A front end subscribes
to its events (the store's typed events, every host's, in order, and the
answers' reports), asks it for what it shows (a pane's screen, why an agent
is in its state, its timeline), and hands it what the user asked for
(answers, input mode's keys, a jump).  Nothing here knows Textual; nothing
in the front end knows tmux, the monitor, hooks or remote hosts (an
import-linter contract says so).

Everything a front end asks or does is a method here, with plain data in
and out (``Agent``, ``Intent``, ``Report``, strings), so the same calls can
later be served over a socket.  The answerer and the typist are the
service's own: a front end never holds them (tests/unit/test_facade_wall.py
reads every front end's attribute chains on the service to keep it so).
The facade only hands requests on; the answering policy and its guard
decide, in one place (``answering/``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shlex
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..answering.answerer import Answerer
from ..answering.input_link import InputLink, Typist
from ..answering.keys import KeyStroke, read_pane, same_prompt
from ..answering.policy import RULE_VIA, Intent, IntentKind
from ..api.facade import ChannelReport, Jump, PaneScreen, Report, ServiceError, Typing
from ..changes.model import Diff, failed
from ..detect.claude.process import process_env
from ..detect.families import CLAUDE, UnknownFamily, family_named, load_plugins
from ..detect.fusion import Explanation
from ..events import AgentChanged, AgentRemoved, CallBlocked, Event, Notice, PaneCaptured, ProblemChanged, Rung
from ..hooks.calls import PendingCall
from ..model import LOCAL_HOST, Agent, Observation, sort_key
from ..notifications.snooze import Snooze, Snoozes
from ..remote.host import RemoteHost
from ..rules.rules_file import default_path as rules_path
from ..shared.config import Config, HostSpec
from ..shared.resident_place import is_held, place_of
from ..shared.safe_text import clean
from ..tmux import clients
from ..tmux.control import run_via
from ..tmux.server import PaneRecord, TmuxCommandError, TmuxServer, TmuxUnavailable
from ..tmux.spawn import SpawnError, kill_pane
from ..usage.model import Spent, SpentRow
from .acting.limit_resume import LimitResume
from .acting.rule_answers import RuleAnswers
from .acting.rule_book import RuleBook
from .records.journal import Journal, who
from .watching.fleet import ControlPaneIO, Fleet
from .watching.lifecycle import LifecycleError, Started, agent_argv, exit_claude, resume_argv, runs_agent, start, start_over_link, state_refusal
from .watching.monitor import Monitor

NEW_SESSION = "headspace"  # where "New agent" starts Claude when headspace runs outside tmux and no agent is selected
TMUX_WAIT = 10.0  # seconds for tmux to answer a command of the ringer's through a control client
CATCH_UP = 1.5  # seconds an answer that names no appearance waits for the service's look to agree with its pane read now


class InputSession:
    """Input mode's session to one pane, as ``Service.open_input`` hands it out: what a front end holds while the user types.

    Not the typist's ``InputLink``, which holds the pane I/O and the send
    lock: only what input mode does (which pane, send a key, close, wait
    until typed keys are sent), each one message when served over a socket.
    The link's checks (same pane and process, the agent still in it, not in
    copy mode) stay in the service.
    """

    __slots__ = ("_link",)

    def __init__(self, link: InputLink) -> None:
        self._link = link

    @property
    def pane_id(self) -> str:
        """The pane the keys go to (``%N``), fixed for the session."""
        return self._link.pane_id

    def send(self, stroke: KeyStroke) -> None:
        """Queue one key or literal text; a key input mode does not forward raises ``ValueError``."""
        self._link.send(stroke)

    def close(self) -> None:
        """No more keys are taken; those already typed still go."""
        self._link.close()

    async def wait_sent(self) -> None:
        """Until every key typed so far was sent or refused."""
        await self._link.wait_sent()


class Service:
    def __init__(self, server: TmuxServer, fleet: Fleet, *, config: Config, clock: Callable[[], float], journal: Journal | None, live: bool, acts: bool = True) -> None:
        # Plain data a front end may read: the settings, the clock, whether it watches live tmux.
        self.config = config
        self.clock = clock
        self._here_at: float | None = None  # the last key at a headspace terminal (``here``)
        self.live = live
        # The service's own live parts, never handed to a front end (tests reach them as a seam, by these names):
        self._server = server  # the tmux server headspace itself runs under (a jump moves its client)
        self._fleet = fleet
        self._journal = journal
        self._pane_io = ControlPaneIO(fleet)
        # the one answering policy and its guard, and input mode's keys, asked through the methods below.
        self._answerer = Answerer(fleet, self._pane_io, clock=clock, confirm_timeout=config.confirm_timeout)
        self._typist = Typist(self._pane_io, fleet.server_key)  # to one pane at a time
        self._subscribers: list[Callable[[Event], None]] = []
        self._snoozes = Snoozes()  # waits the user put off: one set for every front end
        self._shown: frozenset[str] = frozenset()  # panes other front ends preview (``show``): their captures are told too
        self._problem = ProblemChanged("starting", ())  # the fleet's problem as last said (until its first look: starting)
        fleet.on_problem = lambda problem, hosts: self._emit(ProblemChanged(problem, hosts))
        for monitor in fleet.monitors.values():
            monitor.subscribe(self._from_host(monitor.host.name))
        # "Go on when it resets" (off by default): the nudge, once, to an agent its rate limit stopped.
        self._resume = LimitResume(self.agent, self.answer, config.nudge_text, clock) if config.go_on_after_limit and live and acts else None
        if self._resume is not None:
            self.subscribe(self._resume.on_event)
        # Rules that answer for you (the rules file; none: nothing answers), through the hook that holds the exact call.
        self._rules = RuleAnswers(RuleBook(rules_path(), lambda text: self._emit(Notice(text))), fleet.desk, self.agent, self.agents, journal, clock) if live and acts else None
        if self._rules is not None:
            self.subscribe(self._rules.on_event)
            for monitor in fleet.monitors.values():
                monitor.subscribe(self._rules.on_answer)  # a refusal of what a rule would allow pauses that rule
                monitor.desk.held = self._rules.consider_held  # Codex's hook: its call is the rules' alone
            self._rules.answer_keys = self._rule_keys  # a Claude dialog no hook holds: the guarded keys, as `y` sends them

    @classmethod
    def build(
        cls,
        server: TmuxServer,
        *,
        config: Config | None = None,
        include_all: bool = False,
        config_dir: Path | None = None,
        live: bool = True,
        clock: Callable[[], float] = time.time,
        journal: Journal | None = None,
        spool: Path | None = None,
        hooks: bool = True,
        hosts: Sequence[RemoteHost | HostSpec] = (),
        local: bool = True,
        looking: bool = False,
        names: bool = True,
    ) -> Service:
        """One monitor per host (the local server unless ``local`` is off with hosts given); the fleet sends each request to its pane's host.

        ``looking``: a one-shot look (``headspace status`` with no service
        running), the same watchers reading the same panes, that does
        nothing else: no control client attached (captures read every pane),
        no hook held or answered, no rule or nudge acting for the user.
        ``names``: off, no appearance of a prompt is named (a look's rows
        outlive it, and no service keeps its names).
        """
        config = config or Config()
        load_plugins()  # the agent families installed as plug-ins: known before the first look

        def monitor(host: RemoteHost | None) -> Monitor:
            return Monitor(
                host.server if host is not None else server,
                include_all=include_all,
                config_dir=config_dir if host is None else None,
                clock=clock,
                idle_grace=config.idle_grace,
                journal=journal,
                spool=spool if host is None else None,
                hooks=hooks and live and not looking,
                host=host,
                answers=hooks and live and not looking,
                looking=looking,
                names=names,
            )

        remotes = [h if isinstance(h, RemoteHost) else RemoteHost(h) for h in hosts]
        monitors = ([monitor(None)] if local or not remotes else []) + [monitor(h) for h in remotes]
        if journal is not None:
            # The day's spending is this tmux server's agents' (and the hosts'), not every server's in the log.
            journal.ledger.local, journal.ledger.server = LOCAL_HOST, server.key
        return cls(server, Fleet(monitors), config=config, clock=clock, journal=journal, live=live, acts=not looking)

    # -- events ------------------------------------------------------------------------
    def subscribe(self, subscriber: Callable[[Event], None]) -> None:
        """Every host's events from now on, in order; the fleet's problem as one ``ProblemChanged``."""
        self._subscribers.append(subscriber)

    def _from_host(self, host: str) -> Callable[[Event], None]:
        def forward(event: Event) -> None:
            if isinstance(event, ProblemChanged):
                self._fleet.problem_of(host, event.problem)  # the fleet says the hosts' problem in one line
            elif isinstance(event, PaneCaptured) and event.pane_id != self._fleet.focused and event.pane_id not in self._shown:
                pass  # only the previewed panes' screens are drawn: the others' captures need no word
            elif isinstance(event, (AgentChanged, AgentRemoved, PaneCaptured, Notice, CallBlocked)):
                if isinstance(event, AgentChanged):
                    self._snoozes.observe(event.agent)  # a new wait, or none: its snooze is over
                elif isinstance(event, AgentRemoved):
                    self._snoozes.forget(event.key or event.pane_id)
                    self._answerer.forget(event.pane_id)
                self._emit(event)

        return forward

    def tell(self, event: Rung | Notice) -> None:
        """An event of a part that runs beside the service (its ringer), to every front end as the service's own; on the service's loop."""
        self._emit(event)

    def _emit(self, event: Event) -> None:
        if isinstance(event, ProblemChanged):
            self._problem = event
        for subscriber in list(self._subscribers):
            subscriber(event)

    # -- running -----------------------------------------------------------------------
    async def run(self) -> None:
        """Watch until cancelled; a service that watches no tmux (``live=False``: demos, tests) only waits, so a server may host it as it hosts a live one."""
        if not self.live:
            await asyncio.Event().wait()
        if self._rules is not None:
            self._rules.start()  # the rules file looked at every second: a rule's ttl runs from when it is first read
        await self._fleet.run()

    async def stop(self) -> None:
        if self._resume is not None:
            self._resume.close()
        if self._rules is not None:
            self._rules.close()
        await self._answerer.close()
        await self._fleet.stop()

    def replay(self, record: PaneRecord, ansi: str, observation: Observation, since: float, family: str) -> None:
        """Show a recorded pane (of ``family``'s agent) as if the local monitor had just observed it (demos, tests)."""
        self._fleet.first.replay(record, ansi, observation, since, family_named(family))

    # -- what a front end shows ----------------------------------------------------------
    def agents(self) -> list[Agent]:
        """Every agent now, on every host, needing you first and longest-waiting first (the table's order).

        What a front end that joins late starts from (its events then keep
        it current), instead of waiting for each agent's next report.
        """
        return sorted((agent for monitor in self._fleet.monitors.values() for agent in monitor.store.agents.values()), key=sort_key)

    def agent(self, address: str) -> Agent | None:
        """The agent in pane ``address`` now, as the store holds it."""
        monitor = self._fleet.monitor_for(address)
        return next((a for a in monitor.store.agents.values() if a.pane_id == address), None) if monitor is not None else None

    def now(self, agent: Agent) -> Agent | None:
        """``agent`` as it is now (a front end holds a copy, maybe a moment old): the store's, when its pane still holds that agent; else None.

        What the answerer, a snooze or a stop judge is the agent on display
        now; what the user saw travels beside it (an answer's ``seen``, its
        ``request``), compared by value and by ``Observation.id``.
        """
        now = self.agent(agent.pane_id)
        return now if now is not None and now.key == agent.key else None

    def problem_now(self) -> ProblemChanged:
        """The hosts' problem as last said (``starting`` until the first look is whole): what a front end that joins late shows first."""
        return self._problem

    def hosts(self) -> list[tuple[str, str | None]]:
        """Each watched host and its problem now (None: all is well; "starting": still on its first look)."""
        return [(name, self._fleet.problem(name)) for name in self._fleet.monitors]

    @property
    def focused(self) -> str | None:
        return self._fleet.focused

    def focus(self, address: str | None) -> None:
        """The previewed pane: read at the preview's pace, and read now."""
        self._fleet.focused = address
        if address is not None:
            self._fleet.refresh_soon(address)

    def here(self) -> None:
        """A key at a headspace terminal (any front end): pushes to the phone wait while a person is at one."""
        self._here_at = self.clock()

    def since_here(self) -> float | None:
        """Seconds since the last key at a headspace terminal, None when none was pressed since the service started."""
        return None if self._here_at is None else max(0.0, self.clock() - self._here_at)

    def record(self, event: dict) -> None:
        """One of the service's own events (a push's result) into the event log, when there is one."""
        if self._journal is not None:
            self._journal.writer.write([event])

    def show(self, addresses: frozenset[str]) -> None:
        """The panes every front end previews now (a resident service's clients): each one's captures are told, not only the focused one's."""
        self._shown = addresses

    def screen(self, address: str) -> PaneScreen | None:
        watch = self._fleet.watch(address)
        if watch is None or watch.capture is None:
            return None
        return PaneScreen(watch.capture, watch.record.width, watch.record.height)

    def width(self, address: str) -> int | None:
        watch = self._fleet.watch(address)
        return watch.record.width if watch is not None else None

    async def history(self, address: str, lines: int) -> str:
        """The pane with ``lines`` of tmux history above it; ``ServiceError`` when tmux cannot say."""
        try:
            return await self._pane_io.capture(address, True, lines)
        except (TmuxCommandError, TmuxUnavailable) as exc:
            raise ServiceError(str(exc)) from None

    async def changes(self, address: str, scope: str) -> Diff:
        """What the agent changed this turn (``scope`` "turn") or since its start ("start"): service/watching/work_changes.py."""
        monitor = self._fleet.monitor_for(address)
        if monitor is None:
            return failed("no such agent")
        return await monitor.changes.changes(address, scope)

    def why(self, agent: Agent, now: float) -> tuple[Explanation | None, ChannelReport | None]:
        """Every source's verdict on ``agent``, and its answer channel."""
        watch = self._fleet.watch(agent.pane_id)
        desk = self._fleet.desk(agent.pane_id)
        return (watch.fuser.explain(now) if watch else None), (desk.channel_report(agent.pane_id) if desk is not None else None)

    def timeline(self, agent: Agent) -> list:
        return self._journal.timeline(who(agent)) if self._journal is not None else []

    def socket_file(self) -> str:
        """The watched tmux server's socket: the ringer reaches its clients through it."""
        return self._server.socket_file()

    async def tmux_run(self, *args: str) -> str:
        """A command to the tmux server the ringer rings (``socket_file``) and its output, as a forked ``tmux`` prints it.

        Through a control client of that server already attached when there
        is one (control.py ``run_via``): a ring asked twice, each by a tmux
        client of its own, and at 300 sessions a menu drawn then was seen a
        second late.  Never once the service is stopping.  ``TmuxCommandError`` / ``TmuxUnavailable`` as
        ``TmuxServer.run``.
        """
        local = self._fleet.local
        if local is not None and local.sessions.stopping:
            # A ring in flight as the service stops: its control clients are going, and a tmux client of its own,
            # while 300 of them detach, took 47 s (the service's end waited for it).
            raise TmuxUnavailable("headspace is stopping")
        client = local.attached() if local is not None and local.server.socket_file() == self._server.socket_file() else None
        return await run_via(client, self._server, *args, wait=TMUX_WAIT)

    def rings_elsewhere(self) -> bool:
        """Whether a resident service (``headspace serve``) watches this tmux server: it rings every wait, so the ringer of a service in a front end's process leaves that to it."""
        return is_held(place_of(self._server.identity))

    def waited_today(self, agents: dict[str, Agent], now: float) -> float | None:
        return self._journal.waited_today(agents, now) if self._journal is not None else None

    def spent(self, now: float, days: int) -> tuple[Spent, list[SpentRow]] | None:
        return self._journal.spent(now, days) if self._journal is not None else None

    # -- the rules (the phone page's "answered for you": the web is part of the service) -----
    async def away(self, since: float) -> list[dict]:
        """What each agent did since ``since`` (the page's and the terminal's "while you were away"): turns finished, calls blocked, rules' answers, spending.

        The agents and the rules' answers are taken here, on the loop where
        they change; the event log is read beside it.
        """
        if self._journal is None:
            return []
        agents, ruled = self.agents(), self.ruled(since)
        return await asyncio.to_thread(self._journal.away, agents, ruled, since)

    def ruled(self, since: float) -> list[dict]:
        """What the rules answered since ``since``, newest first, with each rule's state now (service/acting/rule_answers.py)."""
        return self._rules.recent(since) if self._rules is not None else []

    def rules_control(self, action: str, rule: str = "", host: str = "", via: str = "the phone page") -> str:
        """Pause, resume or revoke rules (the page's and ``headspace rules``'); the line to show (ValueError: what is wrong, nothing changed)."""
        if self._rules is None:
            raise ValueError("rules do not answer here (not a live service)")
        return self._rules.control(action, rule, host, via)

    # -- answering ---------------------------------------------------------------------
    # Handed on to the answerer as asked: whether an answer may go, and how, is its policy's to say.
    def on_answer_report(self, subscriber: Callable[[Report], None]) -> None:
        """Every answer's reports from now on: a first one when its keys went (``final`` False), the final one when the pane showed it."""
        self._answerer.subscribe(subscriber)

    def answer(self, agent: Agent, intent: Intent, seen: Observation | None = None) -> str:
        """Answer ``agent`` with ``intent``: "" when it is on its way (its report follows), else why nothing was sent.

        ``seen``: the screen the user answered (a reply box keeps the one
        shown when it opened); by default the agent's own.
        """
        return self._answerer.answer(agent, intent, seen)

    async def caught_up(self, agent: Agent) -> Agent:
        """``agent`` once the service's look agrees with its pane read now (TmuxCommandError when the pane cannot be read).

        What a command line that names no appearance (``send`` without
        ``--expect``) answers is the pane as it is now, as a person at it
        would see it; the service's last look may lag it by a read (a turn
        that just ended still reads working).  The pane is read again soon
        and waited for, up to CATCH_UP; after that the service's own look
        goes to the guard, which refuses what no longer shows.
        """
        now, _ = await read_pane(self._pane_io, agent.pane_id, family_named(agent.family))
        if same_prompt(agent.observation, now):
            return agent
        self._fleet.refresh_soon(agent.pane_id)  # once: the pane's own output brings any later read
        deadline = time.monotonic() + CATCH_UP
        while not same_prompt(agent.observation, now) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            agent = self.agent(agent.pane_id) or agent
        return agent

    def _rule_keys(self, agent: Agent, seen: Observation, allow: bool, rule: str) -> str:
        """A rule's answer by the guarded keys, for the dialog it judged (``seen``): the answer path and guard every front end uses."""
        return self.answer(agent, Intent(IntentKind.APPROVE if allow else IntentKind.DENY, via=f"{RULE_VIA}{rule}"), seen)

    def stale(self, agent: Agent, request: str) -> str:
        """Why an answer drawn for appearance ``request`` of ``agent``'s prompt must not go ("" when it is the one on display, unanswered)."""
        return self._answerer.stale(agent, request)

    def answer_pending(self, agent: Agent) -> bool:
        """An answer to ``agent`` is on its way, or landed moments ago while its row still shows what it answered (an inbox moves past it)."""
        return self._answerer.awaits(agent)

    def answers_pending(self) -> list[str]:
        """The panes whose agent ``answer_pending`` holds now (what a client asks in one go)."""
        return [agent.pane_id for agent in self.agents() if self._answerer.awaits(agent)]

    def batch(self, agent: Agent) -> tuple[list[tuple[Agent, PendingCall]], str]:
        """The hook requests identical to ``agent``'s waiting on every host, with ``agent``'s own; or [] and why there are none."""
        return self._answerer.batch(agent)

    def approve_batch(self, pairs: list[tuple[Agent, PendingCall]]) -> str:
        """Approve each request of a confirmed ``batch`` that still waits, through its hook; one line saying which."""
        return self._answerer.approve_batch(pairs)

    # -- snoozes -------------------------------------------------------------------------
    def snooze(self, agent: Agent, until: float) -> Snooze | None:
        """Put ``agent``'s wait off until ``until`` (``UNTIL_IT_CHANGES``: until it changes); None when it waits for nothing.

        A snooze ends with its wait (the service sees every report), when
        its time is up (``snoozes_ended``) or when taken back (``unsnooze``).
        """
        return self._snoozes.snooze(agent, until)

    def unsnooze(self, agent: Agent) -> bool:
        """Take ``agent``'s snooze back; whether there was one."""
        return self._snoozes.unsnooze(agent)

    def snooze_of(self, agent: Agent) -> Snooze | None:
        """``agent``'s snooze while it lasts."""
        return self._snoozes.get(agent)

    def snoozed(self) -> int:
        """How many waits are snoozed now."""
        return len(self._snoozes)

    def snoozes_ended(self, now: float) -> list[str]:
        """The agents (their keys) whose snooze ran out by ``now``; those snoozes are over."""
        return self._snoozes.expired(now)

    def snoozes(self) -> dict[str, Snooze]:
        """Every snooze on now, by agent key (what a client keeps a copy of)."""
        return self._snoozes.all()

    # -- input mode ----------------------------------------------------------------------
    async def open_input(self, pane_id: str, report: Callable[[str, bool], None], family: str) -> tuple[Typing | None, str]:
        """Input mode's session to ``pane_id`` (whose agent is of ``family``) once the pane is checked, or None and why not.

        ``report(line, ended)``: a key that could not go, in one line;
        ``ended`` when the pane can take no more keys (input mode ends).
        """
        link, problem = await self._typist.open(pane_id, report, family, lambda: self._typed_into(pane_id))
        return (InputSession(link) if link is not None else None), problem

    def _typed_into(self, pane_id: str) -> None:
        """Input mode's keys reached ``pane_id``: the prompt it showed may be answered by them; later captures show a new appearance."""
        agent = self.agent(pane_id)
        if agent is not None and agent.observation.request:
            self._fleet.renew(pane_id, agent.observation.request)

    # -- jump ----------------------------------------------------------------------------
    def jump(self, agent: Agent, here: Mapping[str, str] | None = None) -> Jump:
        """Move the user's own tmux client to the agent (never a control client); outside tmux, the attach command.

        ``here``: the environment of the front end the user sits at (its
        ``TMUX``, ``TMUX_PANE``, ``HEADSPACE_CLIENT``), which says whose
        client that is; by default this process's own.
        """
        here = os.environ if here is None else here
        monitor = self._fleet.monitor_for(agent.pane_id)
        if monitor is not None and isinstance(monitor.host, RemoteHost):
            return self._jump_remote(agent, monitor.host, here)
        try:
            where = clients.locate(self._server, here)
            if where.inside and where.client is not None:
                clients.switch(self._server, where.client, agent.pane_id)
                return Jump(end=where.popup)  # a popup would stay over the agent and keep the keyboard
        except (TmuxCommandError, TmuxUnavailable) as exc:
            raise ServiceError(f"cannot jump to {agent.target}: {exc}") from None
        if where.inside:
            return Jump(notice=f"no tmux client of yours found to move to {agent.target}")
        return Jump(end=True, exit_with=attach_command(self._server, agent))

    def _jump_remote(self, agent: Agent, host: RemoteHost, here: Mapping[str, str]) -> Jump:
        """A pane on another machine: inside tmux, a new window here attached to it over ssh; outside, quit and print that command."""
        command = remote_attach_command(host, agent)
        if not here.get("TMUX"):
            return Jump(end=True, exit_with=command)
        try:
            self._server.run("new-window", "-n", clean(f"{host.name}:{agent.target}", 40), command)
        except (TmuxCommandError, TmuxUnavailable) as exc:
            raise ServiceError(f"cannot open {agent.target} on {host.name}: {exc}") from None
        return Jump()

    # -- starting, stopping, restarting -------------------------------------------------------
    def start_agent(
        self,
        folder: str,
        branch: str = "",
        near: Agent | None = None,
        here: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
        session: str = "",
    ) -> Started:
        """``claude`` (with ``args``, verbatim) in a new window, optionally in a new worktree; where it runs once it does.

        The window goes to ``session`` when the front end names one
        (``headspace new --session``), else to the session the front end
        runs in, else to ``near``'s, else to NEW_SESSION: the table's "New
        agent" and ``headspace new`` start agents by this one path.
        Blocking (git, tmux): a front end calls it off its loop.  ``here``:
        the front end's environment (which session it runs in), as for ``jump``.
        """
        here = os.environ if here is None else here
        chosen: str | None = session or None  # None: the session the front end runs in
        if chosen is None and not clients.locate(self._server, here).inside:
            local = near is not None and not near.placeholder and near.host == "local"
            chosen = near.target.rpartition(":")[0] if near is not None and local else NEW_SESSION
        try:
            started = start(
                self._server,
                agent_argv(args),
                folder=Path(folder.strip() or os.getcwd()),
                branch=branch.strip() or None,
                session=chosen,
                env=here,
            )
        except LifecycleError as exc:
            raise ServiceError(str(exc)) from None
        why = runs_agent(self._server, started.pane_id)
        if why:
            raise ServiceError(why)
        try:
            target = self._server.pane(started.pane_id).target
        except (TmuxCommandError, TmuxUnavailable):
            program = agent_argv()[0]
            raise ServiceError(f"{program} started in {started.pane_id}, whose window closed at once (try {program} in that folder)") from None
        return dataclasses.replace(started, target=target)

    async def start_on_host(self, host: str, folder: str, args: Sequence[str] = (), session: str = "") -> Started:
        """``headspace new --host``: ``claude`` (with ``args``) in a new window of ``session`` on a remote host this service watches, through its link.

        The folder must exist there (tmux would start the window elsewhere,
        silently).  The host's monitor is asked to look at once, so the new
        agent is watched from its first moment, as ``start_agent``'s are.
        """
        monitor = self._fleet.monitors.get(host)
        remote = monitor.host if monitor is not None else None
        if monitor is None or not isinstance(remote, RemoteHost):
            raise ServiceError(f"{host}: this service does not watch that host")
        if not session:
            raise ServiceError(f"{host}: name a session with --session NAME (there is no current session over there)")
        if not remote.link.connected:
            raise ServiceError(f"{host}: not reached now; nothing started (see 'headspace status')")
        try:
            started = await start_over_link(remote.link, monitor.server, host, folder, agent_argv(args), session)
        except LifecycleError as exc:
            raise ServiceError(str(exc)) from None
        finally:
            monitor.request_discovery()  # watched from its first moment (or its window that closed, gone)
        return started

    @staticmethod
    def _claude_only(agent: Agent) -> None:
        if agent.family != CLAUDE.name:
            raise ServiceError(f"{agent.target}: Stop and Restart know Claude Code's /exit only; stop {agent.family} in its pane")

    async def stop_agent(self, agent: Agent) -> bool:
        """Claude's own ``/exit`` at its empty input box; True: its pane closed with it, False: the pane remains (a shell)."""
        self._claude_only(agent)
        refusal = state_refusal(agent.observation)  # what the user sees in the way (a dialog open) comes first
        if refusal:
            raise ServiceError(f"{agent.target}: {refusal}")
        if self._answerer.busy(agent.pane_id):
            # Only while a key's send runs (at most confirm_timeout and the steps before it).
            raise ServiceError(f"{agent.target}: a key is on its way to it; wait for how it went; nothing sent")
        try:
            return await exit_claude(self._pane_io, agent.pane_id, agent.observation, server_key=self._fleet.server_key(agent.pane_id))
        except LifecycleError as exc:
            raise ServiceError(f"{agent.target}: {exc}") from None
        except (TmuxCommandError, TmuxUnavailable) as exc:
            raise ServiceError(f"{agent.target}: {exc}") from None

    def close_pane(self, agent: Agent) -> None:
        """Kill the agent's pane by its %id, only while that pane still runs that very agent (its Claude process). Blocking."""
        watch = self._fleet.watch(agent.pane_id)
        monitor = self._fleet.monitor_for(agent.pane_id)
        if watch is None or monitor is None or watch.key != agent.key or not watch.agent_pid:
            raise ServiceError(f"{agent.target}: its pane no longer runs that agent; nothing closed")
        try:
            record = monitor.server.pane(agent.pane_id)
            family = family_named(agent.family)
            if not family.is_command(record.current_command):
                raise ServiceError(f"{agent.target}: {family.label} no longer runs in its pane; nothing closed")
            kill_pane(monitor.server, agent.pane_id)
        except (TmuxCommandError, TmuxUnavailable, SpawnError, UnknownFamily) as exc:
            raise ServiceError(f"{agent.target}: {exc}") from None

    async def resume_plan(self, agent: Agent) -> tuple[list[str], str, dict[str, str]]:
        """What restarting ``agent`` runs: ``claude --resume <id>``, in which folder, with its config dir; ServiceError if unknown.

        The session id is in Claude's status file.  The watcher's copy may
        not have it yet (a config dir whose ``sessions`` folder Claude made
        after headspace started is found on the watcher's next look), so
        without it the agent's own file is read now.
        """
        self._claude_only(agent)
        watch = self._fleet.watch(agent.pane_id)
        monitor = self._fleet.monitor_for(agent.pane_id)
        if monitor is None or isinstance(monitor.host, RemoteHost):
            raise ServiceError(f"{agent.target}: restarting an agent on another host is not supported; jump there instead")
        status = monitor.facts.status(watch.agent_pid) if watch is not None else None
        folder = monitor.facts.config_dir_of(watch.agent_pid) if watch is not None and status is None else None
        if watch is not None and watch.agent_pid and folder is not None:
            status = (await monitor.host.statuses(folder)).get(watch.agent_pid)
        try:
            argv = resume_argv(status.session_id if status is not None else "")
        except LifecycleError as exc:
            raise ServiceError(f"{agent.target}: {exc}") from None
        assert watch is not None and status is not None
        config = process_env(watch.agent_pid or 0, ("CLAUDE_CONFIG_DIR",))  # the resumed Claude must read the same transcripts
        return argv, status.cwd or agent.cwd, config

    async def restart_agent(self, agent: Agent) -> str:
        """``/exit``, then ``claude --resume <its session>`` in a new window of the same tmux session and folder; the new pane id.

        Nothing is stopped unless the new window can find ``claude`` (new
        windows get the PATH the tmux server keeps); every failure says the
        command that resumes it by hand.
        """
        argv, cwd, config = await self.resume_plan(agent)
        by_hand = f"resume it by hand: cd {shlex.quote(cwd)} && {shlex.join(argv)}"
        path = await asyncio.to_thread(self._server.global_path)
        if shutil.which(argv[0], path=path if path is not None else os.defpath) is None:
            where = f"PATH={path}" if path is not None else f"none kept: sh's default {os.defpath}"
            raise ServiceError(f"{agent.target} left running: {argv[0]} is not on the PATH tmux gives new windows ({where}); {by_hand}")
        session = agent.target.rpartition(":")[0]
        await self.stop_agent(agent)
        try:
            started = await asyncio.to_thread(start, self._server, argv, folder=Path(cwd), session=session, window_env=config)
        except LifecycleError as exc:
            raise ServiceError(f"{agent.target} stopped, but its resume did not start: {exc}; {by_hand}") from None
        why = await asyncio.to_thread(runs_agent, self._server, started.pane_id)
        if why:
            raise ServiceError(f"{agent.target} stopped, but its resume did not start: {why}; {by_hand}")
        return started.pane_id


def attach_command(server: TmuxServer, agent: Agent) -> str:
    """The command that takes a user outside tmux to the agent's pane."""
    args = ["tmux"]
    if server.socket_name:
        args += ["-L", server.socket_name]
    elif server.socket_path:
        args += ["-S", server.socket_path]
    # Every word quoted for the shell: a session may be named "x'; touch a; echo '".
    # The pane id alone picks session, window and pane (it is unique on the server).
    args += ["attach", "-t", server.tmux_id(agent.pane_id)]
    return shlex.join(args)


def remote_attach_command(host: RemoteHost, agent: Agent) -> str:
    """``ssh -t DEST 'tmux … attach -t %N'``: the user's own ssh, a terminal of its own (not the shared link)."""
    ssh = ["ssh", "-t", *(["-F", host.spec.ssh_config] if host.spec.ssh_config else []), "--", host.spec.destination]
    return shlex.join([*ssh, attach_command(host.server, agent)])
