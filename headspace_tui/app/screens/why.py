"""The ``e`` screen: why an agent is in its state — every source's verdict, its age, its evidence."""

from __future__ import annotations

import time

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...api.facade import ChannelReport, Explanation
from ...detect.approval import approval
from ...detect.clock import SAYS
from ...events import ANSWERED_HOW
from ...model import Agent, AgentState, Evidence
from ...shared.safe_text import clean, clean_block
from ...usage.words import usage_lines
from ..widgets.agent_table import elapsed, kind_of
from ..widgets.change_text import change_text, diff_of
from ..widgets.state_style import state_text


def unrecognised(agent: Agent, explanation: Explanation | None) -> Evidence | None:
    """The evidence of a screen the reader did not recognise, if that is what the screen says now."""
    screen = dict(explanation.verdicts).get("screen") if explanation is not None else None
    observation = screen.observation if screen is not None else agent.observation
    if observation.state is not AgentState.UNKNOWN:
        return None
    return next((e for e in observation.evidence if e.rule == "unrecognised-screen"), None)


def report_hint(agent: Agent, evidence: Evidence) -> Text:
    """What to tell the user about a screen headspace could not read, and how to report it."""
    return Text.assemble(
        ("Unrecognised screen. ", "bold"),
        f"The reader stopped at line {evidence.line}: ",
        (clean(evidence.text.strip(), 100) or "(blank)", "italic"),
        f"\nThis {kind_of(agent)} layout is new to headspace; the row shows 'unknown' until it is understood.\nTo report it, save the pane and classify it, then attach both to an issue:\n",
        (f"  tmux capture-pane -p -e -t {agent.pane_id} > pane.txt\n  headspace classify pane.txt --agent {clean(agent.family)}\n", "bold"),
    )


def version_line(agent: Agent) -> Text:
    """Which reading of its screen the agent gets: its family's words (``Family.reading``); a family this headspace does not know, said as such."""
    from ...detect.families import known_family  # when the view opens: a client's start loads no family's reader

    family = known_family(agent.family)
    if family is None:
        return Text(f"{kind_of(agent)} {clean(agent.agent_version) or '(version unknown)'}: a kind of agent this headspace has no reader for.", style="dim")
    return Text(clean(family.reading(agent.agent_version)), style="dim")


def explanation_table(explanation: Explanation, now: float, styles: dict[AgentState, Style]) -> Table:
    table = Table(expand=True, show_edge=False, pad_edge=False)
    table.add_column("source", style="bold", no_wrap=True)
    table.add_column("says", no_wrap=True)
    table.add_column("age", justify="right", no_wrap=True)
    table.add_column("conf", justify="right", no_wrap=True)
    table.add_column("evidence")
    for source, verdict in explanation.verdicts:
        obs = verdict.observation
        evidence = Text(clean_block("\n".join(str(e) for e in obs.evidence)) or "—")
        table.add_row(Text(clean(source)), state_text(obs.state, styles), f"{max(0.0, now - verdict.at):.1f}s", f"{obs.confidence:.2f}", evidence)
    return table


def since_text(agent: Agent, now: float) -> Text:
    """When the state began, who says so: the one claim the row's time counts from (detect/clock.py)."""
    began = time.strftime("%H:%M:%S", time.localtime(agent.since))
    return Text.assemble(
        (f"{agent.state.value} since {began} ({elapsed(now - agent.since)})", "bold"),
        (f", per {SAYS.get(agent.since_source, clean(agent.since_source))}", "dim"),
    )


# What each permission mode means for the user, in the words of the why screen.
MODE_WORDS = {
    "manual": "manual: it asks before each call that needs permission",
    "auto": "auto: a classifier decides each call; it blocks what it finds risky and asks only when it pauses",
    "accept-edits": "accept edits: file edits and commands in its folder run without asking",
    "plan": "plan: it plans and changes nothing until you approve the plan",
    "bypass": "BYPASS: it asks for nothing and nothing is checked",
    "dont-ask": "don't ask: what is not allowed by a rule is refused without asking",
    "build": "build (opencode's default agent): it asks as its permission config says",
}


def mode_text(agent: Agent) -> Text:
    """The agent's permission mode, what it means, and the calls its check blocked (newest last)."""
    words = MODE_WORDS.get(agent.mode, "unknown (its screen and hooks have not said)")
    out = Text.assemble(("Permission mode: ", "bold"), (words, "bold red" if agent.mode == "bypass" else ""))
    for block in agent.blocks[-10:]:
        when = time.strftime("%H:%M:%S", time.localtime(block.at)) if block.at else "--:--:--"
        this = "" if block.at >= agent.turn_since else " (an earlier turn)"
        out.append(f"\n  ⊘ {when} {clean(block.words(), 400)}{this}", style="red" if not this else "dim")
        out.append(f"  [{clean(block.source)}]", style="dim")
    return out


