"""Building the app for tests: private tmux, and never the user's ~/.claude, spool or event log."""

from __future__ import annotations

from pathlib import Path

from headspace_tui.app.main import HeadspaceApp
from headspace_tui.journal import Journal
from headspace_tui.tmux.server import TmuxServer


def make_app(socket_name: str, tmp: Path, *, claude_home: Path | None = None, journal: Journal | None = None, **options) -> HeadspaceApp:
    """The app on a private tmux server, reading Claude's status from ``claude_home`` (a test HOME)."""
    config_dir = (claude_home / ".claude") if claude_home is not None else tmp / "no-claude-config"
    spool = tmp / "spool"
    return HeadspaceApp(
        TmuxServer(socket_name=socket_name),
        config_dir=config_dir,
        spool=spool,
        journal=journal if journal is not None else Journal(None),
        **options,
    )
