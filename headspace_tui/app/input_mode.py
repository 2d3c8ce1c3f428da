"""Input mode (``i``): the user's keys go straight to one agent's pane until Ctrl+] leaves.

Bound to the pane selected when it began, by its id: rows may re-order,
the selection cannot move meanwhile, and the keys never follow another
agent.  The service's input session checks the pane before every send (the
same pane and process, Claude still in it, not in copy mode) and sends one
at a time.

Shown unmistakably: the preview gets a heavy border in the warning colour
and the title ``INPUT → target (%N)``, the prompt bar says where the keys go
and how to leave, and the footer offers only the leave key.

What is forwarded: printable text, Enter, Backspace, Delete, the arrows,
Home/End, PgUp/PgDn, Tab and Esc (Esc is Claude's own: it interrupts a turn
or closes a dialog).  Never: the leave key itself (Ctrl+], a control
character every terminal sends and tmux passes on), other Ctrl keys (Ctrl+C
twice ends Claude, Ctrl+D too), Shift+Tab (it switches Claude's permission
mode), Alt and function keys.  A key not forwarded says so in one line.
"""

from __future__ import annotations

import asyncio

from textual import events
from textual.widget import Widget

from ..api.facade import Facade, KeyStroke, Typing
from ..model import Agent
from ..shared.safe_text import clean
from .messages import InputModeEnded

LEAVE_KEY = "ctrl+right_square_bracket"  # Ctrl+]: 0x1d, never forwarded
LEAVE_SHOWN = "Ctrl+]"

# Textual's key names -> tmux's, for the keys input mode forwards besides text.
SPECIAL = {
    "enter": "Enter",
    "backspace": "BSpace",
    "delete": "DC",
    "left": "Left",
    "right": "Right",
    "up": "Up",
    "down": "Down",
    "home": "Home",
    "end": "End",
    "pageup": "PPage",
    "pagedown": "NPage",
    "tab": "Tab",
    "escape": "Escape",
}
_MODIFIERS = ("ctrl+", "alt+", "meta+", "super+", "hyper+", "shift+tab")


def keystroke(key: str, character: str | None) -> KeyStroke | None:
    """What a key pressed in input mode sends to the pane, or None (not forwarded)."""
    if key == LEAVE_KEY:
        return None
    if key in SPECIAL:
        return KeyStroke((SPECIAL[key],))
    if key.startswith(_MODIFIERS):
        return None
    if character is not None and len(character) == 1 and character.isprintable():
        return KeyStroke((character,), literal=True)
    return None


def pasted(text: str) -> KeyStroke | None:
    """Pasted text, as one literal string on one line (a line break sent to Claude would submit the part before it)."""
    line = " ".join(text.replace("\r", "\n").split("\n"))
    line = "".join(c for c in line if c.isprintable() or c == " ")
    return KeyStroke((line,), literal=True) if line.strip() else None


class InputMode:
    """The main screen's input mode: which pane it is bound to, and its link to it.

    ``owner`` (the main screen) runs its worker and shows its lines; when the
    mode ends by itself it hears so as a message (``InputModeEnded``), and
    leaves it the way the leave key does.
    """

    def __init__(self, service: Facade, owner: Widget) -> None:
        self.service = service
        self.owner = owner
        self.pane_id: str | None = None  # bound to this pane (None: not in input mode)
        self.target = ""
        self.link: Typing | None = None  # the service's input-mode session, once the pane is checked
        self._early: list[KeyStroke] = []  # typed before the link was checked and made

    @property
    def active(self) -> bool:
        return self.pane_id is not None

    def title(self) -> str:
        return f"INPUT → {self.target} ({self.pane_id}) · {LEAVE_SHOWN} leaves"

    def enter(self, agent: Agent) -> None:
        """Bind to ``agent``'s pane now; its link is checked and made on the loop (keys typed meanwhile wait for it)."""
        self.pane_id, self.target, self.link, self._early = agent.pane_id, agent.target, None, []
        self.owner.app.run_worker(self._connect(agent.pane_id, agent.family), name="input_mode", group="input", exclusive=True, exit_on_error=False)

    async def _connect(self, pane_id: str, family: str) -> None:
        link, problem = await self.service.open_input(pane_id, self._reported, family)
        if self.pane_id != pane_id:
            return  # left meanwhile
        if link is None:
            self.owner.post_message(InputModeEnded(pane_id, f"input mode not started: {problem}"))
            return
        self.link = link
        for stroke in self._early:
            link.send(stroke)
        self._early = []

    def key(self, event: events.Key) -> None:
        stroke = keystroke(event.key, event.character)
        if stroke is None:
            self.owner.notify(clean(f"{event.key} is not forwarded in input mode ({LEAVE_SHOWN} leaves)"), severity="warning", timeout=3, markup=False)
            return
        self._send(stroke)

    def paste(self, text: str) -> None:
        stroke = pasted(text)
        if stroke is not None:
            self._send(stroke)

    def _send(self, stroke: KeyStroke) -> None:
        if self.link is None:
            self._early.append(stroke)
        else:
            self.link.send(stroke)

    def _reported(self, line: str, ended: bool) -> None:
        if ended and self.link is not None and self.pane_id == self.link.pane_id:
            self.owner.post_message(InputModeEnded(self.pane_id, f"input mode ended: {line}"))
        else:
            self.owner.notify(clean(line), severity="warning", markup=False)

    def leave(self) -> None:
        if self.link is not None:
            self.link.close()
        self.pane_id, self.target, self.link, self._early = None, "", None, []

    async def sent(self) -> None:
        """Until every key typed so far has been sent or refused."""
        while self.pane_id is not None and self.link is None:
            await asyncio.sleep(0.01)
        if self.link is not None:
            await self.link.wait_sent()
