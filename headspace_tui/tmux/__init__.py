"""Everything headspace learns from tmux and the process tree under its panes."""
