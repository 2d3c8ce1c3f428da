"""One Codex pane read from its screen and its title together (pure).

The screen gives every prompt; the title settles what the screen cannot.
Measured on 0.144.0: while a reply streams Codex hides its status row and,
unlike 0.169.0, writes no "Worked for …" under a finished turn, so a reply
still streaming and a finished one look the same on screen; only the
title's spinner (``⠇ work``) tells them apart.  So a title that says
working turns a screen read as idle or input into working.  The title's
"Action Required" never makes a prompt of its own (it names none); the
screen's reading stands.
"""

from __future__ import annotations

from dataclasses import replace

from ...model import AgentState, Observation
from .screen import classify_capture
from .signals import title_observation


def classify_pane(ansi: str, *, title: str = "", command: str | None = None, version: str | None = None) -> Observation:
    """The screen's reading of ``ansi``, corrected by ``title`` (``#{pane_title}``) where the screen cannot tell."""
    seen = classify_capture(ansi, command=command, version=version)
    said = title_observation(title) if title else None
    # Only where the screen cannot tell: a reply shown without a mark that the turn ended.  A fresh
    # prompt stays idle (0.169 spins its title a moment while it starts up: measured, "⠋ work").
    settled = {e.rule for e in seen.evidence} & {"nothing-since-prompt", "codex-turn-done", "codex-interrupted"}
    if said is not None and said.state is AgentState.WORKING and seen.state in (AgentState.IDLE, AgentState.INPUT) and not settled:
        return replace(seen, state=AgentState.WORKING, prompt=None, evidence=(*seen.evidence, *said.evidence), confidence=0.7)
    return seen
