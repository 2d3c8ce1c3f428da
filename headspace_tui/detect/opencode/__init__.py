"""opencode (npm ``opencode-ai``): what it offers headspace, measured on 1.15.4 and 1.18.33.

* **Process tree**: one native process (a Bun executable; comm ``opencode``,
  argv ``opencode``, exe ``…/opencode-ai/bin/opencode.exe``) under the
  pane's shell; its in-process server and workers are threads, the commands
  it runs are child shells.  ``process.recognise`` matches that process and
  never ``opencode serve``/``web``/``run``/…, nor a node launcher.  Its
  version comes from the install's ``package.json``.
* **Screen**: full-screen on the alternate screen; read by ``screen.py``
  (the input box, its status line with the progress bar, "esc interrupt"
  and "[retrying … attempt #N]", the turn rows, the △ approval dialog, the
  set-up panels).  This is what the reader uses: it is the only signal that
  shows the approval dialog and what it asks, and it costs the capture
  headspace makes anyway.
* **Title**: ``OpenCode`` at start, ``OC | <session title>`` once the
  session has a title; it does not change with the state, so it is not read.
* **Output**: no state marks (nothing like Codex's ``ESC ] 7501``).  Every
  OSC in ``%output`` over a start, an approval and a reply (1.18.33): the
  title (``ESC ] 0 ; OpenCode``, then ``OC | Scripted session``), the
  cursor colour (12), the terminal queries 10, 11, 4 and 1337, text sizing
  (66), and one kitty-notification capability query (``ESC ] 99 ;
  i=opentui-notifications:p=?``) that tmux leaves unanswered: no
  notification was sent for the approval or the end of the turn.  At rest
  it redraws nothing: 0 bytes/s of ``%output`` over 30 s (a control-mode
  client on an idle 1.18.33 pane), at 4.3 % of one core and 0.78 GB
  resident (18 threads).  While a turn runs the progress bar animates:
  6.1 kB/s of ``%output`` while it waits for the model.
* **Server and events**: the TUI runs its HTTP server in-process and, by
  default (``--port 0``), listens on no socket at all (``ss -ltnp``,
  1.18.33).  Started with ``--port N`` it serves, measured: ``GET /event``
  (Server-Sent Events: ``session.status`` ``{"type":"busy"|"idle"}``,
  ``session.idle``, ``permission.asked``, ``permission.replied`` ``{"reply":
  "once"}``, ``message.part.updated``…), ``GET /session/status``
  (``{"<session id>": {"type": "busy"}}``, ``{}`` when idle) and ``GET
  /permission`` (the pending approvals: ``permission`` "bash", ``patterns``
  ["touch marker.txt"], ``metadata.command``, ``always`` ["touch *"]).
  Cheap and exact, but only for an opencode someone started with a port,
  and the port is not discoverable from the pane: not used.
* **Session store**: ``$XDG_DATA_HOME/opencode/opencode.db`` (SQLite, WAL):
  tables ``session`` (title, directory, model, version), ``message``,
  ``part`` (a tool part's ``state.status`` "running" with its input) and an
  ``event`` log (``session.created.1``, ``message.updated.1``,
  ``message.part.updated.1``).  A pending approval is not stored (the
  ``permission`` table holds "always" rules), so the store cannot tell a
  command waiting for you from one running.  Not used: reading it needs a
  SQLite open per poll for less than the screen shows.
* **Keys**: the approval dialog has no key per option: ←/→ (h/l) move the
  selection, Enter picks it, Esc picks the escape option ("Reject"; "Cancel"
  in the "Always allow" confirmation).  Options carry the key that picks
  them from the selection on screen; ``deny_key`` is Esc.  A running turn
  takes two: the first Esc only arms it ("esc again to interrupt").
"""

from ...model import Tools
from ..family import Family
from ..modes import opencode_mode
from .box import box_text
from .process import recognise, version_of
from .records import USAGE
from .screen import classify, classify_capture, is_opencode_command

FAMILY = Family(
    name="opencode",
    label="opencode",
    recognise=recognise,
    classify=classify_capture,
    is_command=is_opencode_command,
    version_of=version_of,
    mode_of=opencode_mode,
    box_text=box_text,
    # One Esc only arms opencode's interrupt ("esc again to interrupt"); a
    # second, separate press 0.2 s later stops the turn (measured on 1.18.33).
    interrupt_keys=("Escape", "Escape"),
    key_gap=0.2,
    tools=Tools(shell=frozenset({"bash"}), files=frozenset({"edit", "write", "read"}), reads=frozenset({"read"})),
    usage=USAGE,  # its session database
)

__all__ = ["FAMILY", "classify", "classify_capture", "is_opencode_command", "recognise", "version_of"]
