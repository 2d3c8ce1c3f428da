"""Terminal emulation for pane previews: tmux captures in, rich Text out.

Pure on purpose (pyte and rich only; no textual, tmux or subprocess) so the
rendering can be tested against the recorded corpus without a terminal.
"""

from __future__ import annotations

from headspace_tui.screen.virtual import VirtualScreen

__all__ = ["VirtualScreen"]