def approve_text(agent: Agent, key: str = "y") -> Text | None:
    """Which option the approve key takes here, and whether it asks first (``detect/approval.py``); None where it approves nothing."""
    prompt = agent.observation.prompt
    chosen = approval(prompt) if prompt is not None and prompt.kind in ("permission", "plan") else None
    if chosen is None:
        return None
    out = Text.assemble((f"{key} → {clean(chosen.describe())}", "bold"))
    if chosen.widens:
        out.append(f"\n  every way to approve here {clean(chosen.widens)}: {key} asks before it chooses this", style="bold red")
    else:
        out.append("  (approves this one request or plan; never a mode that stops asking)", style="dim")
    return out


def change_section(agent: Agent) -> Text | None:
    """The whole change the held file edit would make (the preview shows its start); None when no hook holds one."""
    diff = diff_of(agent.proposed) if agent.state is AgentState.PERMISSION else None
    if diff is None:
        return None
    return Text.assemble("\n", ("The change it would make", "bold"), (" (from the exact call Claude's hook holds)\n", "dim"), change_text(diff), "\n")


def usage_section(agent: Agent) -> Text | None:
    """Its context, tokens and estimated cost as its own files tell them; None before anything was read."""
    lines = usage_lines(agent.usage, agent.limit_reset)
    if not lines:
        return None
    out = Text()
    for label, words in lines:
        out.append(f"{label}: ", style="bold")
        out.append(clean(words, 300) + "\n", style="bold red" if label == "Rate limit" else "")
    return out


def channel_text(report: ChannelReport) -> Text:
    """The answer channel for this agent: which way y/n would go, what waits, what answered last (exact input)."""
    out = Text()
    if not report.open:
        out.append("Answer channel: closed here (y/n answer by keys).", style="dim")
    elif not report.waiting:
        out.append("Answer channel: no hook request waits for this agent (y/n answer by keys).", style="dim")
    for call, why in report.waiting:
        verdict = "y/n answer through the hook" if not why else f"not this dialog: {why}"
        out.append("Hook request: ", style="bold")
        out.append(f"{clean(call.describe(), 200)} ({verdict})\n  exact input: ")
        out.append(clean_block(call.exact_input, 2000), style="dim")
        out.append("\n")
    if report.last is not None:
        last = report.last
        out.append("\nLast answer: ", style="bold")
        out.append(f"{ANSWERED_HOW[last.channel]}: {clean(last.what, 300)}, at {time.strftime('%H:%M:%S', time.localtime(last.at))}")
        if last.tool_input:
            out.append("\n  exact input: ")
            out.append(clean_block(last.tool_input, 2000), style="dim")
    return out


class WhyScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    WhyScreen { align: center middle; }
    WhyScreen > VerticalScroll { width: 90%; height: auto; max-height: 90%; border: round $primary; padding: 1 2; background: $surface; }
    """
    BINDINGS = [Binding("escape,q,e", "dismiss", "close")]

    def __init__(self, agent: Agent, explanation: Explanation | None, now: float, styles: dict[AgentState, Style], channel: ChannelReport | None = None) -> None:
        super().__init__()
        self.channel = channel
        self.state_styles = styles  # the app's state styles (its theme)
        self.agent = agent
        self.explanation = explanation
        self.now = now

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            title = Text.assemble(("Why ", "bold"), (clean(self.agent.target), "bold"), " is ", state_text(self.agent.state, self.state_styles))
            yield Static(title)
            yield Static(since_text(self.agent, self.now))
            yield Static(version_line(self.agent))
            yield Static(mode_text(self.agent))
            approves = approve_text(self.agent)
            if approves is not None:
                yield Static(approves)
            used = usage_section(self.agent)
            if used is not None:
                yield Static(used, id="why-usage")
            change = change_section(self.agent)
            if change is not None:
                yield Static(change, id="why-change")
            stopped = unrecognised(self.agent, self.explanation)
            if stopped is not None:
                yield Static(report_hint(self.agent, stopped))
            if self.explanation is None:
                yield Static("No readings yet.", classes="dim")
            else:
                yield Static(Text(f"decision: {clean(self.explanation.decision)}\n", style="dim"))
                yield Static(explanation_table(self.explanation, self.now, self.state_styles))
            if self.channel is not None:
                yield Static(Text("\n").append_text(channel_text(self.channel)))
            yield Static("\nEsc to close.", classes="dim")
