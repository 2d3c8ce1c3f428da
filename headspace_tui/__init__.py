"""headspace: one screen for every Claude Code agent in tmux."""

__version__ = "0.5.0"
