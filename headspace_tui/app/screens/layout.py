"""Where the main screen's parts go: the layout setting on the body and the preview's border, and the toasts over the preview.

A part the main screen holds and calls down into; the setting itself is
the app's (``HeadspaceApp.layout_mode``, reactive), which the screen watches.
"""

from __future__ import annotations

from textual.geometry import Offset
from textual.screen import Screen

from .. import textual_private
from ..widgets.preview import PanePreview

SIDE_BY_SIDE_MIN_WIDTH = 140
LAYOUT_WORDS = {"auto": "auto", "side": "beside", "stacked": "under"}  # the layout setting's values, as the user reads them (in ``l``'s order)


def next_layout(mode: str) -> str:
    """``l`` cycles auto → beside → under → auto (a sticky two-way toggle left no way back to auto)."""
    modes = list(LAYOUT_WORDS)
    return modes[(modes.index(mode) + 1) % len(modes)] if mode in modes else "auto"


class Placement:
    """The body's layout classes, the words on the preview's border, and the toast rack's place."""

    def __init__(self, screen: Screen) -> None:
        self.screen = screen

    def apply(self, mode: str, key: str) -> None:
        """The app's layout setting as the body's class; ``auto`` follows the breakpoint classes (-wide / -narrow) in the stylesheet."""
        body = self.screen.query_one("#body")
        for each in ("auto", "side", "stacked"):
            body.set_class(mode == each, each)
        self.show(mode, key)

    def show(self, mode: str, key: str) -> None:
        """The layout setting on the preview's bottom border, in words ("layout: auto (beside)"), with ``key``, which changes it."""
        shown = LAYOUT_WORDS.get(mode, mode)
        if mode == "auto":
            shown += f" ({LAYOUT_WORDS['side'] if self.screen.size.width >= SIDE_BY_SIDE_MIN_WIDTH else LAYOUT_WORDS['stacked']})"
        subtitle = f"{key} layout: {shown}"
        preview = self.screen.query_one(PanePreview)
        if str(preview.border_subtitle or "") != subtitle:
            preview.border_subtitle = subtitle

    def park_cursor(self) -> None:
        """Put the terminal's (hidden) cursor in the top-right corner.

        Textual leaves it where the filter input last had it, bottom-left; a
        terminal or tool that draws the cursor anyway shows a stray glyph there.
        """
        self.screen.app.cursor_position = Offset(max(0, self.screen.size.width - 1), 0)

    def place_toasts(self, _screen: object = None) -> None:
        """Toasts over the preview's upper half, under its title: never over a row you triage.

        At the top right they covered the table's "Waiting for" column in the
        stacked layout; at the bottom they covered where Claude draws its
        prompt, and the prompt bar.  The preview's top rows are the pane's
        oldest lines.  When they reach beyond that half the oldest goes (what
        an answer did is also on its row, in its why and in the event log).
        With the table alone (a short terminal) they sit under the summary line.
        Called after every layout (the preview may have moved).
        """
        screen = self.screen
        racks = screen.query("#textual-toastrack")
        if not racks:
            return
        preview = screen.query_one(PanePreview)
        region = preview.region if preview.display else None
        top, limit = (region.y + 1, region.y + region.height // 2) if region else (1, screen.size.height // 2)
        rack = racks.first()
        if rack.styles.margin.top != top:
            rack.styles.margin = (top, 0, 0, 0)
            return  # placed at the next layout, and looked at again then
        toasts = textual_private.toasts(rack)
        if len(toasts) > 1 and any(t.region.bottom > limit for t in toasts if t.region.height):
            # The oldest goes (one per layout: the others move up).  Textual has no public call
            # to drop one notification, only all of them.
            textual_private.drop_oldest_toast(screen.app, toasts[0])
