"""The ``e`` screen: why an agent is in its state — every source's verdict, its age, its evidence."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...detect.fusion import Explanation
from ...model import Agent
from ..widgets.state_style import state_text


def explanation_table(explanation: Explanation, now: float) -> Table:
    table = Table(expand=True, show_edge=False, pad_edge=False)
    table.add_column("source", style="bold", no_wrap=True)
    table.add_column("says", no_wrap=True)
    table.add_column("age", justify="right", no_wrap=True)
    table.add_column("conf", justify="right", no_wrap=True)
    table.add_column("evidence")
    for source, verdict in explanation.verdicts:
        obs = verdict.observation
        evidence = Text("\n".join(str(e) for e in obs.evidence) or "—")
        table.add_row(source, state_text(obs.state), f"{max(0.0, now - verdict.at):.1f}s", f"{obs.confidence:.2f}", evidence)
    return table


class WhyScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    WhyScreen { align: center middle; }
    WhyScreen > VerticalScroll { width: 90%; height: auto; max-height: 90%; border: round $primary; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("escape,q,e", "dismiss", "close")]

    def __init__(self, agent: Agent, explanation: Explanation | None, now: float) -> None:
        super().__init__()
        self.agent = agent
        self.explanation = explanation
        self.now = now

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            title = Text.assemble(("Why ", "bold"), (self.agent.target, "bold"), " is ", state_text(self.agent.state))
            yield Static(title)
            if self.explanation is None:
                yield Static("No readings yet.", classes="dim")
            else:
                yield Static(Text(f"decision: {self.explanation.decision}\n", style="dim"))
                yield Static(explanation_table(self.explanation, self.now))
            yield Static("\nEsc to close.", classes="dim")
