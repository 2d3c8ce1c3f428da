"""``y`` where every way to approve also widens what the agent may do: ask first.

``detect/approval.py`` picks the option ``y`` takes; when even the best
one switches on auto mode, accepts every edit, stops asking or clears the
context, the key sends nothing until the user has read which option that
is and what it changes.  The option's own digit confirms (Enter where
its key is not a digit), never ``y``: a double-tapped ``y`` must not be
the one that switches on auto mode.  The digit then goes against the
prompt shown here (a dialog that changed meanwhile gets nothing); ``n``
or Esc sends nothing.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ...api.facade import Intent, IntentKind
from ...detect.approval import Approval, approval
from ...model import Agent, AgentState
from ...shared.safe_text import clean
from .asking import Asking


def widening_approval(agent: Agent) -> Approval | None:
    """The option ``y`` would take on ``agent``'s permission or plan, when it widens permissions (None otherwise)."""
    if agent.state not in (AgentState.PERMISSION, AgentState.PLAN) or agent.offline:
        return None
    chosen = approval(agent.observation.prompt)
    return chosen if chosen is not None and chosen.widens else None


class WidenScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    WidenScreen { align: center middle; }
    WidenScreen > Vertical { width: 80%; height: auto; border: round $error; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("n,escape,q", "answer(False)", "cancel")]

    def __init__(self, agent: Agent, chosen: Approval) -> None:
        super().__init__()
        self.agent = agent
        self.chosen = chosen
        key = chosen.option.key
        self.confirm_key = key if key.isdigit() else "enter"

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble(("Every way to approve ", "bold"), (clean(self.agent.target), "bold"), (" here changes more than this request.", "bold")))
            yield Static(Text.assemble("\ny would choose  ", (clean(self.chosen.describe()), "bold"), f"\nwhich {clean(self.chosen.widens)}."))
            yield Static(Text(f"\n{self.confirm_key} choose it · n / Esc send nothing", style="dim"))

    def on_key(self, event: events.Key) -> None:
        if event.key == self.confirm_key:
            event.stop()
            self.dismiss(True)
        elif event.key == "y":
            event.stop()
            self.app.bell()  # y does not choose a widening option: its digit does

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def ask_before_widening(screen: Screen, asking: Asking, agent: Agent) -> bool:
    """If ``y`` on ``agent`` would widen permissions, ask first (True: the question is up; the key sends nothing now)."""
    chosen = widening_approval(agent)
    if chosen is None:
        return False
    seen = agent.observation

    def done(yes: bool | None) -> None:
        if not yes:
            screen.notify(clean(f"{agent.target}: nothing sent"), markup=False)
            return
        intent = Intent(IntentKind.OPTION, option=chosen.option.key)

        def refused(refusal: str) -> None:
            if refusal:
                screen.notify(clean(f"{agent.target}: {refusal}; nothing sent"), severity="warning", markup=False)

        asking.answer(agent, intent.describe(), lambda: asking.service.answer(agent, intent, seen=seen), refused)

    screen.app.push_screen(WidenScreen(agent, chosen), done)
    return True
