"""The main screen's typing keys: ``r`` (a reply, kept until delivered) and ``i`` (input mode).

The base of ``MainScreen`` (kept apart so that neither class grows past a
screenful of concerns): it uses the screen's service, table, preview and
prompt bar, and the input mode state in ``input_mode.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.screen import Screen

from ...model import Agent
from ...service.facade import Intent, IntentKind, Report, Service, key_allowed
from ...shared.safe_text import clean
from ..input_mode import InputMode
from ..widgets.agent_table import AgentTable
from ..widgets.preview import PanePreview
from .reply import ReplyScreen


class TypingActions(Screen):
    """``r`` and ``i``; ``MainScreen`` provides the rest (declared below for the type checker only)."""

    service: Service
    _keys_for: tuple[str | None, frozenset[str]] | None

    def __init__(self) -> None:
        super().__init__()
        self._drafts: dict[str, str] = {}  # per pane: a reply typed and not (yet) delivered
        self._replying: dict[str, str] = {}  # per pane: the reply on its way, until its report
        self.input_mode = InputMode(self)

    if TYPE_CHECKING:  # provided by MainScreen; declared only for the type checker, so that they never shadow the real ones in the MRO

        def _target(self, answering: bool = False) -> Agent | None:
            ...

        def _refresh_prompt_bar(self) -> None:
            ...

        def _refresh_preview(self) -> None:
            ...

        def action_preview_live(self) -> None:
            ...

    # -- reply (r) ---------------------------------------------------------------------
    def action_reply(self) -> None:
        """The reply box for the selected agent: its input box, or a question's own free-text field.

        The box keeps the text until the reply is delivered: a refusal (at
        once or reported later) leaves it open with the reason; Esc keeps
        it as the agent's draft, shown again by the next ``r``.
        """
        agent = self._target(answering=True)
        if agent is None:
            return
        seen = agent.observation
        prompt = seen.prompt
        question = prompt.title if prompt and prompt.kind in ("input", "question") else ""
        hint = "typed into the question's own 'Type something.' option" if prompt and prompt.kind == "question" and prompt.free_text else ""
        pane_id = agent.pane_id

        def send(text: str) -> str:
            refusal = self.service.answer(agent, Intent(IntentKind.TEXT, text=text), seen=seen)
            self._drafts[pane_id] = text  # until it is reported delivered
            if not refusal:
                self._replying[pane_id] = text
            return refusal

        def done(draft: str | None) -> None:
            if draft:
                self._drafts[pane_id] = draft
            else:
                self._drafts.pop(pane_id, None)

        self.app.push_screen(ReplyScreen(agent.target, pane_id, send, question=question, hint=hint, text=self._drafts.get(pane_id, "")), done)

    def reported(self, report: Report) -> None:
        """An answer's report: the reply box waiting on it hears how it went; a delivered reply's draft goes."""
        sent = self._replying.pop(report.pane_id, None)
        if report.delivered and sent is not None and self._drafts.get(report.pane_id) == sent:
            self._drafts.pop(report.pane_id)  # only the reply itself: another answer's report leaves a draft alone
        box = self.app.screen
        if isinstance(box, ReplyScreen) and box.pane_id == report.pane_id:
            box.reported(report.delivered, report.text)

    # -- input mode (i) -----------------------------------------------------------------
    def action_input_mode(self) -> None:
        """From now on the keys go to the selected agent's pane, until the leave key."""
        agent = self._target()
        if agent is None or not key_allowed("input_mode", agent):
            return
        self.action_preview_live()
        self.input_mode.enter(agent)
        preview = self.query_one(PanePreview)
        preview.add_class("-input")
        preview.can_focus = True
        preview.focus()
        self._input_shown()

    def action_leave_input(self) -> None:
        self.leave_input()

    def leave_input(self, why: str = "") -> None:
        if not self.input_mode.active:
            return
        self.input_mode.leave()
        preview = self.query_one(PanePreview)
        preview.remove_class("-input")
        preview.can_focus = False
        self.query_one(AgentTable).focus()
        self._input_shown()
        if why:
            self.notify(clean(why), severity="warning", markup=False)

    def _input_shown(self) -> None:
        """The preview's title, the prompt bar and the footer, for input mode or out of it."""
        self._refresh_prompt_bar()
        self._refresh_preview()
        self._keys_for = None
        self.refresh_bindings()

    def on_key(self, event: events.Key) -> None:
        """In input mode every key that reaches the screen is the pane's (the leave key acted before, as a priority binding)."""
        if self.input_mode.active:
            event.stop()
            event.prevent_default()
            self.input_mode.key(event)

    def on_paste(self, event: events.Paste) -> None:
        if self.input_mode.active:
            event.stop()
            event.prevent_default()
            self.input_mode.paste(event.text)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A click elsewhere (the table, the filter) ends input mode: the keys would no longer be the pane's."""
        if self.input_mode.active and not isinstance(event.widget, PanePreview):
            self.leave_input()

