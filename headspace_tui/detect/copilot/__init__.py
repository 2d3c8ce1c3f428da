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
- **Interrupt**: two Esc presses ("esc esc"), 0.2 s apart; the turn is
  dropped and its prompt put back in the box (so a typed line is then refused:
  the box holds text).
- **Keys**: ``1`` approves once; ``2`` adds "don't ask again for ``touch`` in
  this directory" (kept across sessions): the approve key never takes it
  (detect/approval.py); ``3`` only opens a field for feedback, so a refusal
  is Esc ("Esc to stop"), which the reader gives that option.
- **Title**: not set per state; not read.
- **Hooks** (``$COPILOT_HOME/hooks/*.json``, else ``~/.copilot/hooks/``, each
  ``{"version": 1, "hooks": {"permissionRequest": [{"type": "command",
  "bash": …, "timeoutSec": N}]}}``): the hook runs as the CLI's child in the
  pane, before any dialog is drawn (none is drawn while it runs), given a
  camelCase request (``hookName``, ``toolName``, ``toolInput``; also under the
  name ``PermissionRequest``), and may answer ``{"behavior": "allow"}`` or
  ``{"behavior": "deny", "message": …}`` (Claude's ``hookSpecificOutput`` is
  not read: the dialog comes).  ``headspace hooks install --copilot`` writes
  headspace's own file there, ``hooks/headspace.json`` (``held_hook``: rules
  only, 3 s); ``uninstall`` deletes it.
- **Records** (``records.py``, used): ``session-state/<id>/events.jsonl``,
  held open by the CLI (``inuse.<pid>.lock``), with a
  ``session.usage_record`` per model call: the row's tokens, context and
  the window the CLI uses for the model.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...model import Tools
from ..family import Family, HeldHook
from ..modes import copilot_mode
from .process import recognise, version_of
from .records import USAGE
from .screen import WORDS, box_text, classify_capture, is_copilot_command, screen_version


def hooks_file(env: Mapping[str, str]) -> Path:
    """headspace's own hooks file among Copilot CLI's: ``$COPILOT_HOME/hooks/headspace.json``, else ``~/.copilot/hooks/headspace.json``."""
    home = env.get("COPILOT_HOME")
    folder = Path(home) if home and os.path.isabs(home) else Path(env.get("HOME") or os.path.expanduser("~")) / ".copilot"
    return folder / "hooks" / "headspace.json"


def hooks_content(command: str, wait: int) -> dict[str, Any]:
    """That file: one permissionRequest hook running ``command``, timed out a little after its own wait."""
    return {"version": 1, "hooks": {"permissionRequest": [{"type": "command", "bash": command, "timeoutSec": wait + 10}]}}


FAMILY = Family(
    name="copilot",
    label="Copilot",
    recognise=recognise,
    classify=classify_capture,
    is_command=is_copilot_command,
    version_of=version_of,
    mode_of=copilot_mode,
    box_text=box_text,
    # "esc esc": one Esc alone does not stop a turn; two, 0.2 s apart, do, and put the prompt back in the box (measured).
    interrupt_keys=("Escape", "Escape"),
    key_gap=0.2,
    tools=Tools(shell=frozenset({"bash"}), files=frozenset({"edit", "create", "view"}), reads=frozenset({"view"})),
    usage=USAGE,  # its own session records
    held_hook=HeldHook(hooks_file=hooks_file, wait=3, in_pane=True, own_file=hooks_content),
    reads_version=lambda version: f"Copilot {version or '(version unknown)'}: read with the words of {WORDS.of(version).path.name} (detect/copilot/words/).",
)

__all__ = ["FAMILY", "box_text", "classify_capture", "is_copilot_command", "recognise", "screen_version", "version_of"]
