"""The main screen's windows onto one agent (why, timeline), the help, and the jump to an agent's pane.

A part the main screen holds and calls down into, with the agent the key
acts on: it asks the service and opens the window over the screen.
"""

from __future__ import annotations

from pathlib import Path

from rich.style import Style
from textual.screen import Screen

from ...api.facade import ChannelReport, Explanation, Facade, Jump, ServiceError
from ...model import Agent, AgentState
from ...shared.config import default_path as default_config_path
from ...shared.safe_text import clean
from .asking import Asking
from .help import HelpScreen, help_rows
from .spending import DAYS, SpendingScreen
from .timeline import TimelineScreen
from .why import WhyScreen


class Windows:
    """``e`` (why), ``t`` (timeline), ``?`` (help), Enter (jump) and the spending by day, over ``screen``."""

    def __init__(self, screen: Screen, service: Facade, config_path: Path | None, asking: Asking) -> None:
        self.screen = screen
        self.service = service
        self.asking = asking  # the calls that may wait on the service: off the UI loop
        self.config_path = config_path  # where the user's settings live (said in the help)
        self._help: HelpScreen | None = None  # kept between openings (installed on the app)

    def why(self, agent: Agent, now: float, styles: dict[AgentState, Style]) -> None:
        def answered(why: tuple[Explanation | None, ChannelReport | None]) -> None:
            self.screen.app.push_screen(WhyScreen(agent, why[0], now, styles, why[1]))

        self.asking.ask(f"why {clean(agent.target)}", lambda: self.service.why(agent, now), answered)

    def timeline(self, agent: Agent, styles: dict[AgentState, Style]) -> None:
        def answered(events: list) -> None:
            self.screen.app.push_screen(TimelineScreen(agent, events, styles))

        self.asking.ask(f"{clean(agent.target)}'s timeline", lambda: self.service.timeline(agent), answered)

    def spending(self, now: float) -> None:
        """The palette's "Spending by day": each agent's tokens and cost per day, earlier runs included."""

        def answered(found: tuple | None) -> None:
            self.screen.app.push_screen(SpendingScreen(found[1] if found else None))

        self.asking.ask("spending by day", lambda: self.service.spent(now, DAYS), answered)

    def help(self) -> None:
        """``?``: the keys, on a screen built once and kept between openings (built again when the keys or the settings' path change).

        Opening it is then a repaint, not a build: composing and styling its
        widgets each time was a good part of what ``?`` cost, and under load
        the key waited for it.
        """
        app = self.screen.app
        rows, path = tuple(help_rows(self.screen)), str(self.config_path or default_config_path())
        if self._help is None or self._help.rows != rows or self._help.config_path != path:
            if self._help is not None:
                app.uninstall_screen(self._help)
            self._help = HelpScreen(list(rows), path)
            app.install_screen(self._help, name=f"help-{id(self)}")
        app.push_screen(self._help)

    def jump(self, agent: Agent) -> None:
        """Move the user's own tmux client to the agent; outside tmux, end and print how to attach."""
        if agent.placeholder:
            return

        def jump() -> Jump | str:
            try:
                return self.service.jump(agent)
            except ServiceError as exc:
                return str(exc)

        def jumped(jump: Jump | str) -> None:
            if isinstance(jump, str):
                self.screen.notify(clean(jump), severity="error", markup=False)
                return
            if jump.notice:
                self.screen.notify(clean(jump.notice), severity="warning", markup=False)
            if jump.end:
                self.screen.app.end_after_jump(jump.exit_with or None)  # type: ignore[attr-defined]  # HeadspaceApp's

        self.asking.ask(f"the jump to {clean(agent.target)}", jump, jumped)
