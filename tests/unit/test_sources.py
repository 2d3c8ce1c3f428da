"""One ranking of sources (detect/sources.py): the fuser and the clock order every source they share alike, but for the one named exception.

Each order is read off the real object, not the table: the fuser prefers
``a`` over ``b`` when, after ``a`` said "working", an "idle" from ``b`` does
not show (it is held for the idle grace, or outweighed); the clock prefers
``a`` when it dates a wait by ``a`` although ``b`` says it began earlier.
"""

from __future__ import annotations

import itertools

from headspace_tui.detect.clock import Clock
from headspace_tui.detect.fusion import Fuser
from headspace_tui.detect.sources import DATES_LATE, Source
from headspace_tui.model import AgentState, Observation

# The sources both weigh: Claude's own word, and the transcript.
SHARED = (Source.HOOK, Source.STATUS_FILE, Source.CLAUDE_AGENTS, Source.TRANSCRIPT)
PAIRS = list(itertools.permutations(SHARED, 2))


def fuser_prefers(a: Source, b: Source) -> bool:
    fuser = Fuser(idle_grace=60.0)
    fuser.observe(Observation(AgentState.WORKING, source=a), 100.0)
    return fuser.observe(Observation(AgentState.IDLE, source=b), 101.0).state is AgentState.WORKING


def clock_prefers(a: Source, b: Source) -> bool:
    claim = Clock().update(AgentState.PERMISSION, {a: 100.0, b: 90.0}, now=120.0)
    return claim.source == a


def test_the_fuser_and_the_clock_agree_on_every_pair_but_a_late_source_against_the_status_file():
    differ = {(a, b) for a, b in PAIRS if fuser_prefers(a, b) != clock_prefers(a, b)}
    late_against_the_file = {(a, b) for a, b in PAIRS if {a, b} & DATES_LATE and {a, b} - DATES_LATE <= {Source.STATUS_FILE, Source.CLAUDE_AGENTS}}
    assert differ == late_against_the_file


def test_the_exception_is_the_hook_which_the_fuser_trusts_most_and_the_clock_dates_below_claudes_file():
    assert DATES_LATE == {Source.HOOK}
    for the_file in (Source.STATUS_FILE, Source.CLAUDE_AGENTS):
        assert fuser_prefers(Source.HOOK, the_file) and not fuser_prefers(the_file, Source.HOOK)
        assert clock_prefers(the_file, Source.HOOK) and not clock_prefers(Source.HOOK, the_file)
    # Still above everything below the file, for both.
    assert fuser_prefers(Source.HOOK, Source.TRANSCRIPT) and clock_prefers(Source.HOOK, Source.TRANSCRIPT)


def test_a_source_is_its_old_name():
    """The event log, ``headspace status --json`` and the why view know sources by these strings."""
    assert {s.value for s in Source} >= {"hook", "status-file", "claude-agents", "screen", "transcript", "process", "journal", "sight"}
    assert Source.STATUS_FILE == "status-file" and {"hook": 1}[Source.HOOK] == 1
