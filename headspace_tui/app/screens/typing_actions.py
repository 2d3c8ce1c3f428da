"""The main screen's typing keys: ``r`` (a reply, kept until delivered) and ``i`` (input mode).

``send_text`` is the one way text typed in headspace goes to an agent's
input box: the reply box's, and the remarks on its diff (``d``, then
``s``), so both meet the same refusals (a draft left in the box, a dialog
open, an answer already on its way) and are reported the same way.

A part the main screen holds and calls down into, with the agent its key
acts on (the screen decides that: its reaction-time guard): the reply box
and its drafts, and input mode's state (``input_mode.py``) shown on the
preview.  What ends input mode by itself comes to the screen as a message
(``InputModeEnded``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import events
from textual.screen import Screen

from ...api.facade import Facade, Intent, IntentKind, Report
from ...model import Agent, Observation
from ..input_mode import InputMode
from ..widgets.agent_table import AgentTable
from ..widgets.preview import PanePreview
from .asking import Asking
from .reply import ReplyScreen

IN_FLIGHT_WAIT = 60.0  # s a text's report may take before a second text to the pane is let go anyway


class Typing:
    """Replies (``r``) with their drafts, and input mode (``i``) on ``screen``'s preview."""

    def __init__(self, screen: Screen, service: Facade, asking: Asking) -> None:
        self.screen = screen
        self.service = service
        self.asking = asking  # the calls that may wait on the service: off the UI loop
        self._drafts: dict[str, str] = {}  # per pane: a reply typed and not (yet) delivered
        self._replying: dict[str, str] = {}  # per pane: the reply on its way, until its report
        self._replying_at: dict[str, float] = {}  # per pane: when it went (a report that never came lets go after IN_FLIGHT_WAIT)
        self._heard: dict[str, Callable[[bool, str], None]] = {}  # per pane: who hears how the text on its way went (remarks)
        self.input_mode = InputMode(service, screen)

    # -- reply (r) ---------------------------------------------------------------------
    def reply(self, agent: Agent) -> None:
        """The reply box for ``agent``: its input box, or a question's own free-text field.

        The box keeps the text until the reply is delivered: a refusal (at
        once or reported later) leaves it open with the reason; Esc keeps
        it as the agent's draft, shown again by the next ``r``.
        """
        seen = agent.observation
        prompt = seen.prompt
        question = prompt.title if prompt and prompt.kind in ("input", "question") else ""
        hint = "typed into the question's own 'Type something.' option" if prompt and prompt.kind == "question" and prompt.free_text else ""
        pane_id = agent.pane_id

        def send(text: str, sent: Callable[[str], None]) -> None:
            self._drafts[pane_id] = text  # until it is reported delivered
            self.send_text(agent, seen, text, sent)

        def done(draft: str | None) -> None:
            if draft:
                self._drafts[pane_id] = draft
            else:
                self._drafts.pop(pane_id, None)

        self.screen.app.push_screen(ReplyScreen(agent.target, pane_id, send, question=question, hint=hint, text=self._drafts.get(pane_id, "")), done)

    def send_text(self, agent: Agent, seen: Observation, text: str, sent: Callable[[str], None], heard: Callable[[bool, str], None] | None = None, what: str = "a reply") -> None:
        """``text`` into ``agent``'s input box, typed against the screen ``seen``: through the service's one answering policy.

        ``sent`` hears its refusal at once ("" when it went); ``heard``, if
        given, how it went in the end (delivered or not, and the report's
        line), whether or not a window still shows it.
        """
        pane_id = agent.pane_id
        if pane_id in self._replying and time.monotonic() - self._replying_at.get(pane_id, 0.0) < IN_FLIGHT_WAIT:
            # One text at a time per pane: a second (a reply while remarks go) would take the first's report as its own.
            sent("a text to this agent is on its way: wait for its report")
            return
        self._replying[pane_id] = text  # before the service takes it: its report may come first
        self._replying_at[pane_id] = time.monotonic()
        if heard is not None:
            self._heard[pane_id] = heard
        else:
            self._heard.pop(pane_id, None)

        def refused(refusal: str) -> None:
            if refusal and self._replying.get(pane_id) == text:
                del self._replying[pane_id]
                self._heard.pop(pane_id, None)
            sent(refusal)

        self.asking.answer(agent, what, lambda: self.service.answer(agent, Intent(IntentKind.TEXT, text=text), seen=seen), refused)

    def reported(self, report: Report) -> None:
        """An answer's report: the reply box (or whoever sent the text) hears how it went; a delivered reply's draft goes."""
        sent = self._replying.pop(report.pane_id, None)
        heard = self._heard.pop(report.pane_id, None) if sent is not None else None
        if report.delivered and sent is not None and self._drafts.get(report.pane_id) == sent:
            self._drafts.pop(report.pane_id)  # only the reply itself: another answer's report leaves a draft alone
        if heard is not None:
            heard(report.delivered, report.text)
        box = self.screen.app.screen
        if isinstance(box, ReplyScreen) and box.pane_id == report.pane_id:
            box.reported(report.delivered, report.text)

    # -- input mode (i) -----------------------------------------------------------------
    def enter(self, agent: Agent) -> None:
        """From now on the keys go to ``agent``'s pane, until the leave key: the preview live, marked, and focused."""
        preview = self.screen.query_one(PanePreview)
        preview.live()
        self.input_mode.enter(agent)
        preview.add_class("-input")
        preview.can_focus = True
        preview.focus()

    def leave(self) -> bool:
        """Out of input mode (if in it): the table takes the keys again.  True if it was on."""
        if not self.input_mode.active:
            return False
        self.input_mode.leave()
        preview = self.screen.query_one(PanePreview)
        preview.remove_class("-input")
        preview.can_focus = False
        self.screen.query_one(AgentTable).focus()
        return True

    def key(self, event: events.Key) -> bool:
        """In input mode every key that reaches the screen is the pane's (the leave key acted before, as a priority binding).  True if taken."""
        if not self.input_mode.active:
            return False
        event.stop()
        event.prevent_default()
        self.input_mode.key(event)
        return True

    def paste(self, event: events.Paste) -> None:
        if self.input_mode.active:
            event.stop()
            event.prevent_default()
            self.input_mode.paste(event.text)
