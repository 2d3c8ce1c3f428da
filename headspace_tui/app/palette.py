"""The command palette (Ctrl+P): every action, every agent by name, and the themes.

``AgentCommands`` offers "jump to <agent>" and "select <agent>" for each
row (a new provider is made each time the palette opens, so it lists the
agents as they are now); the app's own actions come from
``HeadspaceApp.get_system_commands``.  ``ThemeCommands`` is the list the
palette's "Theme" opens: headspace's themes (shipped and the user's) only,
the one in use marked, instead of Textual's twenty mixed in with ours.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from ..shared.safe_text import clean
from .widgets.agent_table import folder_of

CURRENT = "  ● in use"  # after the name of the theme in use, in the palette's theme list


def theme_entries(own: dict[str, str], current: str) -> list[tuple[str, str, str]]:
    """(title, theme, help) for each of headspace's themes, in order, the one in use marked.

    A theme in use that is not headspace's (a Textual one named in the
    config) is listed too, last, so the list always says what is in use.
    The help (a file's path) is escaped: the palette reads help as markup.
    """
    names = list(own) + ([current] if current and current not in own else [])
    return [(f"{clean(name, 80)}{CURRENT if name == current else ''}", name, escape(clean(own.get(name, "a Textual theme, named in the config"), 300))) for name in names]


class ThemeCommands(Provider):
    """headspace's themes, the one in use marked: choosing one applies it."""

    def _entries(self) -> list[tuple[str, object, str]]:
        app = self.app
        own = app.own_themes  # type: ignore[attr-defined]
        return [(title, partial(setattr, app, "theme", name), help_text) for title, name, help_text in theme_entries(own, app.theme)]

    async def discover(self) -> Hits:
        for title, command, help_text in self._entries():
            yield DiscoveryHit(title, command, help=help_text)  # type: ignore[arg-type]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, command, help_text in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), command, text=title, help=help_text)  # type: ignore[arg-type]


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
