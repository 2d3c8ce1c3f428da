"""How answers went, as plain data a front end is handed: one answer's report, and a pane's answer channel.

Kept apart from the answerer and the desk (which hold tmux and the hook
channel) so that the API a front end speaks (api/facade.py) names them
without loading either.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..events import Answered
from ..hooks.calls import PendingCall


@dataclass(frozen=True)
class Report:
    """How one answer went, in one line for the user."""

    pane_id: str
    text: str
    severity: str  # "information", "warning" or "error" (a front end's notification levels)
    delivered: bool
    move_on: bool = False  # an inbox selects the next agent that needs you now
    # False: the keys went (or the hook took the decision) and the pane is still
    # to show what they did; the final report follows.
    final: bool = True


@dataclass(frozen=True)
class ChannelReport:
    """The answer channel as one pane sees it: open or not, requests waiting (and why each does not fit), the last answer."""

    open: bool
    waiting: list[tuple[PendingCall, str]]
    last: Answered | None
