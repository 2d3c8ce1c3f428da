"""What the service knows, below everything that watches or answers.

The agents (store.py, each built by scan.py), the appearances of their
prompts, the event log (journal.py, its writer and its readings: history,
commands, spending).  Nothing here watches tmux or answers.
"""
