"""Qwen Code (npm ``@qwen-code/qwen-code``), as headspace finds, reads and answers it.

Measured on 0.24.4 (npm install, node 20 though it asks for 22):

- **Process tree** (``process.py``): bash → ``node …/.bin/qwen`` (the
  launcher, the agent) → ``/usr/bin/node --expose-gc …/cli.js`` → a second
  node; the version from ``@qwen-code/qwen-code``'s ``package.json``.
- **Screen** (``screen.py``, with the release's words in ``words/``): on the
  alternate screen; the input box between two rules, a status row over it
  while a turn runs ("… (2s · esc to cancel)"), the mode line in its footer
  ("⏸ Ask permissions", "auto-accept edits", "Auto mode", "YOLO mode",
  "plan mode"), the tool approval with numbered options answered by digit.
- **Modes**: its default in 0.24 is ``auto`` (an LLM classifier approves
  calls it judges safe); ``tools.approvalMode`` in its settings or
  ``--approval-mode`` sets another; the footer says which (read).
- **Keys**: ``1`` approves once; ``2`` and ``3`` add a standing rule (project,
  user): the approve key never takes them (detect/approval.py); ``4`` or
  Esc refuses ("No, suggest changes").
- **Interrupt**: one Esc stops the turn and puts its prompt back in the box
  (so a typed line is then refused: the box holds text).
- **Title**: ``✳︎ Qwen - <folder>``; not read.
- **Hooks** (``$QWEN_HOME/settings.json``, else ``~/.qwen/settings.json``,
  ``hooks`` in Claude's format, timeouts in seconds): a ``PermissionRequest``
  hook runs as the CLI's child in the pane, before any dialog is drawn (none
  is drawn while it runs), and may answer ``hookSpecificOutput.decision``
  ``allow`` or ``deny``; empty output leaves it to the dialog.  ``headspace
  hooks install --qwen`` adds headspace's rules hook there (``held_hook``:
  rules only, 3 s), ``uninstall`` takes it out byte for byte.
- **Records** (``records.py``, used): ``sessions/<pid>.json`` names each
  running CLI's conversation, ``projects/<cwd>/chats/<id>.jsonl`` holds its
  calls with their tokens: the row's tokens and context.
"""

import os
from collections.abc import Mapping
from pathlib import Path

from ...model import Tools
from ..family import Family, HeldHook
from ..modes import qwen_mode
from .process import recognise, version_of
from .records import USAGE
from .screen import WORDS, box_text, classify_capture, is_qwen_command, screen_version


def settings_file(env: Mapping[str, str]) -> Path:
    """Qwen Code's user settings, where its hooks are: ``$QWEN_HOME/settings.json``, else ``~/.qwen/settings.json``."""
    home = env.get("QWEN_HOME")
    return Path(home) / "settings.json" if home and os.path.isabs(home) else Path(env.get("HOME") or os.path.expanduser("~")) / ".qwen" / "settings.json"


FAMILY = Family(
    name="qwen",
    label="Qwen",
    recognise=recognise,
    classify=classify_capture,
    is_command=is_qwen_command,
    version_of=version_of,
    mode_of=qwen_mode,
    box_text=box_text,
    paste_gap=0.15,  # a fork of Gemini CLI's box: an Enter right after typed text joins the paste
    tools=Tools(shell=frozenset({"run_shell_command"}), files=frozenset({"edit", "write_file", "read_file"}), reads=frozenset({"read_file"})),
    usage=USAGE,  # its own session records
    held_hook=HeldHook(hooks_file=settings_file, wait=3, in_pane=True),
    reads_version=lambda version: f"Qwen {version or '(version unknown)'}: read with the words of {WORDS.of(version).path.name} (detect/qwen/words/).",
)

__all__ = ["FAMILY", "box_text", "classify_capture", "is_qwen_command", "recognise", "screen_version", "version_of"]
