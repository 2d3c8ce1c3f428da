"""Who says what an agent is doing, and how far each is trusted: one enum, one ranking, one named exception.

Two rules weigh sources against each other.  The fuser (fusion.py) asks
which source to believe about *what* the agent is doing now: an idle from a
less trusted source than the one that said "working" must hold for the
idle grace.  The clock (clock.py) asks which source to believe about *when*
the state began.  Both read ``TRUST``, the one ranking:

    hook  >  status file = claude agents  >  screen  >  transcript  >  journal  >  sight, process, title, ssh

Claude's own word first (a hook event is Claude telling of a transition as
it happens; its status file and ``claude agents`` read the same file), then
what headspace reads of the pane, then what it infers or remembers.

The one exception, ``DATES_LATE``: a hook's time is when it fired, and a
hook fires late, never early (a ``Notification`` about a permission comes
seconds after the dialog is drawn), while Claude's status file dates the
state itself (``statusUpdatedAt`` is where its spinner's clock starts).  So
for *when* (``dating_trust``) a hook ranks just below the status file, and
above every source below it.  tests/unit/test_sources.py checks that the
clock and the fuser order every source they share alike but for this.

Values are the strings the sources have always been called (in the event
log, the JSON of ``headspace status``, ``Observation.source``): a
``Source`` equals its string, so either may be looked up.
"""

from __future__ import annotations

from enum import Enum


class Source(str, Enum):
    """A source of news about an agent (``Observation.source``, ``Agent.since_source``)."""

    HOOK = "hook"  # Claude's hook events (hooks/spool.py)
    STATUS_FILE = "status-file"  # Claude's ~/.claude/sessions/<pid>.json
    CLAUDE_AGENTS = "claude-agents"  # ``claude agents --json``, reading the same files
    SCREEN = "screen"  # a capture of the pane, read by its family's reader
    TITLE = "title"  # the pane's title (Codex's spinner and "action required")
    TRANSCRIPT = "transcript"  # Claude's transcript (the line that began a turn or a wait)
    PROCESS = "process"  # the process tree
    JOURNAL = "journal"  # headspace, in an earlier run (the event log)
    SIGHT = "sight"  # headspace's own sight, now
    SSH = "ssh"  # a remote host not reached

    def __str__(self) -> str:
        return self.value  # its old name also in text and f-strings (a bare (str, Enum) would print "Source.HOOK")


# The one ranking: higher is more trusted; a source not named here is the least.
TRUST: dict[str, int] = {
    Source.HOOK: 5,
    Source.STATUS_FILE: 4,
    Source.CLAUDE_AGENTS: 4,
    Source.SCREEN: 3,
    Source.TRANSCRIPT: 2,
    Source.JOURNAL: 1,
    Source.SIGHT: 0,
    Source.PROCESS: 0,
    Source.TITLE: 0,
    Source.SSH: 0,
}
LEAST = 0

# Claude's own word on its state: the claims the fuser weighs against the screen, and that can date a state.
CLAUDES_WORD = frozenset({Source.HOOK, Source.STATUS_FILE, Source.CLAUDE_AGENTS})

# The named exception: sources whose time is late for dating a state (see the module's docstring).
DATES_LATE = frozenset({Source.HOOK})


def trust(source: str) -> int:
    """How far ``source`` is believed about what the agent is doing (``TRUST``)."""
    return TRUST.get(source, LEAST)


def dating_trust(source: str) -> float:
    """How far ``source`` is believed about when a state began: ``trust``, but a late source ranks just below the status file."""
    if source in DATES_LATE:
        return TRUST[Source.STATUS_FILE] - 0.5
    return trust(source)
