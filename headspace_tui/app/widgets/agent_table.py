"""The agent table: one row per agent, the ones that need you on top.

Rows are keyed by pane id, so updates land in place (``update_cell``) and the
cursor stays on the agent the user selected even when rows re-order.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.widgets import DataTable

from ...model import Agent, AgentState
from ...safe_text import clean, cleaned
from ...scan import sort_key
from .state_style import state_text

COLUMNS = (("agent", "Agent"), ("state", "State"), ("time", "Time"), ("waiting", "Waiting for"))


def waiting_for(agent: Agent) -> Text:
    """What the agent waits for, in a few words: tool and command, the question, the error.

    Everything here comes from Claude's screen, hooks or files: cleaned of
    control characters (``Text`` is never read as markup).
    """
    return cleaned(_waiting_for(agent))


def _waiting_for(agent: Agent) -> Text:
    obs = agent.observation
    prompt = obs.prompt
    if agent.delivery:
        return Text(agent.delivery, style="bold red" if "not" in agent.delivery else "dim")
    if prompt is not None and prompt.kind == "permission":
        return Text(f"{prompt.tool}: {prompt.detail}" if prompt.detail else prompt.tool or prompt.title)
    if prompt is not None and prompt.kind in ("question", "input"):
        suffix = f" ({prompt.question_index}/{prompt.question_count})" if prompt.question_count > 1 else ""
        return Text(prompt.title + suffix)
    if prompt is not None and prompt.kind == "plan":
        return Text("approve the plan")
    if prompt is not None and prompt.kind == "menu":
        return Text(f"menu: {prompt.title}" if prompt.title else "a menu waits for a choice")
    if prompt is not None and prompt.kind == "starting":
        return Text(prompt.title)
    if obs.state is AgentState.ERROR:
        return Text(obs.error + (" (retrying)" if obs.retrying else ""), style="red")
    if obs.state is AgentState.EXITED and obs.exit_status is not None:
        return Text(f"exit status {obs.exit_status}", style="dim")
    if obs.state is AgentState.UNKNOWN and any(e.rule == "unrecognised-screen" for e in obs.evidence):
        return Text("unrecognised screen: press e", style="dim")
    if agent.outcome:  # nothing to wait for: show what the last turn achieved
        failed = agent.outcome.startswith(("tests failed", "error", "compile error", "runtime error", "test error", "permission error", "command error"))
        return Text(agent.outcome, style="red" if failed else "dim green")
    return Text("")


def elapsed(seconds: float, *, precise: bool = True) -> str:
    """How long, to the second when ``precise`` (an agent waiting on you), else to the minute.

    An idle or working agent's seconds matter to nobody, and not repainting
    them every second keeps an idle table idle.
    """
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s" if precise else "<1m"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s" if precise else f"{seconds // 60}m"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _plain(value) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def agent_label(agent: Agent) -> Text:
    label = Text(clean(agent.target), style="bold")
    where = agent.name or agent.cwd
    if where:
        label.append(f"  {clean(where)}", style="dim")
    return label


class AgentTable(DataTable):
    """Agents, ordered by who needs you; updates in place."""

    DEFAULT_CSS = """
    AgentTable { height: 1fr; }
    """

    def __init__(self, *, clock: Callable[[], float] = time.time, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self.clock = clock
        self.agents: dict[str, Agent] = {}
        self.filter_text = ""
        self._order: list[str] = []
        self._cells: dict[str, tuple] = {}  # what each row shows now

    def on_mount(self) -> None:
        for key, label in COLUMNS:
            self.add_column(label, key=key)

    @property
    def selected_pane_id(self) -> str | None:
        if not self._order or self.cursor_row < 0 or self.cursor_row >= len(self._order):
            return None
        return self._order[self.cursor_row]

    def _visible(self, agent: Agent) -> bool:
        if not self.filter_text:
            return True
        needle = self.filter_text.lower()
        haystack = " ".join([agent.target, agent.cwd, agent.name, agent.state.value, waiting_for(agent).plain]).lower()
        return needle in haystack

    def upsert(self, agent: Agent) -> None:
        self.agents[agent.pane_id] = agent
        self._sync()

    def remove_agent(self, pane_id: str) -> None:
        self.agents.pop(pane_id, None)
        self._sync()

    def set_filter(self, text: str) -> None:
        self.filter_text = text.strip()
        self._sync()

    @staticmethod
    def _elapsed(agent: Agent, now: float) -> str:
        return elapsed(now - agent.since, precise=agent.state.needs_you)

    def _sync(self) -> None:
        """Bring rows in line with ``agents`` without rebuilding the table.

        New rows are added, gone ones removed, changed cells updated, and the
        order fixed with one ``sort`` (a re-index, not a redraw of every row);
        the cursor follows the agent it was on.
        """
        now = self.clock()
        selected = self.selected_pane_id
        visible = {pane_id for pane_id, agent in self.agents.items() if self._visible(agent)}
        for pane_id in [p for p in self._cells if p not in visible]:
            self.remove_row(pane_id)
            del self._cells[pane_id]
        for pane_id in visible:
            cells = self._cells_for(self.agents[pane_id], now)
            old = self._cells.get(pane_id)
            if old is None:
                self.add_row(*cells, key=pane_id)
            else:
                for (column, _), value, before in zip(COLUMNS, cells, old, strict=True):
                    if _plain(value) != _plain(before) or getattr(value, "style", None) != getattr(before, "style", None):
                        self.update_cell(pane_id, column, value)
            self._cells[pane_id] = cells
        order = [a.pane_id for a in sorted((self.agents[p] for p in visible), key=sort_key)]
        if order != self._order:
            rank = {self._cells[p][0].plain: i for i, p in enumerate(order)}
            self.sort("agent", key=lambda label: rank.get(label.plain, len(rank)))
            self._order = order
            if selected in order:
                self.move_cursor(row=order.index(selected), animate=False)

    def _cells_for(self, agent: Agent, now: float) -> tuple:
        return (agent_label(agent), state_text(agent.state), self._elapsed(agent, now), waiting_for(agent))

    def tick(self) -> None:
        """Advance the time column once a second (only cells whose text changes)."""
        now = self.clock()
        for pane_id in self._order:
            text = self._elapsed(self.agents[pane_id], now)
            cells = self._cells.get(pane_id)
            if cells is not None and cells[2] != text:
                self._cells[pane_id] = (*cells[:2], text, *cells[3:])
                self.update_cell(pane_id, "time", text)
