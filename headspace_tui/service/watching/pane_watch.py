"""Everything the monitor keeps about one watched pane, in one record.

The monitor used to keep a dozen dictionaries keyed by pane id that had to
be kept in step (forgetting a pane cleared ten of them).  A ``PaneWatch``
holds the pane's facts, its last capture, its fuser, its transcript tail
and its read timing; forgetting a pane is dropping its record.

``agent_key`` names an agent for history: ``%1`` exists on every tmux
server and is reused by the next pane, so histories, timelines and totals
are keyed by host, server, pane *and* the process that runs in it (its pid
and start time, which together name a process for good).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ...detect.clock import remembered_claim
from ...detect.family import Family
from ...detect.fusion import Fuser
from ...detect.sources import Source
from ...detect.turns import Turn
from ...model import AgentState
from ...tmux.server import PaneRecord
from ..records.usage_tally import UsageTally
from .schedule import PaneTiming


def agent_key(host: str, server: str, pane_id: str, pid: int, started: str) -> str:
    """The identity of the agent in ``pane_id``: stable while its process lives, new with the next one."""
    return f"{host}|{server}|{pane_id}|{pid}@{started}"


class Tail(Protocol):
    """A transcript followed from where it was last read (here: ``TranscriptTail``; on a remote host, there)."""

    @property
    def opened(self) -> bool: ...

    def read_new(self) -> list[Turn]: ...


@dataclass
class PaneWatch:
    record: PaneRecord
    key: str
    agent_pid: int | None = None  # the agent's process (any family); None once it has gone
    capture: str | None = None
    # The agent's family (kept after it exits: its reader knows its shell is
    # back), and a non-Claude agent's version (Claude's comes from its facts).
    family: Family | None = None
    version: str = ""
    mode: str = ""  # the permission mode its command line sets ("" none): the row's until its screen or hooks say
    fuser: Fuser = field(default_factory=Fuser)
    tail: Tail | None = None
    last_turn_at: float = 0.0  # the newest line read from ``tail`` (a conversation switched to that has older ones was resumed)
    switched_at: float = 0.0  # when its conversation changed, until the new one's first read says how (cleared or resumed)
    calls: dict[str, tuple[str, str]] = field(default_factory=dict)  # its transcript's recent tool calls: id -> (tool, what it names)
    usage: UsageTally = field(default_factory=UsageTally)  # its transcript's tokens, folded as they are read, and whose conversation ``tail`` follows
    timing: PaneTiming = field(default_factory=PaneTiming)
    # What the transcript says of the present (TranscriptFollower): when the
    # last typed prompt was written (a turn's start), and when Claude last
    # wrote a reply line, while nothing came after it (a wait's start).
    prompted_at: float = 0.0
    replied_at: float = 0.0
    typed_at: float = 0.0  # the last prompt the user typed (not an interrupt's line): a turn began, for its blocked calls
    # When to read the pane again after its last state change (TRANSCRIPT_LOOKS), earliest first.
    transcript_looks: list[float] = field(default_factory=list)
    records_read: float = 0.0  # when its CLI's own session record was last read (a family without a transcript here)
    # The journal's last word on this agent from an earlier run: (state, since); None until asked.
    remembered: tuple[str, float] | None = None

    def claims(self, state: AgentState, remember: Callable[[str], tuple[str, float] | None] | None) -> dict[str, float]:
        """What each source says of when ``state`` began, for the one clock (detect/clock.py) to weigh.

        Claude's own claims that agree with the state (status file, agent
        list, hook); the transcript (the prompt that began a turn, the reply
        line a wait followed); and the journal (``remember``: when an earlier
        run of headspace saw this agent enter the same state: a restart
        keeps it), asked once.
        """
        claims = self.fuser.claims(state)
        if state is AgentState.WORKING and self.prompted_at:
            claims[Source.TRANSCRIPT] = self.prompted_at
        elif state is not AgentState.WORKING and self.replied_at:
            claims[Source.TRANSCRIPT] = self.replied_at
        if self.remembered is None:
            found = remember(self.key) if remember is not None else None
            self.remembered = found or ("", 0.0)
        return claims | remembered_claim(self.remembered, state)
