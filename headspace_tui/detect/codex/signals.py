"""Codex CLI's own machine-readable signals, as measured; the title is the one read (pure).

Measured on 0.169.0 with a ``tmux -C`` client on the pane (``%output``):

* **OSC 7501.**  Codex writes ``ESC ] 7501 ; state=<state>:app=codex ESC \\``
  (and ``…:kind=permission`` when blocked) into its output whenever its
  state changes: ``idle`` once at start, ``working`` when a turn starts,
  ``blocked`` (``kind=permission``) when an approval dialog opens, ``done``
  when a turn ends with a reply, ``error`` when it ends on an error it gave
  up on.  tmux does not draw it; control mode's ``%output`` carries it (with
  ESC as ``\\033`` and ``\\`` as ``\\134``), so it costs nothing to read.
  0.144.0 writes none: its absence says nothing.  A Plan-mode question
  (``request_user_input``) reports nothing either: measured, ``working``
  stays the last report for the whole time the question waits (the title
  does say "Action Required"), so ``working`` here never rules out that you
  are needed: the screen decides.  So it is not read (it adds nothing the
  screen misses).
* **The title** (``ESC ] 0 ; … BEL``, tmux's ``#{pane_title}``): the folder
  name (``work``), ``<thread title> | work`` once the thread is named, a
  braille spinner in front while a turn runs (``⠹ Scripted task | work``,
  redrawn about 10 times a second), and ``[ ! ] Action Required | …``
  blinking with ``[ . ] Action Required | …`` while an approval waits.
  Both versions set it, for approvals and Plan-mode questions alike.  The
  title says a prompt waits but not which: the screen reader gives the
  prompt; the title is only a hint.
"""

from __future__ import annotations

import re

from ...model import AgentState, Evidence, Observation
from ..sources import Source

_SPINNER = re.compile(r"^[\u2800-\u28ff] ")
_ACTION_REQUIRED = re.compile(r"^\[ [!.] \] Action Required\b")


def title_observation(title: str) -> Observation | None:
    """What Codex's pane title says: a spinner (working), "Action Required" (an approval waits), else nothing sure."""
    if _ACTION_REQUIRED.match(title):
        return Observation(AgentState.PERMISSION, evidence=(Evidence("codex-title-action-required", -1, title),), source=Source.TITLE, confidence=0.6)
    if _SPINNER.match(title):
        return Observation(AgentState.WORKING, evidence=(Evidence("codex-title-spinner", -1, title),), source=Source.TITLE, confidence=0.6)
    return None
