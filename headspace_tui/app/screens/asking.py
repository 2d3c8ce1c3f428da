"""The main screen's calls to the service: off the UI loop, their result applied on it, and said while one is out.

Every call goes the same way, whether the service is a process of its own
or runs in this one (``--no-service``): to a thread in a worker, the keys
going on meanwhile, its result applied back on the loop when it comes.
The service serves it on its own loop, and what runs tmux beside that
(resident/transport.py), so neither a slow service nor a slow tmux holds
the keys.  A call out for more than ``SAY_AFTER`` is said in the header
("waiting for the service: …") until it comes back, so a slow service is
seen, never felt as a frozen screen.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import TypeVar

from textual.screen import Screen

from ...api.facade import Facade
from ...model import Agent
from ...shared.safe_text import clean

T = TypeVar("T")

SAY_AFTER = 0.2  # seconds a call is out before the header says so (a quick answer is not worth a flicker of the header)


class Asking:
    """The calls ``screen`` makes to ``service`` that may wait, and which of them are out now."""

    def __init__(self, screen: Screen, service: Facade, changed: Callable[[], None]) -> None:
        self.screen = screen
        self.service = service
        self.changed = changed  # the header shows ``waiting`` again
        self._out: dict[int, tuple[str, float]] = {}  # call -> what it is, when it went
        self._count = itertools.count()
        self._answering: set[str] = set()  # panes an answer of this screen is out to (not yet taken or refused by the service)

    def ask(self, what: str, call: Callable[[], T], then: Callable[[T], None], *, said: bool = True, settled: Callable[[], None] | None = None) -> None:
        """``call()`` to the service, then ``then(its result)`` on the loop; ``what`` it is, in a few words, for the header (``said``).

        ``settled``: called once the call is over, whether it answered or failed.
        """
        self.screen.app.run_worker(self._ask(what, call, then, said, settled), name=what, group="service", exit_on_error=False)

    def answer(self, agent: Agent, what: str, call: Callable[[], str], then: Callable[[str], None]) -> None:
        """An answer to ``agent`` (``call`` hands it to the service; ``then`` hears its refusal, "" when it went): one at a time per pane.

        A second key for a pane whose answer the service has not taken yet
        sends nothing (the service's own rule, one answer at a time, cannot
        see an answer still on its way to it) and says so.
        """
        if agent.pane_id in self._answering:
            then("the last answer to it is still waiting for the service")  # a refusal, said as the caller says one (a reply box keeps its text)
            return
        self._answering.add(agent.pane_id)
        self.ask(f"{what} to {clean(agent.target)}", call, then, settled=lambda: self._answering.discard(agent.pane_id))

    async def asked(self, what: str, call: Callable[[], T], *, said: bool = True) -> T:
        """``call()``'s result, in a coroutine (a worker's), asked from a thread."""
        key = next(self._count)
        if said:
            self._out[key] = (what, time.monotonic())
            self.screen.set_timer(SAY_AFTER, self.changed)
        try:
            return await asyncio.to_thread(call)
        finally:
            if self._out.pop(key, None) is not None:
                self.changed()

    async def _ask(self, what: str, call: Callable[[], T], then: Callable[[T], None], said: bool, settled: Callable[[], None] | None) -> None:
        try:
            result = await self.asked(what, call, said=said)
        finally:
            if settled is not None:
                settled()
        if self.screen.is_running:
            then(result)

    def waiting(self) -> str:
        """What the header says of the calls out longer than ``SAY_AFTER`` ("" when none is)."""
        now = time.monotonic()
        late = [what for what, since in self._out.values() if now - since >= SAY_AFTER]
        if not late:
            return ""
        return f"waiting for the service: {late[0]}" + (f" (+{len(late) - 1} more)" if len(late) > 1 else "") + "…"
