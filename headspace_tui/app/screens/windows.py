"""The main screen's windows onto one agent (why, timeline), the help, and the jump to an agent's pane.

A part the main screen holds and calls down into, with the agent the key
acts on: it asks the service and opens the window over the screen.
"""

from __future__ import annotations

from pathlib import Path

from rich.style import Style
from textual.screen import Screen

from ...model import Agent, AgentState
from ...service.facade import Service, ServiceError
from ...shared.config import default_path as default_config_path
from ...shared.safe_text import clean
from .help import HelpScreen, help_rows
from .timeline import TimelineScreen
from .why import WhyScreen


class Windows:
    """``e`` (why), ``t`` (timeline), ``?`` (help) and Enter (jump), over ``screen``."""

    def __init__(self, screen: Screen, service: Service, config_path: Path | None) -> None:
        self.screen = screen
        self.service = service
        self.config_path = config_path  # where the user's settings live (said in the help)

    def why(self, agent: Agent, now: float, styles: dict[AgentState, Style]) -> None:
        explanation, channel = self.service.why(agent, now)
        self.screen.app.push_screen(WhyScreen(agent, explanation, now, styles, channel))

    def timeline(self, agent: Agent, styles: dict[AgentState, Style]) -> None:
        self.screen.app.push_screen(TimelineScreen(agent, self.service.timeline(agent), styles))

    def help(self) -> None:
        self.screen.app.push_screen(HelpScreen(help_rows(self.screen), str(self.config_path or default_config_path())))

    def jump(self, agent: Agent) -> None:
        """Move the user's own tmux client to the agent; outside tmux, end and print how to attach."""
        if agent.placeholder:
            return
        try:
            jump = self.service.jump(agent)
        except ServiceError as exc:
            self.screen.notify(clean(str(exc)), severity="error", markup=False)
            return
        if jump.notice:
            self.screen.notify(clean(jump.notice), severity="warning", markup=False)
        if jump.end:
            self.screen.app.exit(jump.exit_with or None)
