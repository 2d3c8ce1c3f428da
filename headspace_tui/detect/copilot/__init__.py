"""GitHub Copilot CLI (npm ``@github/copilot``), as headspace finds, reads and answers it.

Measured on 1.0.102 (npm install, node 20; bring-your-own-model settings
need no GitHub sign-in):

- **Process tree** (``process.py``): bash → ``node …/.bin/copilot`` (the
  loader, the agent) → the native binary of ``@github/copilot-linux-x64``;
  the version from the package's ``package.json``.
- **Screen** (``screen.py``, with the release's words in ``words/``): full
  screen on the alternate screen; the input box at the bottom with its
  footer ("Interactive · Manual Approval", "◉ Working · esc esc interrupt"
  while a turn runs), the timeline above (``❯`` prompts, ``●`` replies,
  ``✗`` errors), approvals in a rounded box with numbered options.
- **Modes**: Shift+Tab cycles Interactive, Plan, Autopilot; ``/allow-all``
  or ``--allow-all`` stops it asking ("Allow All" in the footer): read.
- **Keys**: ``1`` approves once; ``2`` adds "don't ask again for ``touch`` in
  this directory" (kept across sessions): the approve key never takes it
  (detect/approval.py); ``3`` only opens a field for feedback, so a refusal
  is Esc ("Esc to stop"), which the reader gives that option.
- **Title**: not set per state; not read.
- **Hooks** (``~/.copilot/hooks/*.json``; a ``permissionRequest`` hook fires
  before the dialog and may answer ``{"behavior": "allow"|"deny"}``) and
  **records** (``~/.copilot/session-state/<id>/events.jsonl``, with a
  ``session.usage_record`` per model call): measured, not used yet.
"""

from ...model import Tools
from ..family import Family
from ..modes import copilot_mode
from .process import recognise, version_of
from .screen import WORDS, box_text, classify_capture, is_copilot_command, screen_version

FAMILY = Family(
    name="copilot",
    label="Copilot",
    recognise=recognise,
    classify=classify_capture,
    is_command=is_copilot_command,
    version_of=version_of,
    mode_of=copilot_mode,
    box_text=box_text,
    tools=Tools(shell=frozenset({"bash"}), files=frozenset({"edit", "create", "view"}), reads=frozenset({"view"})),
    reads_version=lambda version: f"Copilot {version or '(version unknown)'}: read with the words of {WORDS.of(version).path.name} (detect/copilot/words/).",
)

__all__ = ["FAMILY", "box_text", "classify_capture", "is_copilot_command", "recognise", "screen_version", "version_of"]
