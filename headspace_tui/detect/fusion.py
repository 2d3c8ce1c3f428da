"""Fusing Claude's own status file with what the screen shows.

The status file (``~/.claude/sessions/<pid>.json``) changes the moment Claude
starts or stops a turn, so it decides busy / waiting / idle quickly.  The
screen supplies what the file cannot: which tool, which options, the question.
And the screen alone knows that a reply which ends by asking something is
``input``: Claude's file calls that plain idle.

When there is no file (older Claude, another config dir), the screen decides
alone, which the corpus tests show is enough.
"""

from __future__ import annotations

from dataclasses import replace

from ..model import AgentState, Observation

# States only the screen can show in detail; when it shows one, it wins.
SCREEN_DETAIL = frozenset(
    {AgentState.PERMISSION, AgentState.QUESTION, AgentState.PLAN, AgentState.EXITED, AgentState.ERROR, AgentState.INPUT}
)


def fuse(screen: Observation, status: Observation | None) -> Observation:
    """One observation from the screen's and the status file's, with both as evidence."""
    if status is None:
        return screen
    evidence = screen.evidence + status.evidence
    if screen.state in SCREEN_DETAIL:
        return replace(screen, evidence=evidence, confidence=max(screen.confidence, 0.9))
    if screen.state is AgentState.STARTING and screen.prompt is not None:
        return replace(screen, evidence=evidence)  # a start-up dialog on screen
    if status.state is AgentState.WORKING:
        return replace(screen, state=AgentState.WORKING, prompt=None, evidence=evidence, source="status-file", confidence=0.9)
    if status.state.needs_you:
        # The file says Claude waits on the user but the screen has not drawn
        # the dialog yet (or was read a moment early): trust the file, without details.
        return replace(status, evidence=evidence)
    if status.state is AgentState.IDLE and screen.state in (AgentState.WORKING, AgentState.UNKNOWN, AgentState.STARTING):
        # The screen can lag a redraw; the file said idle since.
        return replace(status, evidence=evidence)
    return replace(screen, evidence=evidence)
