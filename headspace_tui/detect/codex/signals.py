"""Codex CLI's own machine-readable signals: its OSC 7501 state and its pane title (pure).

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
  are needed: the screen decides.
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

# Raw bytes (ESC … ESC \ or BEL) and tmux control mode's escaped form (\033 … \033\134 or \007).
_OSC_7501 = re.compile(rb"(?:\x1b|\\033)\]7501;(?P<body>[^\x07\x1b\\]{1,200})(?:\x1b\\|\x07|\\033\\134|\\007)")
_STATES = {
    "idle": AgentState.IDLE,
    "done": AgentState.IDLE,  # the turn ended with a reply; whether it asks you something only the screen tells
    "working": AgentState.WORKING,
    "blocked": AgentState.PERMISSION,
    "error": AgentState.ERROR,
}
_SPINNER = re.compile(r"^[\u2800-\u28ff] ")
_ACTION_REQUIRED = re.compile(r"^\[ [!.] \] Action Required\b")


def output_states(data: bytes) -> list[dict[str, str]]:
    """Every OSC 7501 report in ``data``, in order, as its fields (``{"state": "blocked", "app": "codex", "kind": "permission"}``)."""
    if b"7501;" not in data:
        return []
    found = []
    for match in _OSC_7501.finditer(data):
        fields: dict[str, str] = {}
        for part in match.group("body").decode("utf-8", "replace").split(":"):
            key, sep, value = part.partition("=")
            if sep:
                fields[key.strip()] = value.strip()
        if fields.get("app", "codex") == "codex" and "state" in fields:
            found.append(fields)
    return found


def output_state(data: bytes) -> str | None:
    """The last state Codex reported in this output (``idle``, ``working``, ``blocked``, ``done``, ``error``), or None."""
    states = output_states(data)
    return states[-1]["state"] if states else None


def output_observation(data: bytes) -> Observation | None:
    """What the last OSC 7501 report in ``data`` says, as an observation (no prompt: the screen has that)."""
    states = output_states(data)
    if not states:
        return None
    fields = states[-1]
    state = _STATES.get(fields["state"])
    if state is None:
        return None
    if state is AgentState.PERMISSION and fields.get("kind", "permission") != "permission":
        state = AgentState.QUESTION
    said = ":".join(f"{k}={v}" for k, v in fields.items())
    return Observation(state, evidence=(Evidence("codex-osc-7501", -1, said),), source="output", confidence=0.8)


def title_observation(title: str) -> Observation | None:
    """What Codex's pane title says: a spinner (working), "Action Required" (an approval waits), else nothing sure."""
    if _ACTION_REQUIRED.match(title):
        return Observation(AgentState.PERMISSION, evidence=(Evidence("codex-title-action-required", -1, title),), source="title", confidence=0.6)
    if _SPINNER.match(title):
        return Observation(AgentState.WORKING, evidence=(Evidence("codex-title-spinner", -1, title),), source="title", confidence=0.6)
    return None
