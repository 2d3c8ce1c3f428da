"""How the service watches, on top of its records and the answering policy.

One monitor per host (fleet.py, monitor.py), tmux's events and each pane's
reads (pane_watch.py, sessions.py), discovery, Claude's files and hooks
(claude_facts.py, transcripts.py, hook_intake.py), the hosts (host.py),
the Claude folders agents use (in_use.py, for doctor), starting and ending agents (lifecycle.py).
"""
