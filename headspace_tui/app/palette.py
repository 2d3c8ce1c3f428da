"""The command palette (Ctrl+P): every action, and every agent by name.

``AgentCommands`` offers "jump to <agent>" and "select <agent>" for each
row (a new provider is made each time the palette opens, so it lists the
agents as they are now); the app's own actions come from
``HeadspaceApp.get_system_commands``.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ..shared.safe_text import clean
from .widgets.agent_table import folder_of


class AgentCommands(Provider):
    """An agent by its target, folder or name: select it, or jump to its pane."""

    def _commands(self) -> list[tuple[str, object, str]]:
        app = self.app
        table = app.table  # type: ignore[attr-defined]
        commands: list[tuple[str, object, str]] = []
        for pane_id in table.order:
            agent = table.agents[pane_id]
            label = clean(f"{agent.target}  {folder_of(agent)}  ({agent.state.value})", 200)
            commands.append((f"jump to {label}", partial(app.jump_to, pane_id), "switch your tmux client to this agent's pane"))  # type: ignore[attr-defined]
            commands.append((f"select {label}", partial(table.select, pane_id), "select this agent in the table"))
        return commands

    async def discover(self) -> Hits:
        for title, command, help_text in self._commands():
            if title.startswith("jump to"):
                yield DiscoveryHit(title, command, help=help_text)  # type: ignore[arg-type]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, command, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), command, help=help_text)  # type: ignore[arg-type]
