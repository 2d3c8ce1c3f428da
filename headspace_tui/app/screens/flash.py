"""One short line when a key did nothing, and the key for an action as the footer names it (the main screen's parts share them)."""

from __future__ import annotations

from textual.screen import Screen
from textual.widget import Widget

FLASH_SECONDS = 3.0  # how long a "this key does nothing here" line stays


def flash(node: Widget, text: str) -> None:
    """A key did nothing: the bell, and one short line saying why."""
    node.app.bell()
    node.notify(text, severity="warning", timeout=FLASH_SECONDS, markup=False)


def key_for(screen: Screen, action: str) -> str:
    """The key bound to ``action`` on ``screen`` now (the keymap applied), as the footer shows it."""
    for active in screen.active_bindings.values():
        if active.binding.action == action:
            return screen.app.get_key_display(active.binding)
    return action
