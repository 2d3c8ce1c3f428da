"""Gemini CLI's own cheap signal: the terminal title it sets by state.

Measured on 0.53.0 and 0.61.0 (``ui.dynamicWindowTitle``, on by default):
it writes ``ESC ] 0 ; <glyph>  <words> (<folder>) BEL``, padded with spaces
to 80 characters, so ``#{pane_title}`` (in every tmux listing, no extra
cost) reads:

- ``◇  Ready (work)``: at its prompt, **and** under its folder-trust dialog,
  after an API error it gave up on, and after a reply that asks you
  something: "not busy", not "nothing for you to do";
- ``✦  Working… (work)``: a turn runs (with ``ui.showStatusInTitle`` the
  words are the model's current thought, the glyph stays ``✦``);
- ``✋  Action Required (work)``: a tool approval or an ``ask_user``
  question is waiting.

On exit (``/quit``) it clears the title (``''``).  It follows the screen
within ~0.1 s (timed after an approval on 0.61.0); under load it was seen
still saying "Action Required" while the approved command already ran.  So the title tells
working from waiting-for-you at no cost, and can trigger a read of the
screen when it changes; only the screen says which kind of wait, and
whether a "Ready" pane holds an error, a question in plain text or a
start-up dialog.  The observation for "Ready" is therefore a low-confidence
``idle`` that a screen read must confirm.
"""

from __future__ import annotations

from ...model import AgentState, Evidence, Observation

READY = "◇"
WORKING = "✦"
ACTION = "✋"


def title_observation(title: str) -> Observation | None:
    """What Gemini CLI's pane title says of its state; None for a title it did not set."""
    text = title.strip()
    if not text:
        return None
    glyph = text[0]
    evidence = (Evidence(f"title-{glyph}", -1, text),)
    if glyph == WORKING:
        return Observation(AgentState.WORKING, evidence=evidence, source="title", confidence=0.7)
    if glyph == ACTION and "action required" in text.lower():
        return Observation(AgentState.PERMISSION, evidence=evidence, source="title", confidence=0.5)
    if glyph == READY and text[1:].lstrip().lower().startswith("ready"):
        return Observation(AgentState.IDLE, evidence=evidence, source="title", confidence=0.2)
    return None
