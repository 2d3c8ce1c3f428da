"""The summary line at the top, and what the table says when it is empty.

Pure text builders, and one widget that repaints only when its line reads
differently (a repaint sends the whole line to the terminal, over ssh too).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ...model import Agent, AgentState
from ...shared.safe_text import clean
from ...usage.words import cost_words
from .agent_table import elapsed, fit

SPENT_LABEL = "spent today"  # the agents' tokens since midnight at list prices, "est." as every cost
WAITED_LABEL = "waits today (sum)"  # the header's total of the agents' waits on you since midnight
LOCAL_PROBLEM_WIDTH = 48  # cells of the local server's problem in the summary (the empty table says it whole)


def summary_text(
    agents: Iterable[Agent],
    problem: str | None,
    waited_today: float | None,
    hosts: Sequence[tuple[str, str]] = (),
    snoozed: Container[str] = (),
    *,
    need_style: Style | str = "bold yellow",
    problem_style: Style | str = "red",
    spent_today: float | None = None,
) -> Text:
    """``headspace  7 agents · 3 need you · 2 working · waits today (sum): 4m``, and which hosts are out.

    Until the first full look (``problem`` is "starting") it says only that
    it is looking.  A problem never takes the counts' place: a remote host out of reach is
    ``· box unreachable`` after them (ssh's words are in its row, its why and
    a notice), and the local server's problem follows, cut short.
    ``snoozed``: the pane ids of agents whose wait the user snoozed; they do
    not count as needing you (``1 snoozed`` says they are there).
    The total is the sum of the waits the rows show (those closed today and
    those still open, each from the same claim: detect/clock.py), to the
    minute: a header ticking every second would be one more line sent to the
    terminal each second (tests/ui/test_repaint.py).
    ``need_style`` and ``problem_style``: the theme's colours (the main screen
    passes its permission and error states': plain ANSI yellow was 2.3:1 on
    the light theme's panel).
    """
    agents = [a for a in agents if not a.placeholder]  # a host never reached is not an agent
    if problem == "starting":
        # Before the first full look the rows are the ones read so far: counting them would
        # say "0 agents", or fewer needing you than there are.
        return Text.assemble(("headspace", "bold"), "  looking…")
    counts = _counts(agents, waited_today, snoozed, need_style)
    if spent_today:  # an estimate at list prices (service/records/usage_ledger.py); nothing priced yet: not said
        counts.append(f"  ·  {SPENT_LABEL}: {cost_words(spent_today)}")
    looking = [host for host, text in hosts if text == "starting"]  # a host still on its first look: its agents are not counted yet
    if looking:
        named = ", ".join("this machine" if host == "local" else clean(host, 40) for host in looking) if len(looking) <= 2 else f"{len(looking)} hosts"
        counts.append(f"  ·  looking at {named}…")
    hosts = [(host, text) for host, text in hosts if text != "starting"]
    if not problem:
        return counts
    out = [host for host, _ in hosts if host != "local"]
    if out:
        named = ", ".join(clean(host, 40) for host in out) if len(out) <= 2 else f"{len(out)} hosts"
        counts.append("  ·  ")
        counts.append(f"{named} unreachable", style=problem_style)
    local = [text for host, text in hosts if host == "local"] if hosts else [problem]
    for text in local:
        counts.append("  ·  ")
        counts.append_text(fit(Text(clean(text), style=problem_style), LOCAL_PROBLEM_WIDTH))
    return counts


def _counts(agents: list[Agent], waited_today: float | None, snoozed: Container[str], need_style: Style | str) -> Text:
    needing = sum(1 for a in agents if a.state.needs_you and a.pane_id not in snoozed)
    put_off = sum(1 for a in agents if a.state.needs_you and a.pane_id in snoozed)
    working = sum(1 for a in agents if a.state is AgentState.WORKING)
    # A sum over agents (two waiting 5 minutes at once are 10m), and the label says so; as
    # short as the old "waited on you today", which read as the time you were waited on.
    waited = f"  ·  {WAITED_LABEL}: {elapsed(waited_today, precise=False)}" if waited_today is not None else ""
    return Text.assemble(
        ("headspace", "bold"),
        f"  {len(agents)} agent{'s' if len(agents) != 1 else ''}  ·  ",
        (f"{needing} need{'s' if needing == 1 else ''} you", need_style),
        f" ({put_off} snoozed)" if put_off else "",
        f"  ·  {working} working{waited}",
    )


def empty_text(problem: str | None) -> Text:
    """What an empty table says: still looking, why nothing can be watched, or how to start an agent."""
    if problem == "starting":
        return Text("Looking for agents…")
    if problem:
        return Text(f"{clean(problem)}.\nStart tmux, or point headspace at a server with -L NAME / -S PATH.")
    return Text("No agents found.\nStart `claude`, `codex`, `gemini` or `opencode` in a tmux pane; it shows up here within seconds.")


class SummaryLine(Static):
    """One line that repaints only when it reads differently (``line`` is reactive: an equal line changes nothing)."""

    line: reactive[Text | None] = reactive(None, repaint=False, init=False)

    def show(self, text: Text) -> None:
        self.line = text

    def watch_line(self, text: Text | None) -> None:
        self.update(text or "")
