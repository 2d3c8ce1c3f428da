"""What the main screen shows of the selected agent: its pane in the preview, its prompt in the prompt bar (with the change a file edit would make), its keys in the footer.

A part the main screen holds and calls down into with the selected agent;
in input mode (``input_mode.py``) the preview's title and the prompt bar say
where the keys go.
"""

from __future__ import annotations

from textual.screen import Screen

from ...api.facade import Facade, live_keys
from ...model import Agent
from ..input_mode import LEAVE_SHOWN, InputMode
from ..widgets.change_box import ChangeBox
from ..widgets.preview import PanePreview, PromptBar

WAITING = "waiting for the service for this pane's screen…"


class PaneView:
    """The preview, the prompt bar and the footer's keys, for the agent the screen says is selected."""

    def __init__(self, screen: Screen, service: Facade, keys: dict[str, str], input_mode: InputMode) -> None:
        self.screen = screen
        self.service = service
        self.keys = keys  # the keymap, for the prompt bar's key names
        self.input_mode = input_mode
        self._keys_for: tuple[str | None, frozenset[str]] | None = None  # the pane and agent keys the footer was asked for

    def selected(self, agent: Agent | None) -> None:
        """Another agent may be selected: its pane live in the preview (not another's history), its prompt, its keys."""
        preview = self.screen.query_one(PanePreview)
        if preview.history_of is not None and (agent is None or agent.pane_id != preview.history_of):
            preview.live()  # another agent: its pane as it is now
        self.service.focus(agent.pane_id if agent else None)
        self.prompt_bar(agent)
        self.preview(agent)
        self.footer_keys(agent)

    def footer_keys(self, agent: Agent | None) -> None:
        """The footer offers the keys the selected agent allows: ask for them again when those may differ.

        The selection is read when the footer rebuilds (``check_action``), and
        ``KeysFooter`` rebuilds before the next frame, so the keys are the
        selected agent's in the frame that shows its preview.  (A rebuild
        restyles every key; on each update it cost about 2% of a core at 50
        busy agents, hence only on a change.)
        """
        # Per pane too: Textual also rebuilds the footer on its own occasions (focus,
        # a screen closing), so a set of keys equal to the last one asked for may
        # not be what the footer shows after another agent was selected in between.
        live = (agent.pane_id if agent is not None else None, live_keys(agent))
        if live != self._keys_for:
            self._keys_for = live
            self.screen.refresh_bindings()

    def input_shown(self, agent: Agent | None) -> None:
        """The preview's title, the prompt bar and the footer, for input mode or out of it."""
        self.prompt_bar(agent)
        self.preview(agent)
        self._keys_for = None
        self.screen.refresh_bindings()

    def prompt_bar(self, agent: Agent | None) -> None:
        """The prompt bar, and above it the change the permission on screen would make (when a hook holds a file edit)."""
        bar = self.screen.query_one(PromptBar)
        if self.input_mode.active:
            bar.show_input(self.input_mode.target, self.input_mode.pane_id or "", LEAVE_SHOWN)
        else:
            bar.show_agent(agent, self.keys)
        self.screen.query_one(ChangeBox).show_agent(agent)

    def preview(self, agent: Agent | None) -> None:
        preview = self.screen.query_one(PanePreview)
        if agent is None:
            preview.clear("No agent selected.")
            return
        title = self.input_mode.title() if self.input_mode.pane_id == agent.pane_id else f"{agent.target} ({agent.pane_id})"
        screen = self.service.screen(agent.pane_id)
        if screen is None:  # not read yet (a resident service's client: asked when focused, drawn when it comes)
            preview.waiting(title, WAITING)
            return
        preview.show(title, screen.ansi, screen.width, screen.height)
