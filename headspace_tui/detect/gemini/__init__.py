"""Gemini CLI (``@google/gemini-cli``), as headspace finds, reads and answers it.

Facts measured on the binaries (0.53.0 of 2026-07-30 and 0.61.0 of
2026-09-25, npm installs, node 20), and which of them the reader uses:

- **Process tree** (``process.py``): bash → ``node …/.bin/gemini`` (the
  launcher) → ``/usr/bin/node --max-old-space-size=N …/.bin/gemini`` (the
  CLI, relaunched by the launcher, again after a trust change or
  ``/restart``).  The launcher is the agent (stable pid, the pane's
  ``node``); the child is told apart by its absolute ``argv[0]``.  No
  helper daemon was seen.  The version comes from the install's
  ``package.json`` beside ``bundle/gemini.js``.
- **Screen** (``screen.py``, used): drawn inline (``alternate_on`` 0, no
  alternate screen unless ``ui.useAlternateBuffer``); a full-width rule
  over the input box (`` >   Type your message or @path/to/file``), the
  status row above the rule (``⠋ Thinking... (esc to cancel, 3s)`` while a
  turn runs), history blocks above (``✦`` replies, ``✕ [API Error: …]``
  errors it gave up on), dialogs as rounded boxes at the bottom with
  numbered options (``● 1. Allow once``), answered by their digit.
- **Title** (not read): ``◇  Ready (dir)``,
  ``✦  Working… (dir)``, ``✋  Action Required (dir)`` via ``ESC ] 0 ;``,
  cleared on exit.  Cheap (``#{pane_title}``), right about working versus
  waiting for you, blind to errors, plain-text questions and the trust
  dialog (all "Ready"): a trigger to read the screen, not a verdict.
- **Retries**: 429/503 are retried with backoff (up to 10 attempts, 5 s to
  30 s apart) and 0.61.0 shows no sign of it (the status row keeps
  "Thinking..."): a retrying agent reads as working.  A 400 is given up at
  once: ``✕ [API Error: {…"code":400…}]`` then the prompt (error).
- **Hooks** (``~/.gemini/settings.json`` ``hooks``, on by default through
  ``hooksConfig.enabled``): BeforeTool, AfterTool, BeforeAgent, AfterAgent,
  Notification, SessionStart, SessionEnd, PreCompress, BeforeModel,
  AfterModel, BeforeToolSelection, each ``[{"matcher": "*", "hooks":
  [{"type": "command", "command": …}]}]`` given one JSON object on stdin
  with ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``.
  Measured on 0.61.0: ``Notification`` with ``"notification_type":
  "ToolPermission"`` fires as an approval dialog opens (``BeforeTool`` just
  before it, with ``tool_name``/``tool_input``), ``AfterAgent`` at the end
  of a turn (``prompt_response`` holds the reply), ``SessionEnd`` on
  ``/quit`` (three times).  Not used: they need the user's settings edited,
  while the screen and title need nothing; they could make a permission
  known sooner, as Claude's hooks do.  (``general.enableNotifications`` adds
  terminal notifications for action-required prompts, off by default.)
- **Session files**: ``~/.gemini/tmp/<project>/chats/session-<date>-<id>.jsonl``
  (the project named in ``~/.gemini/projects.json``), ``logs.json`` beside
  it, ``~/.gemini/history/<project>``; not read (the screen says more, sooner).
- **No server events, no OSC state output** beyond the title.
"""

from ...model import Tools
from ..family import Family
from ..modes import gemini_mode
from .chats import USAGE
from .process import recognise, version_of
from .screen import box_text, classify_capture, is_gemini_command, screen_version, strip_escapes

FAMILY = Family(
    name="gemini",
    label="Gemini",
    recognise=recognise,
    classify=classify_capture,
    is_command=is_gemini_command,
    version_of=version_of,
    mode_of=gemini_mode,
    box_text=box_text,
    paste_gap=0.15,  # an Enter within ~20 ms of typed text joins the paste; 50 ms was always enough (measured)
    # Gemini CLI's models (2.5 Pro and Flash, its defaults) take 1,048,576 tokens.
    context_window=1_048_576,
    tools=Tools(shell=frozenset({"run_shell_command"}), files=frozenset({"replace", "write_file", "read_file"}), reads=frozenset({"read_file"})),
    usage=USAGE,  # its chats
)

__all__ = ["FAMILY", "box_text", "classify_capture", "is_gemini_command", "recognise", "screen_version", "strip_escapes", "version_of"]
