"""Codex CLI (OpenAI's ``@openai/codex``): how headspace finds, reads and answers it.

Facts measured on the binaries (0.169.0, the pinned one, and 0.144.0) in a
private tmux server, against a scripted Responses API:

* **Process tree.**  ``codex`` is a node launcher that runs the native
  binary of its platform package: under node 20 as its child (the pane's
  command reads ``node``), under node 22.15+ by ``execve`` (one process,
  ``codex``).  The native binary is the one process recognised
  (``process.py``).  0.169.0 also starts a shared background server from
  ``$CODEX_HOME/packages/``: ``codex app-server --managed-daemon`` and its
  ``app-server daemon pid-update-loop``, re-parented to init when the pane
  closes and left running; never an agent.  Its pids are in
  ``$CODEX_HOME/app-server-daemon/daemon.pid`` and ``daemon-updater.pid``.
* **Screen.**  0.169.0 draws on the alternate screen (``--no-alt-screen``
  draws inline); 0.144.0 draws inline in tmux.  A composer ``› `` with the
  model/folder footer under it, the status row "Working (4s • esc to
  interrupt)" (hidden while a reply streams; 0.169 writes "Worked for 3s"
  under every finished turn, so a reply without it is still the turn, and
  0.144 writes it under none, so only the title's spinner tells: see
  ``pane.py``), "Reconnecting... n/N"
  while it retries, ``■ …`` for an error it gave up on, and an approval
  dialog "Would you like to run the following command?" with options that
  carry their own keys: "1. Yes, proceed (y)", "2. Yes, and don't ask again
  for commands that start with `…` (p)", "3. No, and tell Codex what to do
  differently (esc)".  In Plan mode (shift+tab, 0.169.0) its
  ``request_user_input`` tool draws "Question 1/1 (1 unanswered)", the
  question and numbered options (a digit picks and submits): ``question``.
  The sign-in menu ("Sign in with ChatGPT", shown when
  no provider or login is configured) and the folder-trust dialog ("Trust
  this folder?", git repositories only) are ``starting``.  The reader
  (``screen.py``) uses all of this: it is the source of every prompt.
* **Composer** (``box_text``): its placeholder is drawn dim right after
  the ``› ``, a draft is not; Codex takes an Enter that comes within ~20 ms
  of typed text as part of a paste (0 ms: lost 3 times of 3; 20 ms and
  more: never), so a typed line is submitted only once the composer shows it.
* **Leaving.**  0.169.0's ``/quit`` prints "Disconnected from this task.
  Any running work continues." and the shell comes back: a turn still
  running goes on in the daemon with no pane to show it (the pane is
  ``exited`` all the same).
* **Cost at rest** (measured over 30 s, node 20, 2 shared cores): the
  agent (launcher and native binary) 0.03-0.1 % CPU, its daemon pair
  0.3-0.5 %; 0 bytes/s of ``%output`` at its prompt (0.144.0: the same,
  0.7-1 % CPU, no daemon).  Working: about 2 KB/s and 37 ``%output`` lines a
  second (the title's spinner); an approval waiting: 53 B/s (0.169.0, the
  title's blink) and 583 B/s (0.144.0).
* **OSC 7501** in its output (0.169.0, not 0.144.0): ``state=idle``,
  ``working``, ``blocked`` (``kind=permission``), ``done``, ``error``, each
  with ``app=codex`` (described in ``signals.py``; not read).  Free to read from ``%output``; it says a prompt waits, not which.
* **Title** (both versions): the folder, ``<thread title> | <folder>``, a
  braille spinner in front while working, ``[ ! ] Action Required | …``
  blinking with ``[ . ]`` while an approval waits (``title_observation``).
  The blink and the spinner redraw the title about 10 times a second while
  working, and 2 while an approval waits: %output that an idle agent does
  not produce.
* **notify.**  ``notify = ["prog", …]`` in ``config.toml`` runs ``prog``
  with one JSON argument at each turn's end: ``{"type":
  "agent-turn-complete", "thread-id", "turn-id", "cwd", "client":
  "codex-tui", "input-messages", "last-assistant-message"}``.  It also
  fires for the side thread that names the session (its input is the
  title prompt), not for a turn that ends on an error, and never for an
  approval: it needs a config edit and says less than the screen, so the
  reader does not use it.
* **Rollouts**: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl``,
  one JSON object per line (``session_meta``, ``event_msg`` with
  ``task_started`` / ``task_complete`` / ``token_count``, ``response_item``
  with messages, ``function_call`` and ``function_call_output``).  An
  approval that waits writes nothing there (measured: nothing between the
  ``function_call`` and its output 9 s later), so the rollout can say
  working/idle but never that you are needed; not used.
"""

from collections.abc import Mapping
from pathlib import Path

from ...model import Tools
from ..family import Family, HeldHook
from ..modes import codex_mode
from ..session_usage import env_folder
from .pane import classify_pane
from .process import is_command, recognise, version_of
from .rollout import USAGE
from .screen import box_text, classify, classify_capture
from .signals import title_observation


def hooks_file(env: Mapping[str, str]) -> Path:
    """Where Codex reads its hooks in environment ``env``: ``$CODEX_HOME/hooks.json``, ``CODEX_HOME`` defaulting to ``~/.codex``."""
    return Path(env_folder(env, "CODEX_HOME", ".codex")) / "hooks.json"


FAMILY = Family(
    name="codex",
    label="Codex",
    recognise=recognise,
    classify=classify_capture,
    is_command=is_command,
    version_of=version_of,
    mode_of=codex_mode,
    box_text=box_text,
    paste_gap=0.15,  # an Enter within ~20 ms of typed text joins the paste; 50 ms was always enough (measured)
    with_title=classify_pane,
    # Codex writes its own model_context_window; this is what it gives the GPT-5 codex models when it has not yet.
    context_window=272_000,
    # Its PermissionRequest hook runs in the app-server daemon (headspace hooks install --codex), from $CODEX_HOME/hooks.json.
    # Codex draws no dialog while it runs, and the rules answer in milliseconds once the agent is found (a search of
    # its session records): a short wait, after which Codex asks you itself.
    held_hook=HeldHook(hooks_file=hooks_file, wait=3, asks_trust=True),
    # Its hook asks about a command as Bash; its screen names exec_command, and shell is that tool's older name. apply_patch
    # carries its files inside a patch no rule reads: no file tool, so no allow answers an edit.
    tools=Tools(shell=frozenset({"Bash", "exec_command", "shell"})),
    usage=USAGE,  # its rollout files
)

__all__ = ["FAMILY", "box_text", "classify", "classify_capture", "classify_pane", "recognise", "title_observation", "version_of"]
