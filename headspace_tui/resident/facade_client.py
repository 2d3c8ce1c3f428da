"""The facade, served by the resident service: what the terminal UI holds when a service watches its tmux server.

``ServiceClient`` has the facade's methods (service/facade.py's ``Service``)
and answers them from the service over its socket (facade_routes.py), so
the app is the same code in both modes.  Each method is made from its
call's declaration (``asking``), but for those written here because they
keep or change the client's copy (api/calls.py ``KEPT`` says which and why).  It keeps a copy of what a frame
draws from (every agent, the hosts' problem, the snoozes, the previewed
pane's screen), filled before the app starts (``connect``: the first frame
has the full table) and kept current by the service's stream (``run``).
Everything else is asked when the user asks it: a request over a Unix
socket answered from the service's memory, a millisecond or two, so the
questions the app asks as plain calls (why, timeline, an answer) stay plain
calls here.

Answers go to the service's one answerer, policy and guard, with the agent
and the screen the user saw; their reports come back on the stream, marked
with the client that asked (another front end's answers are not this
one's to report).  The service never depends on a client: when the stream
ends the client says so in the header, starts the service again if it
died, and draws again from its state.

Why aiohttp for the stream and ``http.client`` for the questions: the
stream and input mode's WebSocket live on the app's loop, and a question
the app asks as a plain call must be answered before it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..api import timeouts
from ..api.call import ASK, FILLED_IN, LIFECYCLE, SETTLE, SLOW, Call, url_path
from ..api.calls import CALLS, KEPT, SERVED_BY
from ..api.codec import WireError, decode, encode
from ..api.errors import Lost, ServerGone
from ..api.facade import (
    AgentChanged,
    AgentRemoved,
    CallBlocked,
    Event,
    Facade,
    Intent,
    KeyStroke,
    Notice,
    PaneCaptured,
    PaneScreen,
    PendingCall,
    ProblemChanged,
    Report,
    Rung,
    ServiceError,
    Typing,
    sort_key,
)
from ..model import Agent, Observation
from ..notifications.snooze import Snooze, key_of
from ..shared.config import Config
from ..shared.resident_place import Place, is_held
from .transport import HttpTransport, InProcess, Transport

if TYPE_CHECKING:
    import aiohttp  # imported when the stream opens, after the first frame: it costs a popup 0.2 s of start-up

    from ..service.facade import Service  # the in-process transport is handed one; a client of the resident service never loads it

log = logging.getLogger(__name__)

PENDING_FRESH = 0.1  # seconds the answers on their way are taken as known (an inbox asks for each agent in one go)
HERE_EVERY = 5.0  # seconds between two "a key here" said to the service (it keeps pushes off the phone for a minute)
FAILED_FOR = 1.0  # seconds a question the service did not answer is not asked again
RECONNECT_FIRST, RECONNECT_MAX = 0.2, 5.0  # seconds between tries to reach the service again: doubling, capped
STREAM_BUFFER = 8 << 20  # bytes of one stream line: a wide pane's screen with its colours
LOST = "the headspace service is not answering; reconnecting"
PASTE_PIECE = 1000  # characters of pasted text per input mode message (the service takes 16 KiB of JSON; a character is up to 12)


class ClientInputSession:
    """Input mode's session, through the service's WebSocket (``GET /v1/input``): what ``Service.open_input`` hands out in-process."""

    def __init__(self, pane_id: str, ws: aiohttp.ClientWebSocketResponse, report: Callable[[str, bool], None]) -> None:
        self._pane_id = pane_id
        self._ws = ws
        self._report = report
        self._closed = False
        self._asked = 0
        self._sent: dict[int, asyncio.Future[None]] = {}
        self._out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._tasks = [asyncio.get_running_loop().create_task(self._write()), asyncio.get_running_loop().create_task(self._read())]

    @property
    def pane_id(self) -> str:
        return self._pane_id

    def send(self, stroke: KeyStroke) -> None:
        if self._closed:
            return
        if stroke.literal and stroke.keys and len(stroke.keys[0]) > PASTE_PIECE:  # a paste, in messages the service takes
            text = stroke.keys[0]
            for start in range(0, len(text), PASTE_PIECE):
                self._out.put_nowait({"key": encode(KeyStroke((text[start : start + PASTE_PIECE],), literal=True))})
            return
        self._out.put_nowait({"key": encode(stroke)})

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._out.put_nowait({"close": True})
            self._out.put_nowait(None)

    async def wait_sent(self) -> None:
        if self._ws.closed:
            return
        self._asked += 1
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sent[self._asked] = future
        self._out.put_nowait({"wait": self._asked})
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(future), timeouts.SLOW)

    async def _write(self) -> None:
        import aiohttp

        try:
            while (item := await self._out.get()) is not None:
                await self._ws.send_json(item)
        except (ConnectionError, aiohttp.ClientError, RuntimeError) as exc:
            self._report(f"{self._pane_id}: the service is not answering ({exc}); keys not sent", True)

    async def _read(self) -> None:
        import aiohttp

        try:
            async for message in self._ws:
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                said = json.loads(message.data)
                if isinstance(said, dict) and isinstance(said.get("report"), str):
                    self._report(said["report"], bool(said.get("ended")))
                elif isinstance(said, dict) and isinstance(said.get("sent"), int):
                    future = self._sent.pop(said["sent"], None)
                    if future is not None and not future.done():
                        future.set_result(None)
        except (ConnectionError, aiohttp.ClientError, ValueError):
            pass
        finally:
            for future in self._sent.values():
                if not future.done():
                    future.set_result(None)
            if not self._closed:
                self._report(f"{self._pane_id}: the service ended input mode", True)


class ServiceClient:
    """The facade (``service.facade.Service``'s methods) of the resident service at ``place``.

    Every call it makes of the service is one of calls.py's ``CALLS``
    (``_call``), sent by its transport (transport.py; by default HTTP to ``place``).
    """

    def __init__(self, place: Place | None, *, config: Config, restart: Callable[[], object] | None = None, here: Mapping[str, str] | None = None, transport: Transport | None = None) -> None:
        self.place = place
        if transport is None:
            assert place is not None, "a client over HTTP needs the service's place"
            transport = HttpTransport(place)
        self.transport: Transport = transport
        self.config = config
        self.clock: Callable[[], float] = time.time
        self.live = True
        self.id = uuid.uuid4().hex  # this client's answers' reports are marked with it
        self._restart = restart  # starts the service again (start.start_detached), when it died
        self._here = dict(os.environ if here is None else here)
        self._agents: dict[str, Agent] = {}
        self._problem = ProblemChanged("starting", ())
        self._snoozes: dict[str, Snooze] = {}
        self._ran_out: set[str] = set()  # snoozes the service ended by their time, not yet said by ``snoozes_ended``
        self._screens: dict[str, PaneScreen] = {}
        self._focused: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the app's, once it runs: where the copy is changed (``_on_loop``)
        self._focusing: asyncio.Task[None] | None = None  # says the newest focus to the service, off the loop
        self._focus_due = False  # a focus not yet said
        self._here_said = float("-inf")  # when a key here was last said to the service (``here``)
        self._pending: tuple[float, set[str]] = (0.0, set())
        self._awaiting: dict[str, str] = {}  # pane -> its target: this client's answers whose final report has not come
        self._ended = ""  # why the service said it ended, until its stream is followed again
        self._waited: float | None = None  # the last answer of how long agents waited today (kept while the service does not answer)
        self._asides: set[asyncio.Task[None]] = set()  # questions out in threads beside the loop, held until they end
        self._subscribers: list[Callable[[Event], None]] = []
        self._reporters: list[Callable[[Report], None]] = []
        self._http: aiohttp.ClientSession | None = None

    # -- asking ------------------------------------------------------------------------------
    def _send(self, name: str, args: dict[str, Any]) -> Any:
        """Call ``name`` (calls.py) with ``args``, this client's id and place filled in: the service's JSON reply, or the ``ServiceError`` the transport raised."""
        call = CALLS[name]
        fields = {field for field, _ in call.fields}
        if "client" in fields:
            args.setdefault("client", self.id)
        if "here" in fields:
            args.setdefault("here", self._here)
        return self.transport.ask(call, call.put(args), self._timeout(call, args))

    def _timeout(self, call: Call, args: dict[str, Any]) -> float:
        """The seconds ``call`` may take: its class's (api/timeouts.py), and a settling call the settling it asks for too."""
        return {ASK: timeouts.QUESTION, SLOW: timeouts.SLOW, LIFECYCLE: timeouts.LIFECYCLE, SETTLE: float(args.get("settle") or 0.0) + timeouts.QUESTION}[call.timeout]

    @classmethod
    def in_process(cls, service: Service) -> ServiceClient:
        """The client of ``service``, run in this very process (``--no-service``, demos, tests): the same calls, copies and stream (transport.InProcess)."""
        transport = InProcess(service)
        me = cls(None, config=service.config, transport=transport)
        me.clock, me.live = service.clock, service.live
        transport.follow(me._take)
        me.connect(0.0)
        return me

    def _call(self, name: str, **args: Any) -> dict[str, Any]:
        """One call; its reply, the facade's data decoded; a ServiceError (the facade's, one line for the user) when the service refused or did not answer."""
        try:
            answer = self._send(name, args)
        except ServiceError as exc:
            raise ServiceError(f"{self.transport.prefix}{exc}") from None
        if not isinstance(answer, dict):
            raise ServiceError("the headspace service's answer is not an object")
        try:
            return CALLS[name].answer(answer)
        except WireError as exc:
            raise ServiceError(f"the headspace service's answer: {exc}") from None

    def _asked(self, call: Call, args: dict[str, Any]) -> Any:
        """A method made from ``call`` (``asking``): the reply's one field, or the declared answer when the service gave none."""
        try:
            reply = self._call(call.name, **args)
        except ServiceError as exc:
            if call.otherwise is None:
                raise
            log.info("%s: %s", call.name, exc)
            return call.otherwise(str(exc))
        return reply[call.reply[0][0]] if call.reply else None

    def _on_loop(self, change: Callable[[], object]) -> None:
        """Apply ``change`` to this client's copy on the app's loop: a call asked from a worker thread comes back there.

        The copy (agents, snoozes, screens, answers on their way) is the
        loop's: the stream changes it there, and a dict changed from a
        thread while the loop iterates it would end the stream.
        """
        loop = self._loop
        if loop is None or loop.is_closed():
            change()
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            change()
        else:
            loop.call_soon_threadsafe(change)

    def set_here(self, here: Mapping[str, str]) -> None:
        """Where the user sits from now on (a warm popup's each open: the client that opened it), for jumps and new agents."""
        self._here = dict(here)

    def connect(self, settle: float = timeouts.SETTLE) -> None:
        """Take the service's whole state (waiting up to ``settle`` s for its first look): what the first frame draws."""
        state = self._call("state", settle=settle)
        agents, problem, snoozes = state["agents"], state["problem"], state["snoozes"]
        if not isinstance(agents, list) or not all(isinstance(a, Agent) for a in agents) or not isinstance(problem, ProblemChanged) or not isinstance(snoozes, dict):
            raise ServiceError("the headspace service's state is not the facade's")
        self._agents = {agent.pane_id: agent for agent in agents}
        self._problem, self._snoozes = problem, snoozes
        pending = state.get("pending")
        self._pending = (time.monotonic(), {p for p in pending if isinstance(p, str)} if isinstance(pending, list) else set())

    # -- events ------------------------------------------------------------------------------
    def subscribe(self, subscriber: Callable[[Event], None]) -> None:
        self._subscribers.append(subscriber)

    def on_answer_report(self, subscriber: Callable[[Report], None]) -> None:
        self._reporters.append(subscriber)

    def _emit(self, event: Event) -> None:
        """An event of the stream: into the copy, then to the subscribers."""
        if isinstance(event, AgentChanged):
            self._agents[event.agent.pane_id] = event.agent
        elif isinstance(event, AgentRemoved):
            self._agents.pop(event.pane_id, None)
            self._screens.pop(event.pane_id, None)
        elif isinstance(event, ProblemChanged):
            self._problem = event
        elif isinstance(event, PaneCaptured) and event.pane_id != self._focused:
            return  # another client's preview
        self._tell(event)

    def _tell(self, event: Event) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:
                log.exception("a subscriber failed on %s", type(event).__name__)

    async def run(self) -> None:
        """Follow the service's stream; when it ends, say so, start the service again if it died, and catch up from its state."""
        self._loop = asyncio.get_running_loop()
        if isinstance(self.transport, InProcess):
            if self.live:  # a demo's service watches nothing: nothing runs, its replays reach this client as they are made
                await self.transport.run()  # the service itself, whose stream reaches this client as it is made
            return
        assert self.place is not None
        # Imported beside the loop, not on it: the first frame, drawn from the state taken before, is not held up by it.
        aiohttp = await asyncio.to_thread(importlib.import_module, "aiohttp")
        # No total timeout: the stream is meant to last (aiohttp's default would cut it every 5 minutes).
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeouts.QUESTION)
        self._http = aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(self.place.socket)), read_bufsize=STREAM_BUFFER, timeout=timeout)
        pause = RECONNECT_FIRST
        try:
            while True:
                if await self._follow():
                    pause = RECONNECT_FIRST
                self._say_lost()
                await asyncio.sleep(pause)
                pause = min(RECONNECT_MAX, pause * 2)
                if not is_held(self.place) and self._restart is not None:
                    log.warning("the service is gone; starting it again")
                    try:
                        await asyncio.to_thread(self._restart)
                    except ServerGone as exc:
                        # Its last word never reached this client (the service ended before the stream opened): the start says why.
                        self._ended = self._ended or str(exc)[:300]
                        self._say_lost()
                    except (ServiceError, OSError):
                        pass
        finally:
            await self._http.close()

    def _say_lost(self) -> None:
        lost = f"service ended: {self._ended}" if self._ended else LOST  # its why first: the header cuts the rest
        if self._problem.problem != lost:
            self._emit(ProblemChanged(lost, (("local", lost),)))

    async def _follow(self) -> bool:
        """Read the stream until it ends; whether it was followed at all."""
        import aiohttp

        assert self._http is not None
        try:
            async with self._http.get("http://localhost" + url_path(CALLS["events"], {"client": self.id}), headers={"X-Headspace-Version": __version__}) as response:
                if response.status != 200:
                    log.warning("the service's stream answered HTTP %s", response.status)
                    return False
                await response.content.readline()  # its first line: the stream is open, nothing from now on is missed
                self._ended = ""
                await self._catch_up()
                while True:
                    line = await response.content.readline()
                    if not line:
                        return True
                    if line.startswith(b"data: "):
                        self._take(line[6:])
        except (aiohttp.ClientError, OSError, ServiceError, ValueError) as exc:  # OSError: a refused connection, a timeout
            log.info("the service's stream ended: %s", exc)
            return False

    async def _catch_up(self) -> None:
        """The service's state again, each agent that reads differently told as its event: what changed before the stream opened.

        An answer of this client whose final report was due while the
        stream was down is told as not known: the user looks at the pane.
        """
        before, problem, snoozes = dict(self._agents), self._problem, self._snoozes
        await asyncio.to_thread(self.connect, 0.0)
        taken, self._snoozes = self._snoozes, snoozes
        self._set_snoozes(taken)
        for pane_id, target in list(self._awaiting.items()):
            self._report(Report(pane_id, f"{target}: the link to the headspace service broke before it said how the answer went; look at the pane", "warning", False))
        now = time.time()
        for pane_id in set(before) - set(self._agents):
            self._tell(AgentRemoved(pane_id, before[pane_id].key))
        for agent in self._agents.values():
            old = before.get(agent.pane_id)
            if old != agent:
                self._tell(AgentChanged(agent, old.state if old is not None else None, now))
        if self._problem != problem:
            self._tell(self._problem)
        if self._focused is not None:
            self.focus(self._focused)

    def _take(self, data: bytes) -> None:
        try:
            item = json.loads(data)
            kind = item.get("kind")
            if kind == "event":
                event = decode(item.get("event"))
                if isinstance(event, (AgentChanged, AgentRemoved, PaneCaptured, ProblemChanged, Notice, CallBlocked, Rung)):
                    self._emit(event)
            elif kind == "screen" and isinstance(item.get("pane"), str) and isinstance(item.get("ansi"), str):
                self._screens[item["pane"]] = PaneScreen(item["ansi"], int(item["width"]), int(item["height"]))
            elif kind == "snoozes":
                snoozes = decode(item.get("snoozes"))
                if isinstance(snoozes, dict):
                    self._set_snoozes(snoozes)
            elif kind == "ending" and isinstance(item.get("why"), str):
                self._ended = item["why"][:300]  # said when the line goes: why, not only that
            elif kind == "report" and item.get("by") == self.id:
                report = decode(item.get("report"))
                if isinstance(report, Report):
                    self._report(report)
        except (WireError, ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("a stream item that is not the facade's: %s", exc)
        except Exception:
            log.exception("a stream item could not be applied")

    def _report(self, report: Report) -> None:
        if report.final:
            self._awaiting.pop(report.pane_id, None)
        for reporter in list(self._reporters):
            reporter(report)

    def _set_snoozes(self, snoozes: dict[str, Snooze]) -> None:
        """The service's snoozes; the rows whose snooze began or ended are told again (drawn dim, or not, and sorted anew)."""
        changed = {key for key in set(snoozes) | set(self._snoozes) if snoozes.get(key) != self._snoozes.get(key)}
        clock = self.clock()
        # Ended in the service because their time ran out (another front end, or its ringer, asked first): ended here too (``snoozes_ended``).
        self._ran_out |= {key for key, snooze in list(self._snoozes.items()) if key not in snoozes and snooze.until <= clock}
        self._ran_out -= set(snoozes)  # snoozed again before this client's tick: its new snooze stands (it never ran out)
        self._snoozes = snoozes
        now = time.time()
        for agent in list(self._agents.values()):
            if key_of(agent) in changed:
                self._tell(AgentChanged(agent, agent.state, now))

    async def stop(self) -> None:
        if isinstance(self.transport, InProcess):
            await self.transport.stop()
        if self._http is not None:
            await self._http.close()

    # -- what a front end shows ----------------------------------------------------------------
    def agents(self) -> list[Agent]:
        return sorted(self._agents.values(), key=sort_key)

    def problem_now(self) -> ProblemChanged:
        return self._problem

    def hosts(self) -> list[tuple[str, str | None]]:
        return [(host, problem) for host, problem in self._problem.hosts] or [("local", None)]

    @property
    def focused(self) -> str | None:
        return self._focused

    def focus(self, address: str | None) -> None:
        """The pane this client previews, said to the service without waiting for it: a cursor move never waits.

        On the app's loop the newest focus is said by a task, off the loop
        (one at a time: moves made meanwhile are said once, the last one),
        then the pane's screen is asked and told as a capture, which the
        preview draws; until then ``screen`` has none.
        """
        if address != self._focused:
            self._screens.clear()  # a pane shown before may have changed since: its screen is asked again
        self._focused = address
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on a loop: said here
            self._say_focus(address)
            return
        self._focus_due = True
        if self._focusing is None or self._focusing.done():
            self._focusing = loop.create_task(self._send_focus())

    def here(self) -> None:
        """A key here: said to the service beside the loop, at most once every HERE_EVERY seconds (a key never waits)."""
        now = time.monotonic()
        if now - self._here_said < HERE_EVERY:
            return
        self._here_said = now

        def say() -> None:
            with contextlib.suppress(ServiceError):
                self._call("here")

        self._in_thread("here", say)

    async def _send_focus(self) -> None:
        while self._focus_due:
            self._focus_due = False
            address = self._focused
            await asyncio.to_thread(self._say_focus, address)
            if address is not None and address == self._focused and address in self._screens:
                self._tell(PaneCaptured(address))

    def _say_focus(self, address: str | None) -> None:
        try:
            self._call("focus", pane=address)
        except ServiceError as exc:
            log.info("focus: %s", exc)
        if address is None:
            return
        self._fetch_screen(address)

    def _fetch_screen(self, address: str) -> None:
        """Ask the service for ``address``'s screen, kept unless the stream brought one meanwhile (as new or newer)."""
        with contextlib.suppress(ServiceError, TypeError, ValueError, KeyError):
            shown = self._call("screen", pane=address)["screen"]
            if isinstance(shown, dict):
                screen = PaneScreen(str(shown["ansi"]), int(shown["width"]), int(shown["height"]))
                self._on_loop(lambda: self._screens.setdefault(address, screen) if address == self._focused else None)

    def screen(self, address: str) -> PaneScreen | None:
        """The previewed pane's screen as this client has it (asked off the loop when focused, then kept by the stream); None until it came."""
        return self._screens.get(address)

    def width(self, address: str) -> int | None:
        shown = self._screens.get(address)
        if shown is not None:
            return shown.width  # the previewed pane's, as its last screen said
        try:
            width = self._call("screen", pane=address)["width"]
        except ServiceError:
            return None
        return width if isinstance(width, int) else None

    def _in_thread(self, what: str, job: Callable[[], None]) -> None:
        """``job`` in a thread, beside the app's loop (a question asked on it would hold the keys); here and now when no loop runs."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            job()
            return
        task = loop.create_task(asyncio.to_thread(job), name=what)
        self._asides.add(task)
        task.add_done_callback(self._asides.discard)

    def waited_today(self, agents: dict[str, Agent], now: float) -> float | None:
        # Asked whenever the app asks (once a second, off its loop: app/screens/header.py); None: no journal, or no answer.
        with contextlib.suppress(ServiceError):
            seconds = self._call("waited_today", now=now)["seconds"]
            self._waited = float(seconds) if isinstance(seconds, (int, float)) else None
        return self._waited

    # -- answering -------------------------------------------------------------------------
    def answer(self, agent: Agent, intent: Intent, seen: Observation | None = None) -> str:
        try:
            answer = self._send("answer", {"agent": agent, "intent": intent, "seen": seen})
        except Lost as exc:
            return f"the headspace service did not answer ({exc}); the answer may have gone: look at the pane before answering again"
        except ServiceError as exc:
            return f"{self.transport.prefix}{exc}"
        self._pending = (0.0, set())
        refusal = answer.get("refusal") if isinstance(answer, dict) else None
        if refusal == "":
            self._on_loop(lambda: self._awaiting.__setitem__(agent.pane_id, agent.target))
        return refusal if isinstance(refusal, str) else "the headspace service's answer is not a refusal or none; look at the pane"

    def answer_pending(self, agent: Agent) -> bool:
        at, panes = self._pending
        if time.monotonic() - at > PENDING_FRESH:
            try:
                listed = self._call("pending")["panes"]
                panes = {p for p in listed if isinstance(p, str)} if isinstance(listed, list) else set()
                self._pending = (time.monotonic(), panes)
            except ServiceError:  # not asked again for a while: a service that does not answer costs one wait, not one per agent
                panes = set(self._awaiting)
                self._pending = (time.monotonic() + FAILED_FOR, panes)
        return agent.pane_id in panes

    def approve_batch(self, pairs: list[tuple[Agent, PendingCall]]) -> str:
        try:
            line = str(self._call("approve_batch", pairs=pairs)["line"] or "")
        except ServiceError as exc:
            return f"{exc}; approved nothing"
        self._on_loop(lambda: self._awaiting.update((agent.pane_id, agent.target) for agent, _ in pairs))
        return line

    # -- snoozes -------------------------------------------------------------------------
    def snooze(self, agent: Agent, until: float) -> Snooze | None:
        try:
            snooze = self._call("snooze", agent=agent, until=until)["snooze"]
        except ServiceError as exc:
            log.info("snooze: %s", exc)
            return None
        if isinstance(snooze, Snooze):
            self._on_loop(lambda: self._snoozed_again(key_of(agent), snooze))
            return snooze
        return None

    def _snoozed_again(self, key: str, snooze: Snooze) -> None:
        """A snooze this client made: in the copy at once, and no longer among those that ran out (its tick must not end the new one)."""
        self._snoozes[key] = snooze
        self._ran_out.discard(key)

    def unsnooze(self, agent: Agent) -> bool:
        self._on_loop(lambda: self._snoozes.pop(key_of(agent), None))
        try:
            return bool(self._call("unsnooze", agent=agent)["was"])
        except ServiceError:
            return False

    def snooze_of(self, agent: Agent) -> Snooze | None:
        return self._snoozes.get(key_of(agent))

    def snoozed(self) -> int:
        return len(self._snoozes)

    def snoozes_ended(self, now: float) -> list[str]:
        """The snoozes that ran out by ``now``: ended in this copy at once, and in the service beside the loop (one set for every front end).

        Asked once a second on the app's loop, so the copy decides: a
        snooze that ran out is told to the service from a thread (a resident
        one also ends them by its own clock, and its stream tells every
        copy).  With them, those the service ended by their time before this
        client saw them run out (another front end, the resident's ringer).
        """
        ended = [key for key, snooze in list(self._snoozes.items()) if snooze.until <= now]
        if ended:
            self._in_thread("snoozes ended", lambda: self._end_snoozes(now))
        ended += sorted(self._ran_out - set(ended))
        self._ran_out.clear()
        for key in ended:
            self._snoozes.pop(key, None)
        return ended

    def _end_snoozes(self, now: float) -> None:
        try:
            self._call("snoozes_ended", now=now)
        except ServiceError as exc:
            log.info("snoozes ended: %s", exc)

    # -- input mode ----------------------------------------------------------------------
    async def open_input(self, pane_id: str, report: Callable[[str, bool], None], family: str) -> tuple[Typing | None, str]:
        import aiohttp

        if isinstance(self.transport, InProcess):
            return await self.transport.open_input(pane_id, report, family)
        if self._http is None or self._http.closed:
            return None, "the headspace service is not connected yet; try again in a moment"
        try:
            ws = await self._http.ws_connect("http://localhost" + url_path(CALLS["input"], CALLS["input"].put({"pane": pane_id, "family": family})), heartbeat=None)
            first = await asyncio.wait_for(ws.receive_json(), timeouts.SLOW)
        except (aiohttp.ClientError, OSError, ValueError, TypeError, RuntimeError) as exc:
            return None, f"the headspace service: {exc or type(exc).__name__}"
        if not isinstance(first, dict) or first.get("opened") is not True:
            await ws.close()
            problem = first.get("problem") if isinstance(first, dict) else None
            return None, str(problem or "the headspace service refused input mode")
        return ClientInputSession(pane_id, ws, report), ""

    # -- jump, start, stop -------------------------------------------------------------------
    def start_agent(self, folder: str, branch: str = "", near: Agent | None = None) -> str:
        return self.start(folder, branch, near)["pane"]

    def start(self, folder: str, branch: str = "", near: Agent | None = None, *, args: Sequence[str] = (), session: str = "") -> dict[str, Any]:
        """An agent started by the service (``start_agent``: the table's "New agent", ``headspace new``): its pane, target, folder, and whether that is a new worktree."""
        where = str(Path(folder.strip() or os.getcwd()).expanduser().absolute())  # the folder the user means: from here, not the service's /
        answer = self._call("start_agent", folder=where, branch=branch, near=near, args=list(args), session=session)
        pane, target, cwd = answer["pane"], answer["target"], answer["cwd"]
        if not all(isinstance(value, str) for value in (pane, target, cwd)) or not isinstance(answer["worktree"], bool):
            raise ServiceError("the headspace service's answer is not a started agent")
        return {"pane": pane, "target": target, "cwd": cwd, "worktree": answer["worktree"]}

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            """The methods made from the declarations (below), which a type checker does not see made."""


def asking(member: str, call: Call) -> Callable[..., Any]:
    """The client's method for the facade's ``member``, made from ``call``'s declaration: adding a call writes no client method.

    It takes the facade method's arguments (its signature, as the Protocol
    says), sends them as the call's fields in the same order (those the
    client fills in left out), and returns the reply's one field, or
    ``call.otherwise`` of the service's line when the service gave none.
    A method the Protocol makes async asks from a thread beside the loop.
    """
    declared = getattr(Facade, member)
    signature = inspect.signature(declared)
    fields = [name for name, _ in call.fields if name not in FILLED_IN]
    if len(fields) != len(signature.parameters) - 1:
        raise TypeError(f"{member}: the facade takes {list(signature.parameters)[1:]}, the call {call.name} declares {fields}")

    def sent(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        bound = signature.bind(None, *args, **kwargs)
        bound.apply_defaults()
        return dict(zip(fields, list(bound.arguments.values())[1:], strict=True))

    async def off_the_loop(self: ServiceClient, *args: Any, **kwargs: Any) -> Any:
        asked = sent(args, kwargs)
        return await asyncio.to_thread(self._asked, call, asked)

    def plain(self: ServiceClient, *args: Any, **kwargs: Any) -> Any:
        return self._asked(call, sent(args, kwargs))

    method: Callable[..., Any] = off_the_loop if inspect.iscoroutinefunction(declared) else plain
    method.__name__ = method.__qualname__ = member
    method.__doc__ = f"The facade's ``{member}``, asked as calls.py declares ``{call.name}``."
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.asks = call  # type: ignore[attr-defined]
    return method


for _member, _call in SERVED_BY.items():
    if _member not in KEPT:
        setattr(ServiceClient, _member, asking(_member, CALLS[_call]))
