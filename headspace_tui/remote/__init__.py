"""Remote hosts: another machine's tmux and Claude files, reached through SSH."""
