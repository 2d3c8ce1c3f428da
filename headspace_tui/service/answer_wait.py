"""One answer from a front end that asks over a connection, start to final word: what the CLI's route and the web page share.

A terminal UI holds the agent it answers and hears every report; a request
(``send`` through the service, a tap on the phone page) holds only a pane id
and a fingerprint, and wants one reply: sent and seen, or why not.  This is
that reply, through the facade's one answerer, its policy and its guard:

* the agent is looked up now, by its pane, in the service's own store;
* ``expect``: only when the prompt shown now is the very appearance the
  asker saw (its ``request``: service/records/appearances.py): a dialog that changed
  since, or the same words asked anew after an answer, is not answered;
* a prompt shown moments ago gets the rest of a reaction time, then one more
  try, as the command line's own guarded send does;
* the reply is the answer's final report (or why there was none in time).
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass

from ..answering.answerer import moves_on
from ..api import timeouts
from ..api.facade import REACTION_TIME, Intent, IntentKind, Report, Served
from ..model import PANE_ADDRESS, Agent
from ..tmux.server import TmuxCommandError
from .records.appearances import is_request

MAX_TEXT = 10_000  # characters of a typed answer
OPTION = re.compile(r"(\d{1,2}(,\d{1,2})*)?")


def answer_request(body: object, *, pane_key: str, expect_required: bool = False, via: str = "") -> tuple[str, Intent, str | None] | str:
    """An answer asked by pane (``{pane_key, "intent", "option", "text", "expect"}``) as (pane, intent, expected request), or what is wrong with it.

    The one reading of such a body, for the command line's route (``expect``
    may be left out) and the web page's (``expect`` is what the page showed,
    always); either names any watched host's pane (``%3@box``: ``send
    --host`` asks the service that watches that host).
    """
    if not isinstance(body, dict):
        return "an answer is a JSON object"
    pane, kind, expect = body.get(pane_key), body.get("intent"), body.get("expect")
    option, text = body.get("option", ""), body.get("text", "")
    if not isinstance(pane, str) or not PANE_ADDRESS.fullmatch(pane):
        return f"{pane_key}: a pane id such as %3 or %3@box"
    if kind not in {k.value for k in IntentKind}:
        return f"intent: one of {', '.join(k.value for k in IntentKind)}"
    if not isinstance(option, str) or not OPTION.fullmatch(option):
        return "option: an option number, or several joined by commas"
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        return f"text: a string of at most {MAX_TEXT} characters"
    if expect_required and not isinstance(expect, str):
        return "expect: the request (one appearance of a prompt) the page showed (a string; empty when it showed none)"
    if expect is not None and not isinstance(expect, str):
        return "expect: a request, as 'status --json' shows it (a string)"
    return pane, Intent(IntentKind(kind), option=option, text=text, via=via), expect


@dataclass(frozen=True)
class Reply:
    """How one answer ended: ``status`` as HTTP says it (200 answered, 404 no such agent, 409 refused), and a line."""

    status: int
    target: str = ""
    delivered: bool = False
    detail: str = ""
    state: str = ""  # the agent's state word when it was refused (the page redraws from it)
    move_on: bool = False  # delivered, and the agent is left to the others: a front end goes on to the next that waits (answering.answerer.moves_on)


class AnswerWait:
    """Answers that wait for their final report; one per service, subscribed to its reports."""

    def __init__(self, service: Served) -> None:
        self.service = service
        self._waiting: dict[str, list[asyncio.Future[Report]]] = {}  # per pane, the answers waiting for their final report
        service.on_answer_report(self._report)

    def _report(self, report: Report) -> None:
        if report.final:
            for future in self._waiting.pop(report.pane_id, []):
                if not future.done():
                    future.set_result(report)

    async def answer(self, pane_id: str, intent: Intent, expect: str | None) -> Reply:
        """Answer the agent in ``pane_id`` with ``intent`` (only if its prompt is appearance ``expect``, when given)."""
        agent = self.service.agent(pane_id)
        if agent is None:
            return Reply(404, detail=f"{pane_id}: no agent is watched there; nothing sent")
        refusal = self._unexpected(agent, expect)
        if refusal:
            return Reply(409, agent.target, detail=refusal, state=agent.state.value)
        caught = await self._as_it_is(agent, expect)
        if isinstance(caught, Reply):
            return caught
        agent = caught
        future: asyncio.Future[Report] = asyncio.get_running_loop().create_future()
        waiting = self._waiting.setdefault(pane_id, [])
        waiting.append(future)
        try:
            refusal = self.service.answer(agent, intent)
            if refusal and agent.observation.prompt is not None and time.time() - agent.prompt_since < REACTION_TIME:
                await asyncio.sleep(REACTION_TIME)
                agent = self.service.agent(pane_id) or agent
                # Judged again after the wait: the appearance may have changed meanwhile.
                refusal = self._unexpected(agent, expect) or self.service.answer(agent, intent)
            if refusal:
                return Reply(409, agent.target, detail=refusal, state=agent.state.value)
            report = await asyncio.wait_for(future, timeouts.ANSWER)
        except TimeoutError:
            return Reply(200, agent.target, detail=f"no final word on the answer within {timeouts.ANSWER:g}s")
        finally:
            if future in waiting:
                waiting.remove(future)
            if not waiting and self._waiting.get(pane_id) is waiting:
                self._waiting.pop(pane_id, None)
        return Reply(200, agent.target, report.delivered, report.text, move_on=report.delivered and moves_on(intent, agent.observation))

    async def _as_it_is(self, agent: Agent, expect: str | None) -> Agent | Reply:
        """The agent as the asker answers it: with no ``expect`` (the command line's "as it is now"), once the service's look agrees with its pane."""
        if expect is not None:
            return agent
        try:
            return await self.service.caught_up(agent)
        except TmuxCommandError as exc:
            return Reply(409, agent.target, detail=f"{agent.target}: {exc}; nothing sent", state=agent.state.value)

    def _unexpected(self, agent: Agent, expect: str | None) -> str:
        """Why ``agent`` must not be answered for ``expect`` (the request the asker saw), or ""."""
        if expect is None:
            return ""
        if expect and not is_request(expect):
            return "expect takes the prompt's 'request' (from 'status --json' or the page), which names one appearance of it, not its words' fingerprint; nothing sent"
        stale = self.service.stale(agent, expect)
        return f"{stale}; nothing sent" if stale else ""
