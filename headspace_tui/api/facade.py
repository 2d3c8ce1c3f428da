"""The API every front end speaks, at the bottom of the house: the Facade Protocol, its value types and its vocabulary.

A front end (the terminal UI, the popup, the command line, the phone page)
holds a ``Facade``: a client of the resident service, or of one in its own
process, by one path either way (each call declared once in calls.py,
own_calls.py and page_calls.py; its data crossing as JSON, codec.py).
This module names what crosses and loads none of the watcher: importing
it (and the client built on it) costs no monitor, no tmux, no rules, no
remote host.  The service (service/facade.py ``Service``) implements the
Protocol; nothing here knows how.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..answering.keys import KeyStroke
from ..answering.policy import REACTION_TIME, Intent, IntentKind, key_allowed, live_keys, unfit
from ..answering.report import ChannelReport, Report
from ..changes.model import Diff
from ..detect.fusion import Explanation
from ..events import AgentChanged, AgentRemoved, CallBlocked, Event, Notice, PaneCaptured, ProblemChanged, Rung
from ..hooks.calls import PendingCall
from ..model import Agent, Observation, sort_key
from ..notifications.snooze import Snooze
from ..service.records.evidence import FIRST_SAYS
from ..shared.config import Config
from ..usage.model import Spent, SpentRow
from .errors import ServiceError

# What a front end needs besides the facade itself: the answers' vocabulary and the events.
__all__ = [
    "AgentChanged",
    "AgentRemoved",
    "CallBlocked",
    "ChannelReport",
    "Event",
    "Explanation",
    "FIRST_SAYS",
    "Facade",
    "Typing",
    "Intent",
    "IntentKind",
    "Jump",
    "KeyStroke",
    "Notice",
    "PaneCaptured",
    "PaneScreen",
    "PendingCall",
    "ProblemChanged",
    "Rung",
    "REACTION_TIME",
    "Report",
    "Served",
    "ServiceError",
    "key_allowed",
    "live_keys",
    "sort_key",
    "unfit",
]


@dataclass(frozen=True)
class PaneScreen:
    """A pane's screen as last read, for a preview."""

    ansi: str
    width: int
    height: int


@dataclass(frozen=True)
class Jump:
    """What a jump did: moved the user's client, or not (``notice`` says why); ``end``: the front end ends now."""

    end: bool = False  # a popup moved its client (it would stay over the agent), or the user must attach outside
    exit_with: str = ""  # printed after the front end ends: the command that takes the user there
    notice: str = ""


class Typing(Protocol):
    """Input mode's session to one pane, as a front end holds it: ``InputSession`` here, a WebSocket's through the resident service."""

    @property
    def pane_id(self) -> str: ...
    def send(self, stroke: KeyStroke) -> None: ...
    def close(self) -> None: ...
    async def wait_sent(self) -> None: ...


class Facade(Protocol):
    """What a front end holds: a client of the service (resident/facade_client.py), of the resident one or of one in its own process.

    One path either way: each call is declared once (api/calls.py)
    and served by the same routes over the service's ``Service`` methods,
    its data crossing as JSON, so a front end holds copies in both modes.
    A question may wait on the service (a process of its own, or tmux
    beside it), so a front end asks from a thread, never on its UI loop,
    in both modes alike; what it draws from (``agents``, ``screen``,
    ``snooze_of``) is its own copy, read at once.
    """

    config: Config
    clock: Callable[[], float]
    live: bool

    def subscribe(self, subscriber: Callable[[Event], None]) -> None: ...
    def on_answer_report(self, subscriber: Callable[[Report], None]) -> None: ...
    async def run(self) -> None: ...
    async def stop(self) -> None: ...
    def agents(self) -> list[Agent]: ...
    def problem_now(self) -> ProblemChanged: ...
    @property
    def focused(self) -> str | None: ...
    def focus(self, address: str | None) -> None: ...
    def here(self) -> None:
        """A key at this front end just now: a person is at a headspace terminal, so the phone is not pushed (web/push.py)."""

    def screen(self, address: str) -> PaneScreen | None: ...
    def width(self, address: str) -> int | None: ...
    async def history(self, address: str, lines: int) -> str: ...
    async def changes(self, address: str, scope: str) -> Diff: ...
    def why(self, agent: Agent, now: float) -> tuple[Explanation | None, ChannelReport | None]: ...
    def timeline(self, agent: Agent) -> list: ...
    def waited_today(self, agents: dict[str, Agent], now: float) -> float | None: ...
    def spent(self, now: float, days: int) -> tuple[Spent, list[SpentRow]] | None:
        """What agents spent today, and per agent per day for the last ``days`` days (None: no journal, or not answered)."""

    async def away(self, since: float) -> list[dict]:
        """What each agent did since ``since`` (service/records/away.py): turns finished, calls blocked, rules' answers, spending."""

    def answer(self, agent: Agent, intent: Intent, seen: Observation | None = None) -> str: ...
    def answer_pending(self, agent: Agent) -> bool: ...
    def batch(self, agent: Agent) -> tuple[list[tuple[Agent, PendingCall]], str]: ...
    def approve_batch(self, pairs: list[tuple[Agent, PendingCall]]) -> str: ...
    def snooze(self, agent: Agent, until: float) -> Snooze | None: ...
    def unsnooze(self, agent: Agent) -> bool: ...
    def snooze_of(self, agent: Agent) -> Snooze | None: ...
    def snoozed(self) -> int: ...
    def snoozes_ended(self, now: float) -> list[str]: ...
    async def open_input(self, pane_id: str, report: Callable[[str, bool], None], family: str) -> tuple[Typing | None, str]: ...
    def jump(self, agent: Agent) -> Jump: ...
    def start_agent(self, folder: str, branch: str = "", near: Agent | None = None) -> str: ...
    async def stop_agent(self, agent: Agent) -> bool: ...
    async def restart_agent(self, agent: Agent) -> str: ...
    def close_pane(self, agent: Agent) -> None: ...


class Served(Protocol):
    """What the phone page's server and the answer wait ask of the service, declared here beside the facade.

    Both are served in the service's process (web/server.py,
    service/answer_wait.py: the page's routes and the command line's
    ``answer`` wait), and reach its ``Service`` only through this: every
    call a route makes is in one declared place, never a method found on
    the concrete class.  The ``Service`` is checked against it where it is
    handed to them.
    """

    config: Config

    def subscribe(self, subscriber: Callable[[Event], None]) -> None: ...
    def on_answer_report(self, subscriber: Callable[[Report], None]) -> None: ...
    def agents(self) -> list[Agent]: ...
    def agent(self, address: str) -> Agent | None: ...
    def hosts(self) -> list[tuple[str, str | None]]: ...
    def screen(self, address: str) -> PaneScreen | None: ...
    async def changes(self, address: str, scope: str) -> Diff: ...
    def answer(self, agent: Agent, intent: Intent, seen: Observation | None = None) -> str: ...
    async def caught_up(self, agent: Agent) -> Agent: ...
    def stale(self, agent: Agent, request: str) -> str: ...
    def snooze(self, agent: Agent, until: float) -> Snooze | None: ...
    def unsnooze(self, agent: Agent) -> bool: ...
    def snooze_of(self, agent: Agent) -> Snooze | None: ...
    def ruled(self, since: float) -> list[dict]: ...
    async def away(self, since: float) -> list[dict]: ...
    def rules_control(self, action: str, rule: str = "", host: str = "", via: str = "the phone page") -> str: ...
